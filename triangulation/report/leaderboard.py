"""The report's first table: models x benchmarks, each cell the main metric with its standard error.

Rows: the evaluated models first, then the chance reference (the ``random`` player of
:mod:`models.chance`, shown as "chance"), then the levels a paper states analytically for a
play task (its ``TaskSpec.reference_levels``, e.g. an ideal learner: a player that errs once per rule
switch, close to a ceiling, not chance), then the models of ``--external`` tables. These
rows are reference points, not models: the correlation analyses leave the chance rows out
(:func:`without_chance`) and never see the reference levels.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from triangulation.runs.results_io import NO_SCORE, Run

#: model ids of chance players -> the row label the report shows
CHANCE_MODELS: dict[str, str] = {"random": "chance (random player)"}


def reference_levels(benchmarks: list[str]) -> dict[str, dict[str, float]]:
    """label -> {benchmark: value} of the levels the play tasks among ``benchmarks`` state (``TaskSpec.reference_levels``)."""
    from multiturn.api import get_task, is_play_task

    out: dict[str, dict[str, float]] = {}
    for benchmark in benchmarks:
        if is_play_task(benchmark):
            for label, value in get_task(benchmark).reference_levels.items():
                out.setdefault(label, {})[benchmark] = value
    return out


def is_chance(model: str) -> bool:
    return model in CHANCE_MODELS


def without_chance(table: pd.DataFrame) -> pd.DataFrame:
    """The score table without the chance players' rows (what correlations are computed over)."""
    return table.drop(index=[m for m in table.index if is_chance(str(m))])


def stderr_value(task_results: Mapping[str, Any], metric: str) -> float:
    """``<metric>_stderr,none`` (or any filter) as a float; NaN when absent or "N/A"."""
    for key, value in task_results.items():
        name, _, _ = key.partition(",")
        if name == f"{metric}_stderr" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return math.nan


def stderr_table(runs: list[Run], table: pd.DataFrame) -> pd.DataFrame:
    """model x benchmark standard errors of the main metric (the same run wins as in the scores: the latest)."""
    out = pd.DataFrame(math.nan, index=table.index, columns=table.columns, dtype=float)
    for run in sorted(runs, key=lambda r: r.date):
        for task in run.results:
            if task not in out.columns or run.model not in out.index:
                continue
            name, _ = run.main.get(task, NO_SCORE)
            if name and "+" not in name:
                out.loc[run.model, task] = stderr_value(run.results[task], name)
    return out


def leaderboard(table: pd.DataFrame, stderr: pd.DataFrame, run_models: set[str]) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(values, standard errors, reference row labels) in display order: run models, chance rows, the play
    tasks' reference levels, external models. Chance players are relabelled (:data:`CHANCE_MODELS`)."""
    ours = sorted(m for m in table.index if m in run_models and not is_chance(m))
    chance = sorted(m for m in table.index if is_chance(m))
    others = sorted(m for m in table.index if m not in run_models and not is_chance(m))
    values = table.loc[ours + chance + others].copy()
    errors = stderr.reindex(index=values.index, columns=values.columns)
    reference = [CHANCE_MODELS[m] for m in chance]
    rename = {m: CHANCE_MODELS[m] for m in chance}
    values, errors = values.rename(index=rename), errors.rename(index=rename)
    for label, levels in reference_levels([str(c) for c in values.columns]).items():
        shown = {b: v for b, v in levels.items() if b in values.columns}
        if shown:
            row = pd.DataFrame([shown], index=[label], columns=values.columns)
            at = len(ours) + len(chance)
            values = pd.concat([values.iloc[:at], row, values.iloc[at:]])
            errors = pd.concat([errors.iloc[:at], pd.DataFrame(math.nan, index=[label], columns=values.columns), errors.iloc[at:]])
            reference.append(label)
    values.index.name = errors.index.name = "model"
    return values, errors, reference
