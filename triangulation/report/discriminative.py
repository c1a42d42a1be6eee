"""Discriminative power of benchmarks for a pair of models (seed 003, Sec. 3.2, Figure 2).

For models A and B, each benchmark both scored is a point (score of A, score of B); the further from
the diagonal, the more the benchmark separates them. The figure labels each benchmark with the ratio
of the two models' performance, B / A here; it is undefined (``*`` in the paper, NaN here) when A
scores 0.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

import pandas as pd

from plumbing.errors import UserError
from triangulation.report.ranges import METRIC_RANGES, metric_range


def metric_of(benchmark: str, metrics: Mapping[str, str], defaults: Mapping[str, Any]) -> str:
    """The main metric of a score column: the report's record (``Scores.metrics``), else ``defaults``
    (``main_metrics`` patterns of abilities.yaml), else an external column's last part (``v1.6/clemscore``);
    "" when unknown."""
    name = str(metrics.get(benchmark) or "")
    if not name:
        wanted = next((m for pattern, m in defaults.items() if fnmatchcase(benchmark, pattern)), "")
        name = wanted if isinstance(wanted, str) else str(wanted[0])
    if not name and "/" in benchmark:
        last = benchmark.rsplit("/", 1)[1]
        name = last if last in METRIC_RANGES else ""
    return name.split("+")[0].split(",")[0]


def percent_scale(column: pd.Series, metric: str = "") -> pd.Series:
    """Put a benchmark on 0-100 by its metric's known range (:data:`METRIC_RANGES`; any other named
    metric is a fraction in [0, 1]); an unbounded metric is left as it is. The values seen decide only
    when the metric is unknown (an external table's column): all within [0, 1] -> fractions."""
    if metric:
        bounds = metric_range(metric)
        if bounds is None:
            return column
        low, high = bounds
        return (column - low) * (100 / (high - low)) if low else column * (100 / high)
    finite = column.dropna()
    if len(finite) and finite.min() >= 0 and finite.max() <= 1:
        return column * 100
    return column


def scale_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Every column on 0-100 by its metric (``scores.attrs["metrics"]``: benchmark -> metric, set by
    ``build.collect_scores``)."""
    from triangulation.report.abilities import load_taxonomy

    metrics = scores.attrs.get("metrics") or {}
    defaults = load_taxonomy().main_metrics
    return pd.DataFrame({c: percent_scale(scores[c], metric_of(str(c), metrics, defaults)) for c in scores.columns}, index=scores.index)


def pair_table(scores: pd.DataFrame, model_a: str, model_b: str) -> pd.DataFrame:
    """Rows = benchmarks both models scored; columns a, b (0-100 scale) and ratio = b / a."""
    scaled = scale_scores(scores)
    both = scaled.loc[[model_a, model_b]].T.dropna()
    both.columns = ["a", "b"]
    both["ratio"] = [b / a if a != 0 else math.nan for a, b in zip(both["a"], both["b"])]
    both.index.name = "benchmark"
    return both


def default_pairs(models: list[str], limit: int = 6) -> list[tuple[str, str]]:
    """Every pair of models in order, at most ``limit``."""
    return list(itertools.islice(itertools.combinations(models, 2), limit))


def ratio_table(scores: pd.DataFrame, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """Benchmark x "B / A" ratio table over the chosen pairs."""
    cols = {f"{b} / {a}": pair_table(scores, a, b)["ratio"] for a, b in pairs}
    table = pd.DataFrame(cols)
    table.index.name = "benchmark"
    return table


def parse_pairs(specs: list[str], models: list[str]) -> list[tuple[str, str]]:
    """``A,B`` -> (A, B); unknown models raise a UserError listing the known ones."""
    pairs = []
    for spec in specs:
        a, sep, b = spec.partition(",")
        if not sep or not a or not b:
            raise UserError(f"--pair wants MODEL_A,MODEL_B, got {spec!r}")
        for m in (a, b):
            if m not in models:
                raise UserError(f"--pair: unknown model {m!r}; known: {', '.join(models)}")
        pairs.append((a, b))
    return pairs
