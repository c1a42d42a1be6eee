"""``leaderboard.csv``/``.parquet``: the Open LLM Leaderboard v2 shape (raw and normalised column per benchmark,
normalised = 100 * max(0, (raw - chance) / (max - chance)), an average), written by ``triangulate report`` and
read back by its ``--external`` reader."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tests.triangulation.test_report_fakes import run_report, three_model_results, write_play_run
from triangulation.report.external import read_external
from triangulation.report.leaderboard_file import AVERAGE, chance_level, leaderboard_frames, normalise

NONE = "none known (0, as for generative tasks)"


def test_normalisation_clips_at_zero_and_needs_a_scale():
    assert normalise(0.7, 0.4, 1.0) == pytest.approx(50.0)
    assert normalise(0.3, 0.4, 1.0) == 0.0  # below chance: 0, as the leaderboard clips
    assert normalise(60.0, 0.0, 100.0) == pytest.approx(60.0)
    assert math.isnan(normalise(0.5, 1.0, 1.0)) and math.isnan(normalise(math.nan, 0.0, 1.0))


def test_chance_from_our_chance_row_else_zero_never_the_ideal_learner():
    table = pd.DataFrame(
        {"wcst": [0.9, 0.6, 0.3], "lnt": [0.95, math.nan, math.nan], "mmlu": [0.5, math.nan, 0.25], "nback_dprime": [2.5, 0.4, -0.1]},
        index=["org/a", "org/b", "random"],
    )
    assert chance_level(table, "wcst") == (0.3, "chance (random player)")
    assert chance_level(table, "lnt") == (0.0, NONE)  # the ideal learner's 0.857 is a ceiling, not chance
    assert chance_level(table, "mmlu") == (0.25, "chance (random player)")
    metrics = {"wcst": "accuracy", "lnt": "accuracy", "mmlu": "acc", "nback_dprime": "dprime"}
    rows, bounds = leaderboard_frames(table, metrics, ["org/a", "org/b"])
    assert list(rows.columns) == [
        "eval_name",
        "fullname",
        AVERAGE,
        "wcst Raw",
        "wcst",
        "lnt Raw",
        "lnt",
        "mmlu Raw",
        "mmlu",
        "nback_dprime Raw",
    ]
    a = rows.set_index("fullname").loc["org/a"]
    assert a["wcst"] == pytest.approx(100 * (0.9 - 0.3) / 0.7) and a["lnt"] == pytest.approx(95.0)
    assert a["mmlu"] == pytest.approx(100 * 0.25 / 0.75) and a["nback_dprime Raw"] == 2.5  # d' keeps only its raw column
    assert a[AVERAGE] == pytest.approx((a["wcst"] + a["lnt"] + a["mmlu"]) / 3)
    b = rows.set_index("fullname").loc["org/b"]
    assert b[AVERAGE] == pytest.approx(b["wcst"])  # the mean over the benchmarks the model has
    assert rows["eval_name"].tolist() == ["org__a", "org__b"]
    assert bounds.set_index("benchmark").loc["nback_dprime", "max"] != bounds.set_index("benchmark").loc["nback_dprime", "max"]  # NaN


def test_report_writes_the_leaderboard_and_reads_it_back_as_external(tmp_path):
    three_model_results(tmp_path)
    write_play_run(tmp_path / "play", "pretrained=random", {"wcst_triangulating": {"accuracy": 0.4}}, folder="chance")
    out = tmp_path / "report"
    assert run_report([str(tmp_path / "lm_eval"), str(tmp_path / "play"), "--out", str(out)]) == 0
    csv = pd.read_csv(out / "leaderboard.csv")
    assert csv.equals(pd.read_parquet(out / "leaderboard.parquet"))
    assert csv["fullname"].tolist() == ["scripted-half", "scripted/chunker", "scripted/oracle"]  # no chance row
    scores = pd.read_csv(out / "scores.csv", index_col="model")
    row = csv.set_index("fullname").loc["scripted/oracle"]
    assert row["wcst_triangulating Raw"] == scores.loc["scripted/oracle", "wcst_triangulating"] == 0.7
    assert row["wcst_triangulating"] == pytest.approx(100 * (0.7 - 0.4) / (1 - 0.4))  # chance from the random player's row
    assert csv.set_index("fullname").loc["scripted/chunker", "wcst_triangulating"] == 0.0  # 0.3 < chance 0.4: clipped
    assert row["mmlu"] == pytest.approx(71.0)  # no chance level known: 0
    normalised = [c for c in csv.columns if f"{c} Raw" in csv.columns]
    assert row[AVERAGE] == pytest.approx(row[normalised].astype(float).mean())
    bounds = pd.read_csv(out / "leaderboard_bounds.csv").set_index("benchmark")
    assert bounds.loc["wcst_triangulating", "chance"] == 0.4 and bounds.loc["mmlu", "chance"] == 0.0

    for name in ("leaderboard.csv", "leaderboard.parquet"):
        ext = read_external(f"lb={out / name}")
        assert ext.kind == "leaderboard" and sorted(ext.table.index) == sorted(csv["fullname"])
        back = ext.table.loc["scripted/oracle"]
        assert back["lb/average"] == pytest.approx(row[AVERAGE])
        assert back["lb/wcst_triangulating"] == pytest.approx(row["wcst_triangulating"]) and back["lb/wcst_triangulating/raw"] == 0.7
        assert {f"lb/{c}" for c in normalised} | {f"lb/{c}/raw" for c in normalised} <= set(ext.table.columns)

    again = tmp_path / "again"
    assert run_report(["--external", f"lb={out / 'leaderboard.csv'}", "--out", str(again)]) == 0
    table = pd.read_csv(again / "scores.csv", index_col="model")
    assert table.loc["scripted/oracle", "lb/wcst_triangulating/raw"] == 0.7 and "lb/average" in table.columns


def test_bounds_come_from_the_metrics_known_range_not_the_scores_seen():
    """Issue 43 item 2: a clemscore of 0.8 is 0.8 of 100 (clembench's scale, seed 002 Sec. 2), not 80 %: the
    old bound was guessed from the scores seen (all <= 1 -> max 1)."""
    table = pd.DataFrame({"taboo": [0.8, 0.0], "wordle": [0.0, 0.0], "mmlu": [0.5, 0.25]}, index=["org/a", "random"])
    metrics = {"taboo": "clemscore", "wordle": "clemscore", "mmlu": "acc,none"}
    rows, bounds = leaderboard_frames(table, metrics, ["org/a"])
    assert bounds.set_index("benchmark")["max"].to_dict() == {"taboo": 100.0, "wordle": 100.0, "mmlu": 1.0}
    a = rows.set_index("fullname").loc["org/a"]
    assert a["taboo"] == pytest.approx(0.8) and a["wordle"] == 0.0
    assert a["mmlu"] == pytest.approx(100 * 0.25 / 0.75)
    assert a[AVERAGE] == pytest.approx((0.8 + 0.0 + 100 * 0.25 / 0.75) / 3)
