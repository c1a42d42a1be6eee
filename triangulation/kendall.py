"""Pairwise Kendall tau-b between benchmarks over the models both of them scored.

Seed 003 (App. E.2.2) correlates benchmarks with Kendall's tau-b,
``tau_b = (P - Q) / sqrt((P + Q + T_x) (P + Q + T_y))``, pairwise over the models common to both,
marking p < 0.05. We wrap :func:`scipy.stats.kendalltau` (variant ``"b"``, its default p-value)
and handle the pairing and missing values ourselves.
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


def kendall_tables(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Square tau, p and n tables indexed by benchmark, from a model x benchmark score table.

    Each cell uses only the models that scored both benchmarks (pairwise deletion). The diagonal
    is computed like any other cell (tau 1 when the benchmark varies across >= 2 models).
    """
    cols = list(scores.columns)
    tau = pd.DataFrame(np.nan, index=cols, columns=cols, dtype=float)
    p = tau.copy()
    n = pd.DataFrame(0, index=cols, columns=cols, dtype=int)
    for i, a in enumerate(cols):
        for b in cols[i:]:
            r = kendall_pair(scores[a], scores[b])
            for u, v in ((a, b), (b, a)):
                tau.loc[u, v], p.loc[u, v], n.loc[u, v] = r.tau, r.p, r.n
    for t in (tau, p, n):
        t.index.name = "benchmark"
    return tau, p, n


def significant(p: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Boolean table: p < alpha (NaN p -> False)."""
    return p.lt(alpha).fillna(False)
