"""Kendall tau-b between benchmarks, over a chosen set of models.

Seed 003 (App. E.2.2) correlates benchmarks with Kendall's tau-b,
``tau_b = (P - Q) / sqrt((P + Q + T_x) (P + Q + T_y))``, marking p < 0.05; the appendix does not say over
which models. The authors' code (momentino/playpen_eval ``analyze/correlation.py``,
``get_correlation_matrices_benchmarks``, with ``keep_common`` from ``analyze/score_extraction_utils.py`` at
bf980808ebd34778ebd45f060715b166a7f24d7b, the last commit holding their analysis code) keeps only the models
that scored *every* task of the matrix (``set.intersection`` of the tasks' model sets) and correlates each pair
over them: :func:`keep_common`, the default of the seed 003 figures (Figures 3, 7, 8). Correlating each pair over
the models that scored both (pairwise deletion, :func:`kendall_tables`) is **our variant** (``"pairwise"``):
the report's generic Kendall section uses it, and the seed 003 figures write it beside the authors' rule.
We wrap :func:`scipy.stats.kendalltau` (variant ``"b"``, its default p-value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

#: fewer common models than this -> tau, p are NaN (scipy needs two distinct values per side).
MIN_COMMON = 2


@dataclass(frozen=True)
class PairResult:
    tau: float
    p: float
    n: int


def kendall_pair(x: pd.Series, y: pd.Series) -> PairResult:
    """Kendall tau-b and its p-value over the index labels where both series have a finite value.

    ``n`` counts those common models; with fewer than two, or a constant side, tau and p are NaN
    (as scipy returns for constant input).
    """
    both = pd.concat([pd.to_numeric(x, errors="coerce"), pd.to_numeric(y, errors="coerce")], axis=1, join="inner")
    both = both.replace([np.inf, -np.inf], np.nan).dropna()
    n = int(len(both))
    if n < MIN_COMMON or both.iloc[:, 0].nunique() < 2 or both.iloc[:, 1].nunique() < 2:
        return PairResult(math.nan, math.nan, n)
    res = stats.kendalltau(both.iloc[:, 0].to_numpy(float), both.iloc[:, 1].to_numpy(float), variant="b")
    return PairResult(float(res.statistic), float(res.pvalue), n)


def _numeric(scores: pd.DataFrame) -> np.ndarray:
    """The score table as a float matrix, non-numbers and infinities as NaN."""
    values = np.array(scores.apply(pd.to_numeric, errors="coerce").to_numpy(float), dtype=float)
    values[~np.isfinite(values)] = np.nan
    return values


def _pair_from_arrays(x: np.ndarray, y: np.ndarray) -> PairResult:
    """:func:`kendall_pair` on two aligned float arrays (NaN = not scored)."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = int(keep.sum())
    if n < MIN_COMMON or len(np.unique(x)) < 2 or len(np.unique(y)) < 2:
        return PairResult(math.nan, math.nan, n)
    res = stats.kendalltau(x, y, variant="b")
    return PairResult(float(res.statistic), float(res.pvalue), n)


