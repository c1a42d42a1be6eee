"""Discriminative power of benchmarks for a pair of models (seed 003, Sec. 3.2, Figure 2).

For models A and B, each benchmark both scored is a point (score of A, score of B); the further from
the diagonal, the more the benchmark separates them. The figure labels each benchmark with the ratio
of the two models' performance, B / A here; it is undefined (``*`` in the paper, NaN here) when A
scores 0.
"""

from __future__ import annotations

import itertools
import math

import pandas as pd

from plumbing.errors import UserError


def percent_scale(column: pd.Series) -> pd.Series:
    """Put a benchmark on 0-100: scores all within [0, 1] are fractions and are multiplied by 100."""
    finite = column.dropna()
    if len(finite) and finite.min() >= 0 and finite.max() <= 1:
        return column * 100
    return column


def pair_table(scores: pd.DataFrame, model_a: str, model_b: str) -> pd.DataFrame:
    """Rows = benchmarks both models scored; columns a, b (0-100 scale) and ratio = b / a."""
    scaled = scores.apply(percent_scale)
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
