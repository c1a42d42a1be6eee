"""Seed 003 Figures 1 and 8 (triangulation.report.analyses.figures_triangulating) and model sizes (triangulation.runs.model_size)
on hand-made scores."""

from __future__ import annotations

import json
import struct

import numpy as np
import pandas as pd
import pytest

from plumbing.errors import UserError
from triangulation.report.abilities import load_taxonomy
from triangulation.report.analyses.figures_triangulating import build, parse_scatter, pick_scatter_pairs, read_sizes, size_accuracy_table
from triangulation.report.discriminative import pair_table, scale_scores
from triangulation.report.kendall import kendall_tables
from triangulation.runs.model_size import model_size_b, safetensors_parameters

MODELS = ["m1", "m2", "m3", "m4"]


def scores() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ifeval": [0.5, 0.6, 0.7, 0.8],  # control, a fraction
            "mmlu": [0.4, 0.5, 0.6, 0.9],  # static
            "leaderboard_bbh": [0.2, 0.3, 0.3, 0.5],  # static
            "taboo": [10.0, 20.0, 30.0, 40.0],  # interactive, clemscore 0-100
            "nback_verbal_3_triangulating": [
                0.1,
                0.2,
                0.3,
                0.4,
            ],  # working memory (seed 003 App. F: Verbal N-3 only): same order as taboo (tau 1)
            "lnt_triangulating": [0.3, 0.1, 0.4, 0.2],  # cognitive flexibility: tau with taboo 0
        },
        index=pd.Index(MODELS, name="model"),
    )


def test_size_table_pools_sides_in_percent_and_orders_by_size():
    table = size_accuracy_table(scores(), load_taxonomy(), {"m1": 70, "m2": 7, "m3": 0.5, "zz": 3})
    assert list(table.index) == ["m3", "m2", "m1"]  # by size; m4 has no size, zz no scores
    assert table.at["m1", "IFEval"] == pytest.approx(50.0)
    assert table.at["m1", "Static"] == pytest.approx((40 + 20) / 2)
    assert table.at["m1", "Interactive"] == pytest.approx(10.0)


def test_scatter_pairs_highest_then_closest_to_zero():
    s = scores()
    tau, p, n = kendall_tables(s)
    pairs = pick_scatter_pairs(tau, n, s, load_taxonomy())
    assert pairs == [("taboo", "nback_verbal_3_triangulating"), ("taboo", "lnt_triangulating")]
    assert tau.at["taboo", "nback_verbal_3_triangulating"] == pytest.approx(1.0) and tau.at["taboo", "lnt_triangulating"] == pytest.approx(
        0.0
    )
    # fewer than three common models: no automatic pair
    few = s.copy()
    few.loc[["m1", "m2"], "nback_verbal_3_triangulating"] = np.nan
    few.loc[["m1", "m2"], "lnt_triangulating"] = np.nan
    tau, p, n = kendall_tables(few)
    assert pick_scatter_pairs(tau, n, few, load_taxonomy()) == []


def test_parse_scatter_and_sizes_file(tmp_path):
    assert parse_scatter(["mmlu,taboo"], list(scores().columns)) == [("mmlu", "taboo")]
    with pytest.raises(UserError, match="unknown benchmark 'nope'"):
        parse_scatter(["mmlu,nope"], list(scores().columns))
    with pytest.raises(UserError, match="BENCHMARK_A,BENCHMARK_B"):
        parse_scatter(["mmlu"], list(scores().columns))
    path = tmp_path / "sizes.csv"
    path.write_text("model,size_b,source\nm1,7,suite\nm2,0.135,model files\n")
    assert read_sizes(path) == {"m1": 7.0, "m2": 0.135}
    assert read_sizes(tmp_path / "missing.csv") == {}
    path.write_text("model,size_b\nm1,big\n")
    with pytest.raises(UserError, match="numeric size_b"):
        read_sizes(path)


