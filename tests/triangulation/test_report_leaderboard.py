"""The leaderboard: run models first, the chance player relabelled "chance", the levels the play tasks state,
standard errors from the results files, chance rows out of the correlations."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from triangulation.report.leaderboard import leaderboard, stderr_table, without_chance
from triangulation.report.top import needs_models
from triangulation.runs.results_io import Run, complete_run


def run(model: str, acc: float, se) -> Run:
    made = Run(
        model=model, path=Path(f"/x/{model}/results_1.json"), date="1", results={"wcst": {"accuracy,none": acc, "accuracy_stderr,none": se}}
    )
    return complete_run(made, {}, {})


def test_rows_order_chance_labels_and_stderr():
    runs = [run("org/m", 0.4, 0.05), run("random", 0.25, "N/A")]
    table = pd.DataFrame({"wcst": [0.4, 0.25, math.nan], "ext/x": [math.nan, math.nan, 3.0]}, index=["org/m", "random", "other"])
    values, errors, reference = leaderboard(table, stderr_table(runs, table), {"org/m", "random"})
    assert list(values.index) == ["org/m", "chance (random player)", "ideal learner (Kennedy & Nowak 2024)", "other"]
    assert reference == ["chance (random player)", "ideal learner (Kennedy & Nowak 2024)"]
    assert values.loc["ideal learner (Kennedy & Nowak 2024)", "wcst"] == 0.75
    assert errors.loc["org/m", "wcst"] == 0.05 and math.isnan(errors.loc["chance (random player)", "wcst"])
    assert list(without_chance(table).index) == ["org/m", "other"]


def test_needs_models_sentence():
    assert needs_models("A Kendall correlation", 3, 1).text.startswith("A Kendall correlation needs 3 models, has 1")
