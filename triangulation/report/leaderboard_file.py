"""``leaderboard.csv`` / ``leaderboard.parquet``: our run models in the Open LLM Leaderboard's table shape.

One row per model (``eval_name``, ``fullname``, ``Average ⬆️``), then per benchmark a raw column ``<benchmark>
Raw`` (the report's main metric, as scored) and a normalised column ``<benchmark>``, the way the Open LLM
Leaderboard v2 normalises (Hugging Face leaderboards documentation, "Scores Normalization":
``normalize_within_range(value, lower_bound, higher_bound) = (value - lower_bound) / (higher_bound -
lower_bound)``, the lower bound being the random baseline, "If the raw score is below the lower bound, it's
normalized to 0", shown on a 0-100 scale; the average is the mean of the normalised scores):

    normalised = 100 * max(0, (raw - chance) / (max - chance))

``chance`` is the analytic level of a multiple-choice task (the mean of 1/k over its items, k options:
:mod:`triangulation.report.chance`; a chance run of a few items is a noisy estimate of it), else our chance
player's score on the benchmark (the ``random`` model's row,
:data:`~triangulation.report.leaderboard.CHANCE_MODELS`), else a chance level a task states
(``TaskSpec.reference_levels`` labelled chance; an ideal learner's level is a ceiling and is never used), else 0 (as the leaderboard does for generative
tasks). ``max`` is the top of the benchmark's main metric's known range (:mod:`triangulation.report.ranges`:
100 for clembench's clemscore, EQ-Bench; 1 for a fraction), never guessed from the scores seen (a clemscore
of 0.8 is 0.8 of 100); a benchmark on an unbounded scale (d', counts) keeps its raw column and has no
normalised one. ``Average ⬆️`` is the mean of a
model's normalised scores (over the benchmarks it has). ``leaderboard_bounds.csv`` lists each benchmark's
chance, its source and max. External tables' columns are not ours to normalise and are left out.

:func:`triangulation.report.external.read_external` reads the file back (``--external LABEL=leaderboard.csv``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from plumbing.csvio import csv_text
from triangulation.report.leaderboard import CHANCE_MODELS, reference_levels
from triangulation.report.ranges import metric_range

AVERAGE = "Average ⬆️"  # the Open LLM Leaderboard's column name (the --external reader knows it)
RAW_SUFFIX = " Raw"  # "IFEval Raw" next to "IFEval" in the leaderboard's contents table


def chance_level(table: pd.DataFrame, benchmark: str, analytic: Mapping[str, float] | None = None) -> tuple[float, str]:
    """(chance, source) of ``benchmark``: an analytic level (1/k options of a multiple-choice task,
    :mod:`triangulation.report.chance`), else our chance player's score, else a level the task states, else 0."""
    if analytic and benchmark in analytic:
        return float(analytic[benchmark]), "analytic (1/k options)"
    for model, label in CHANCE_MODELS.items():
        if model in table.index and benchmark in table.columns:
            value = table.at[model, benchmark]
            if isinstance(value, (int, float)) and math.isfinite(value):
                return float(value), label
    for label, levels in reference_levels([benchmark]).items():
        if "chance" in label.lower() and benchmark in levels:  # an ideal learner is a ceiling, not chance
            return float(levels[benchmark]), label
    return 0.0, "none known (0, as for generative tasks)"


def max_score(metric: str) -> float:
    """The top of ``metric``'s known range (:func:`~triangulation.report.ranges.metric_range`); NaN when
    it is unbounded (no normalised column)."""
    bounds = metric_range(metric)
    return math.nan if bounds is None else bounds[1]


def normalise(raw: float, chance: float, top: float) -> float:
    """Open LLM Leaderboard v2: ``100 * (raw - chance) / (top - chance)``, clipped at 0; NaN when undefined."""
    if not all(math.isfinite(x) for x in (raw, chance, top)) or top <= chance:
        return math.nan
    return 100.0 * max(0.0, (raw - chance) / (top - chance))


def leaderboard_frames(
    table: pd.DataFrame,
    metrics: Mapping[str, str],
    models: list[str],
    analytic: Mapping[str, float] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the leaderboard rows, the bounds per benchmark) for ``models`` x the benchmarks of ``metrics``
    (benchmark -> its main metric) of the score table."""
    bounds = []
    columns: dict[str, list[float]] = {}
    benchmarks = list(metrics)
    for bench in benchmarks:
        chance, source = chance_level(table, bench, analytic)
        top = max_score(metrics[bench])
        bounds.append({"benchmark": bench, "metric": metrics[bench], "chance": chance, "chance_source": source, "max": top})
        raw = [float(table.at[m, bench]) for m in models]
        columns[bench + RAW_SUFFIX] = raw
        if math.isfinite(top):
            columns[bench] = [normalise(r, chance, top) for r in raw]
    rows = pd.DataFrame(columns, index=models)
    normalised = [b for b in benchmarks if b in rows.columns]
    average = rows[normalised].mean(axis=1, skipna=True) if normalised else pd.Series(math.nan, index=models)
    rows.insert(0, AVERAGE, average)
    rows.insert(0, "fullname", models)
    rows.insert(0, "eval_name", [re.sub(r"[^A-Za-z0-9_.-]+", "__", m) for m in models])
    ordered = ["eval_name", "fullname", AVERAGE] + [c for b in benchmarks for c in (b + RAW_SUFFIX, b) if c in rows.columns]
    return rows[ordered].reset_index(drop=True), pd.DataFrame(bounds)


def leaderboard_files(
    table: pd.DataFrame, metrics: dict[str, str], run_models: set[str], out: Path, analytic: Mapping[str, float] | None = None
) -> dict[Path, str | bytes]:
    """``leaderboard.csv``, ``leaderboard.parquet`` and ``leaderboard_bounds.csv`` in ``out`` (path -> content, for the
    report's one writer) for the run models (not the chance players, not external rows) and our benchmarks (a
    non-empty metric); none when there are no such models or benchmarks."""
    models = sorted(m for m in table.index if m in run_models and m not in CHANCE_MODELS)
    ours = {b: metrics[b] for b in table.columns if metrics.get(b)}
    if not models or not ours:
        return {}
    rows, bounds = leaderboard_frames(table, ours, models, analytic)
    return {
        out / "leaderboard.csv": csv_text(rows, index=False),
        out / "leaderboard.parquet": rows.to_parquet(None, index=False),
        out / "leaderboard_bounds.csv": csv_text(bounds, index=False),
    }
