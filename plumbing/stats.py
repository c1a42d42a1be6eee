"""NaN-aware means shared by the lm-eval task glue and the multi-turn runner; a bootstrap interval of a difference of means."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence


def nanmean(values: Iterable[float]) -> float:
    """Mean of the non-NaN values (None counts as missing); NaN when there are none."""
    kept = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(kept) / len(kept) if kept else float("nan")


def mean_of_keys(rows: list[Mapping[str, float]]) -> dict[str, float]:
    """``{key: nanmean over rows}`` for every key in first-seen order (a row without a key counts as NaN)."""
    keys: list[str] = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    return {k: nanmean(row.get(k, float("nan")) for row in rows) for k in keys}


def bootstrap_difference(
    first: Sequence[float], second: Sequence[float], n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """(mean(first) - mean(second), low, high): the difference of two independent samples' means with its
    percentile bootstrap interval, each sample's items resampled with replacement within the sample
    (Efron and Tibshirani 1993, ch. 13); NaN values are left out first, and all three are NaN when a side is empty.
    Seeded: the same inputs give the same interval."""
    import numpy as np

    a = np.array([float(v) for v in first if v is not None and not math.isnan(float(v))])
    b = np.array([float(v) for v in second if v is not None and not math.isnan(float(v))])
    if not len(a) or not len(b):
        return math.nan, math.nan, math.nan
    rng = np.random.default_rng(seed)
    means_a = a[rng.integers(0, len(a), (n_boot, len(a)))].mean(axis=1)
    means_b = b[rng.integers(0, len(b), (n_boot, len(b)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means_a - means_b, [tail, 100 - tail])
    return float(a.mean() - b.mean()), float(low), float(high)
