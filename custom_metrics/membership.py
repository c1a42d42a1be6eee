"""Membership inference on item text (issue 42, a second contamination signal): Min-K% Prob and a probe's AUC.

Pure functions on token log-probabilities and scores; the log-probabilities come from
:mod:`triangulation.membership` (lm-eval's ``loglikelihood_rolling`` context rule, checked against its totals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Shi et al. 2023's default share of tokens (§4: "k = 20" performs best on WikiMIA)
DEFAULT_K = 0.2


def min_k_prob(token_logprobs: Sequence[float], k: float = DEFAULT_K) -> float:
    """Min-K% Prob (Shi et al. 2023, "Detecting Pretraining Data from Large Language Models", arXiv:2310.16789, §3):
    "we select the k% of tokens from x with the minimum token probability to form a set, Min-K%(x), and compute
    the average log-likelihood of the tokens in this set: MIN-K% PROB(x) = 1/E sum over x_i in Min-K%(x) of
    log p(x_i | x_1, ..., x_{i-1})", E the size of the set; a high value suggests x was seen in training. E is
    ``int(k * n)`` as in the authors' code, at least 1; NaN for a text without tokens."""
    if not 0 < k <= 1:
        raise ValueError(f"k must be in (0, 1], got {k}")
    values = sorted(float(v) for v in token_logprobs)
    if not values:
        return math.nan
    lowest = values[: max(1, int(k * len(values)))]
    return sum(lowest) / len(lowest)


def auc(members: Sequence[float], others: Sequence[float]) -> float:
    """The probability that a random member's score exceeds a random non-member's, ties counted 1/2 (the area
    under the ROC curve, = the Mann-Whitney U statistic / (n1 n2)); NaN scores left out, NaN without both sides."""
    a = [float(v) for v in members if not math.isnan(float(v))]
    b = [float(v) for v in others if not math.isnan(float(v))]
    if not a or not b:
        return math.nan
    wins = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    return wins / (len(a) * len(b))


def auc_interval(
    members: Sequence[float], others: Sequence[float], n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """(AUC, low, high): :func:`auc` with its percentile bootstrap interval, each side's items resampled within the
    side (seeded); low and high NaN with fewer than 2 items on a side."""
    import numpy as np

    a = np.array([float(v) for v in members if not math.isnan(float(v))])
    b = np.array([float(v) for v in others if not math.isnan(float(v))])
    value = auc(a.tolist(), b.tolist())
    if len(a) < 2 or len(b) < 2:
        return value, math.nan, math.nan
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        x, y = a[rng.integers(0, len(a), len(a))], b[rng.integers(0, len(b), len(b))]
        draws.append(float(((x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])).mean()))
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return value, float(low), float(high)
