"""NaN-aware means shared by the lm-eval task glue and the multi-turn runner."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping


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