def test_build_writes_both_figures(tmp_path):
    s = scores()
    tau, p, n = kendall_tables(s)
    sections = build(s, load_taxonomy(), tau, p, n, tmp_path, {m: i + 1 for i, m in enumerate(MODELS)}, scatter=["mmlu,lnt_triangulating"])
    assert [sec.title for sec in sections] == [
        "Accuracy by model size (seed 003, Figure 1)",
        "Two benchmarks over the models (seed 003, Figure 8)",
    ]
    assert (tmp_path / "triangulating_fig1_size.png").stat().st_size > 5000
    assert (tmp_path / "triangulating_fig8_0.png").stat().st_size > 5000
    assert pd.read_csv(tmp_path / "triangulating_fig8_pairs.csv").iloc[0][["benchmark_a", "benchmark_b"]].tolist() == [
        "mmlu",
        "lnt_triangulating",
    ]


def write_safetensors(path, shapes: dict[str, list[int]]) -> None:
    header = {name: {"dtype": "F32", "shape": shape, "data_offsets": [0, 0]} for name, shape in shapes.items()}
    header["__metadata__"] = {"format": "pt"}
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob)


def test_model_size_from_safetensors_headers(tmp_path):
    write_safetensors(tmp_path / "model-00001.safetensors", {"a": [1000, 1000], "b": [10]})
    write_safetensors(tmp_path / "model-00002.safetensors", {"c": [2, 3, 4]})
    assert safetensors_parameters(tmp_path / "model-00002.safetensors") == 24
    assert model_size_b({"pretrained": str(tmp_path)}) == pytest.approx((1_000_000 + 10 + 24) / 1e9)
    assert model_size_b({"pretrained": "org/not-on-disk"}) is None
    assert model_size_b({"model": "gpt-4o"}) is None


def test_scores_are_scaled_by_the_metrics_known_range_not_by_the_values_seen():
    """Seed 003 Figures 1-2 draw every benchmark on 0-100 ("score (%)"); clembench's clemscore is already
    0-100 (seed 002 Sec. 2: "The overall score is the product of the two scores", % played x quality / 100).

    Wordle clemscores 0.5 and 1.0 (every value <= 1) must stay 0.5 and 1.0 (the old rule, "all values in
    [0, 1] -> x 100", drew them as 50 and 100); mmlu accuracies 0.4 / 0.9 -> 40 / 90; d' is unbounded and
    stays -1.2 / 2.0; Connections' weighted score 0-10: 5 -> 50. An external column of unknown metric
    (``lb/ifeval``) still falls back to the values: 0.88 -> 88."""
    table = pd.DataFrame(
        {"wordle": [0.5, 1.0], "mmlu": [0.4, 0.9], "nback_verbal_1": [-1.2, 2.0], "connections": [5.0, 10.0], "lb/ifeval": [0.88, 0.5]},
        index=["a", "b"],
    )
    table.attrs["metrics"] = {"wordle": "clemscore", "mmlu": "acc", "nback_verbal_1": "dprime", "connections": "weighted_clustering"}
    scaled = scale_scores(table)
    assert list(scaled["wordle"]) == [0.5, 1.0]
    assert list(scaled["mmlu"]) == pytest.approx([40.0, 90.0])
    assert list(scaled["nback_verbal_1"]) == [-1.2, 2.0]
    assert list(scaled["connections"]) == pytest.approx([50.0, 100.0])
    assert list(scaled["lb/ifeval"]) == pytest.approx([88.0, 50.0])
    # without the report's record, abilities.yaml's main metrics name wordle's (clemscore) and v1.6/quality's last part
    bare = pd.DataFrame({"wordle_withclue": [0.2, 0.9], "v1.6/quality": [0.3, 0.7]}, index=["a", "b"])
    assert scale_scores(bare).to_numpy().tolist() == [[0.2, 0.3], [0.9, 0.7]]
    # Figure 2's pair table uses the same scale: Wordle 0.5 vs 1.0, ratio 2
    pair = pair_table(table, "a", "b")
    assert pair.loc["wordle", "a"] == 0.5 and pair.loc["wordle", "ratio"] == pytest.approx(2.0)
