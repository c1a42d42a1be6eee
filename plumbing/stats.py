"""NaN-aware means shared by the lm-eval task glue and the multi-turn runner; the paired bootstrap and sign-flip test of a difference, Benjamini-Hochberg q-values."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


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


@dataclass(frozen=True)
class PairedDelta:
    """mean(first - second) over item pairs, its percentile bootstrap interval and a one-sided p-value; ``low`` and
    ``high`` are NaN when not estimable (fewer than 2 pairs, or every pair differs by the same amount)."""

    delta: float
    low: float
    high: float
    p: float
    pairs: int

    @property
    def estimable(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))


#: sign flips enumerated exactly up to this many pairs (2**12 = 4096 patterns), sampled above it
EXACT_FLIPS = 12


def paired_delta(
    first: Sequence[float], second: Sequence[float], n_boot: int = 2000, seed: int = 0, level: float = 0.95, n_flips: int = 10000
) -> PairedDelta:
    """The paired comparison of ``first[i]`` with ``second[i]`` (one pair per item; a pair with a NaN or None on
    either side is left out): the mean difference d = mean(first - second); its percentile interval from the
    paired bootstrap, which resamples whole pairs with replacement (Efron and Tibshirani 1993, ch. 13 and 16.4);
    and the one-sided p-value of d > 0 from the paired randomization (sign-flip) test: under "the two members of
    a pair are exchangeable" each difference keeps or flips its sign with probability 1/2, and p is the share of
    the 2^n sign patterns whose mean is at least d (all of them up to :data:`EXACT_FLIPS` pairs, else ``n_flips``
    seeded random patterns, p = (1 + hits) / (1 + n_flips)). Seeded: the same inputs give the same numbers."""
    import numpy as np

    if len(first) != len(second):
        raise ValueError(f"paired_delta needs one value per pair on both sides, got {len(first)} and {len(second)}")
    pairs = [(float(a), float(b)) for a, b in zip(first, second) if not (_missing(a) or _missing(b))]
    if not pairs:
        return PairedDelta(math.nan, math.nan, math.nan, math.nan, 0)
    d = np.array([a - b for a, b in pairs])
    delta = float(d.mean())
    low = high = math.nan
    if len(d) >= 2 and float(d.max() - d.min()) > 1e-9 * max(1.0, float(abs(d).max())):  # rounding is no variance
        rng = np.random.default_rng(seed)
        means = d[rng.integers(0, len(d), (n_boot, len(d)))].mean(axis=1)
        tail = (1 - level) / 2 * 100
        low, high = (float(x) for x in np.percentile(means, [tail, 100 - tail]))
    return PairedDelta(delta, low, high, _sign_flip_p(d, n_flips, seed), len(d))


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(float(value))


def _sign_flip_p(d, n_flips: int, seed: int) -> float:
    import numpy as np

    observed = d.mean() - 1e-12 * max(1.0, abs(float(d.mean())))  # ties count as "at least d"
    if len(d) <= EXACT_FLIPS:
        signs = 1 - 2 * ((np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1)
        return float(((signs * d).mean(axis=1) >= observed).mean())
    signs = np.random.default_rng(seed + 1).choice([-1.0, 1.0], size=(n_flips, len(d)))
    return float((1 + ((signs * d).mean(axis=1) >= observed).sum()) / (1 + n_flips))


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values; Benjamini and Hochberg 1995, step-up): sorted ascending,
    q_(i) = min over j >= i of p_(j) * m / j, capped at 1, m the number of non-NaN p-values; NaN stays NaN.
    Rejecting every hypothesis with q <= alpha controls the false discovery rate at alpha (independent or
    positively dependent tests)."""
    kept = sorted((p, i) for i, p in enumerate(pvalues) if not _missing(p))
    out = [math.nan] * len(pvalues)
    m, running = len(kept), 1.0
    for rank in range(m, 0, -1):
        p, i = kept[rank - 1]
        running = min(running, p * m / rank)
        out[i] = running
    return out