def kendall_tables(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Square tau, p and n tables indexed by benchmark, from a model x benchmark score table.

    Each cell uses only the models that scored both benchmarks (pairwise deletion). The diagonal
    is computed like any other cell (tau 1 when the benchmark varies across >= 2 models).
    """
    cols = list(scores.columns)
    values = _numeric(scores)
    k = len(cols)
    tau_m, p_m = np.full((k, k), np.nan), np.full((k, k), np.nan)
    n_m = np.zeros((k, k), dtype=int)
    for i in range(k):
        for j in range(i, k):
            r = _pair_from_arrays(values[:, i], values[:, j])
            tau_m[i, j] = tau_m[j, i] = r.tau
            p_m[i, j] = p_m[j, i] = r.p
            n_m[i, j] = n_m[j, i] = r.n
    tau = pd.DataFrame(tau_m, index=cols, columns=cols)
    p = pd.DataFrame(p_m, index=cols, columns=cols)
    n = pd.DataFrame(n_m, index=cols, columns=cols)
    for t in (tau, p, n):
        t.index.name = "benchmark"
    return tau, p, n


#: how the seed 003 figures choose the models of a correlation: the authors' ``keep_common`` (default) or ours
MODEL_SETS = ("keep_common", "pairwise")


def keep_common(scores: pd.DataFrame, benchmarks: list[str] | None = None) -> pd.DataFrame:
    """The authors' ``keep_common``: only the models (rows) with a finite score on every one of ``benchmarks``
    (default: every column), so each pair of the matrix is correlated over the same models."""
    cols = list(scores.columns if benchmarks is None else benchmarks)
    values = scores[cols].apply(pd.to_numeric, errors="coerce").replace([np.inf, -np.inf], np.nan)
    return scores.loc[values.notna().all(axis=1)]


def model_set(scores: pd.DataFrame, benchmarks: list[str], models: str) -> pd.DataFrame:
    """``scores`` restricted as the model-set rule ``models`` says (``keep_common`` over ``benchmarks``, or
    ``pairwise``: unchanged, each pair then drops its own missing values)."""
    if models not in MODEL_SETS:
        raise ValueError(f"models is one of {', '.join(MODEL_SETS)}, got {models!r}")
    return keep_common(scores, benchmarks) if models == "keep_common" else scores


def significant(p: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Boolean table: p < alpha (NaN p -> False)."""
    return p.lt(alpha).fillna(False)


#: fewer common models than this: a pair's tau is listed with the sample-size warning (seed 003 correlates
#: over many models; with a handful, tau-b takes few values and its p-value is coarse)
WARN_BELOW = 8
#: a correlation over fewer models says nothing (with two, tau-b is always +1 or -1)
MIN_MODELS = 3


def tau_b_from_signs(sx: np.ndarray, sy: np.ndarray) -> float:
    """Kendall tau-b from the sign matrices ``sign(x_i - x_j)``, ``sign(y_i - y_j)``:
    ``sum(sx sy) / sqrt(sum(sx^2) sum(sy^2))`` (= (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y)), every pair
    counted twice on both sides); NaN when one side is constant."""
    den = math.sqrt(float((sx * sx).sum()) * float((sy * sy).sum()))
    return float((sx * sy).sum()) / den if den else math.nan


def bootstrap_tau_ci(x: np.ndarray, y: np.ndarray, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of tau-b over models: resample the models (pairs (x_i, y_i)) with
    replacement ``n_boot`` times; resamples where a side is constant are dropped. (NaN, NaN) below
    :data:`MIN_MODELS` models."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    if n < MIN_MODELS:
        return math.nan, math.nan
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    # a resample is a vector of counts w; its tau-b is w'(sx sy)w / sqrt(w'|sx|w w'|sy|w), all resamples at once
    counts = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(float)

    def quad(m: np.ndarray) -> np.ndarray:
        return ((counts @ m) * counts).sum(axis=1)

    num, den = quad(sx * sy), np.sqrt(quad(sx * sx) * quad(sy * sy))
    taus = num[den > 0] / den[den > 0]
    if not len(taus):
        return math.nan, math.nan
    alpha = (1 - level) / 2
    low, high = np.quantile(taus, [alpha, 1 - alpha])
    return float(low), float(high)


def kendall_pairs(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per benchmark pair with at least :data:`MIN_MODELS` common models: n, tau-b, its 95%
    bootstrap interval over models, scipy's p-value and the sample-size warning (n < :data:`WARN_BELOW`)."""
    cols = list(scores.columns)
    values = _numeric(scores)
    rows = []
    for i, a in enumerate(cols):
        for j in range(i + 1, len(cols)):
            x, y = values[:, i], values[:, j]
            keep = ~(np.isnan(x) | np.isnan(y))
            if keep.sum() < MIN_MODELS:
                continue
            r = _pair_from_arrays(x[keep], y[keep])
            if math.isnan(r.tau):
                continue
            low, high = bootstrap_tau_ci(x[keep], y[keep], n_boot, seed)
            rows.append(
                {
                    "a": a,
                    "b": cols[j],
                    "n": r.n,
                    "tau": r.tau,
                    "ci_low": low,
                    "ci_high": high,
                    "p": r.p,
                    "warning": f"n < {WARN_BELOW}" if r.n < WARN_BELOW else "",
                }
            )
    return pd.DataFrame(rows, columns=["a", "b", "n", "tau", "ci_low", "ci_high", "p", "warning"])
