"""The correlations as a new user reads them (issue 43 item 5): the Kendall section says which models enter and
why the benchmarks evaluated here enter no pair (fewer than 3 models), and labels the pairs of published tables
as external only; the discriminative plot never takes the chance player as a model and its labels never overlap;
a seed spread over one item per prompt order says "n too small", not 1.000."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from triangulation.report import plots
from triangulation.report.context import ReportContext, Skipped


def context(table: pd.DataFrame, out: Path, runs=(), labels=("ext",)) -> ReportContext:
    from triangulation.report.abilities import load_taxonomy

    return ReportContext(
        runs=list(runs),
        externals=[SimpleNamespace(label=label) for label in labels],
        taxonomy=load_taxonomy(),
        out=out,
        scores=SimpleNamespace(table=table, metrics={}),
    )


def one_model_and_a_published_table() -> pd.DataFrame:
    """One evaluated model and the chance player on "ours", 6 published models on ext/a and ext/b."""
    rng = np.random.default_rng(0)
    rows = {f"pub{i}": {"ext/a": rng.random(), "ext/b": rng.random()} for i in range(6)}
    rows["m"] = {"ours": 0.4}
    rows["random"] = {"ours": 0.3}
    return pd.DataFrame(rows).T


def test_the_kendall_section_says_who_enters_and_why_our_benchmarks_do_not(tmp_path):
    from triangulation.report.kendall_section import kendall_section

    ctx = context(one_model_and_a_published_table(), tmp_path)
    ctx.run_models  # noqa: B018 (cached)
    ctx.__dict__["run_models"] = ["m", "random"]
    sec = kendall_section(ctx, n_boot=50)
    text = " ".join(b.text for b in sec.blocks if hasattr(b, "text"))
    assert "Models entering the correlations: 7 (chance rows left out): 1 evaluated here (m) and 6 from --external tables" in text
    assert "The benchmarks evaluated here enter no pair: a correlation needs >= 3 models, and they have at most 1" in text
    table = next(b.frame for b in sec.blocks if hasattr(b, "frame"))
    assert set(table["from"]) == {"external only (ext)"}
    assert (tmp_path / "kendall_heatmap_ext.png").is_file()


def test_the_discriminative_plot_never_takes_the_chance_player_as_a_model(tmp_path):
    from triangulation.report.sections import discriminative

    table = pd.DataFrame({"x": [0.4, 0.3, 0.5], "y": [0.2, 0.1, 0.6]}, index=["m", "random", "n"])
    ctx = context(table, tmp_path, labels=())
    ctx.__dict__["run_models"] = ["m", "random"]
    assert isinstance(discriminative(ctx)[0], Skipped)  # one evaluated model: no pair, the chance player is none
    ctx.__dict__["run_models"] = ["m", "n", "random"]
    ratios = next(b.frame for b in discriminative(ctx)[0].blocks if hasattr(b, "frame"))
    assert list(ratios.columns) == ["n / m"]


def test_discriminative_labels_never_overlap(tmp_path, monkeypatch):
    boxes = []
    spread = plots.spread_labels
    monkeypatch.setattr(plots, "spread_labels", lambda fig, texts: boxes.extend(spread(fig, texts)) or boxes)
    names = [f"lm_pragmatics_indirect_speech_{i}" for i in range(12)]
    pair = pd.DataFrame(
        {"a": [0.0, 0.0, 1, 2, 3, 50, 50.5, 51, 99, 99, 100, 100], "b": [0, 2, 1, 3, 2, 50, 51, 50, 99, 100, 98, 100]}, index=names
    )
    pair["ratio"] = pair["b"] / pair["a"].replace(0, np.nan)
    plots.pair_scatter(pair, "model-a", "model-b", tmp_path / "d.png")
    assert len(boxes) == 12
    for i, a in enumerate(boxes):
        assert not any(a.overlaps(b) for b in boxes[i + 1 :]), f"label {i} overlaps another"


def write_seeded(root: Path, items: int) -> Path:
    """A run of group ``t`` as 5 prompt orders (``t_seed_k``), ``items`` items each, scoring 0 or 1 by seed."""
    members = [f"t_seed_{k}" for k in range(5)]
    date = "2026-01-01T00-00-00.000001"
    root.mkdir(parents=True)
    results = {m: {"acc,none": float(k % 2), "alias": m} for k, m in enumerate(members)} | {"t": {"acc,none": 0.4, "alias": "t"}}
    payload = {
        "results": results,
        "group_subtasks": {"t": members},
        "configs": {m: {"task": m, "output_type": "multiple_choice"} for m in members},
        "config": {"model": "hf", "model_args": "pretrained=org/m"},
        "n-samples": {m: {"original": 100, "effective": items} for m in members},
    }
    path = root / f"results_{date}.json"
    path.write_text(json.dumps(payload))
    for k, m in enumerate(members):
        lines = [{"doc_id": d, "doc": {}, "target": 0, "filter": "none", "metrics": ["acc"], "acc": float(k % 2)} for d in range(items)]
        (root / f"samples_{m}_{date}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_seed_spread_over_one_item_per_prompt_order_says_n_too_small(tmp_path):
    from triangulation.report.top import seed_spread
    from triangulation.runs.results_io import read_run

    for items, expected in ((1, "n too small (1 item per seed)"), (12, 1.0)):
        run = read_run(write_seeded(tmp_path / str(items), items))
        assert seed_spread(context(pd.DataFrame(), tmp_path, runs=[run]), "t") == expected
