"""Issue 31.1: Figure 1's Interactive bar is the clembench task alone (the authors' registry), and the report's
one pooling rule (abilities.pooled) never averages a group with its own members. Numbers derived by hand."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest

from triangulation.report.abilities import load_taxonomy, pooled
from triangulation.report.analyses.figures_triangulating import size_accuracy_table

GAMES = ["taboo", "wordle", "wordle_withclue", "wordle_withcritic", "referencegame", "imagegame", "privateshared"]
GROUPS = {"clembench": GAMES}


def _scores() -> pd.DataFrame:
    # m1: clemscore 30 over the seven games; its games' own clemscores 60, 0, 10, 20, 80, 0, 40 (mean 30)
    # m2: clemscore 50; games 70, 0, 0, 0, 100, 30, 80
    rows = {
        "m1": {"mmlu": 0.6, "leaderboard_bbh": 0.4, "clembench": 30.0, **dict(zip(GAMES, [60.0, 0.0, 10.0, 20.0, 80.0, 0.0, 40.0]))},
        "m2": {"mmlu": 0.8, "leaderboard_bbh": 0.5, "clembench": 50.0, **dict(zip(GAMES, [70.0, 0.0, 0.0, 0.0, 100.0, 30.0, 80.0]))},
    }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("model")


def test_figure1_interactive_is_the_clembench_task_not_pooled_with_its_games():
    table = size_accuracy_table(_scores(), load_taxonomy(), {"m1": 7, "m2": 70}, GROUPS)
    # before issue 31: (games + group) / 8 = (210 + 30) / 8 = 30.0 for m1 and (280 + 50) / 8 = 41.25 for m2
    assert table.at["m1", "Interactive"] == pytest.approx(30.0)
    assert table.at["m2", "Interactive"] == pytest.approx(50.0)
    # Static: the merged static task = MMLU and BBH on 0-100, (60 + 40) / 2 and (80 + 50) / 2
    assert table.at["m1", "Static"] == pytest.approx(50.0)
    assert table.at["m2", "Static"] == pytest.approx(65.0)


def test_games_without_their_group_are_pooled_as_the_side():
    scores = _scores().drop(columns="clembench")
    table = size_accuracy_table(scores, load_taxonomy(), {"m1": 7, "m2": 70}, GROUPS)
    assert table.at["m1", "Interactive"] == pytest.approx(210.0 / 7)  # 60+0+10+20+80+0+40
    assert table.at["m2", "Interactive"] == pytest.approx(280.0 / 7)  # 70+0+0+0+100+30+80


def test_pooled_drops_members_of_a_listed_group_whatever_the_caller_lists():
    scores = _scores()
    both = pooled(scores, ["clembench", *GAMES], GROUPS, how="mean")
    assert both.to_dict() == pytest.approx({"m1": 30.0, "m2": 50.0})
    # min-max (Figure 3): the group alone -> 0 for the lower model, 1 for the higher
    assert pooled(scores, ["clembench", "taboo"], GROUPS).to_dict() == pytest.approx({"m1": 0.0, "m2": 1.0})
    # groups is a required argument: no caller can pool without the rule
    assert inspect.signature(pooled).parameters["groups"].default is inspect.Parameter.empty
