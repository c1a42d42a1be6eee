"""clembench aggregation: the published clemscores of v1.0 and v1.6 from their per-game columns."""

from __future__ import annotations

import csv
import math

import pytest

from multiturn.games.clem import aggregate, game_summary


def _rows(upstream, version):
    with open(upstream / "clembench-runs" / version / "results.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _num(text: str) -> float:
    return float(text) if text.strip() else float("nan")


@pytest.mark.parametrize("version,n_models", [("v1.0", 38), ("v1.6", 68)])
def test_aggregate_reproduces_published_clemscores(upstream, version, n_models):
    rows = _rows(upstream, version)
    assert len(rows) == n_models
    games = sorted({k.split(", ")[0] for k in rows[0] if k.endswith(", % Played") and not k.startswith("all")})
    assert {"taboo", "wordle", "imagegame", "privateshared"} <= set(games)
    for row in rows:
        per_game = {g: (_num(row[f"{g}, % Played"]), _num(row[f"{g}, Quality Score"])) for g in games}
        result = aggregate(per_game)
        assert result["clemscore"] == pytest.approx(float(row["-, clemscore"]), abs=0.01), row[""]
        assert result["played"] == pytest.approx(float(row["all, Average % Played"]), abs=0.01), row[""]
        assert result["quality"] == pytest.approx(float(row["all, Average Quality Score"]), abs=0.01), row[""]


def test_games_without_played_episodes_are_left_out_of_quality():
    result = aggregate({"a": (100.0, 50.0), "b": (0.0, float("nan"))})
    assert result["played"] == 50.0
    assert result["quality"] == 50.0
    assert result["clemscore"] == 25.0


def test_game_summary_from_episodes():
    episodes = [
        {"aborted": 0.0, "main_score": 100.0},
        {"aborted": 0.0, "main_score": 0.0},
        {"aborted": 1.0, "main_score": float("nan")},
        {"aborted": 0.0, "main_score": 50.0},
    ]
    summary = game_summary(episodes)
    assert summary["played"] == 75.0
    assert summary["quality"] == 50.0
    assert summary["clemscore"] == pytest.approx(37.5)
    nothing = game_summary([{"aborted": 1.0, "main_score": float("nan")}])
    assert nothing["played"] == 0.0 and math.isnan(nothing["quality"]) and nothing["clemscore"] == 0.0


def test_clembench_group_in_results_json_uses_clembench_rule():
    """The results JSON's clembench group entry: games without a played episode leave quality alone."""
    from multiturn.engine.results import results_payload
    from multiturn.games.clem import CLEMBENCH_GAMES

    task_results = {g: {"metrics": {"played": 100.0, "quality": 40.0, "clemscore": 40.0}} for g in CLEMBENCH_GAMES}
    task_results["imagegame"] = {"metrics": {"played": 0.0, "quality": float("nan"), "clemscore": 0.0}}
    payload = results_payload(
        task_results, groups={"clembench": list(CLEMBENCH_GAMES)}, config={}, model_name="m", model_name_sanitized="m"
    )
    entry = payload["groups"]["clembench"]
    assert entry["played,none"] == pytest.approx(600 / 7)
    assert entry["quality,none"] == pytest.approx(40.0)
    assert entry["clemscore,none"] == pytest.approx(600 / 7 / 100 * 40)
