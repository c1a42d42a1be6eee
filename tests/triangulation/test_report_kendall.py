"""Kendall tau-b tables equal scipy.stats.kendalltau, pairwise over common models, with ties and NaN."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from triangulation.report.kendall import kendall_pair, kendall_tables

# few distinct values -> many ties; None -> a model that did not run that benchmark
cell = st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 0.5, 1.0, 2.0, 3.5]))


@st.composite
def score_tables(draw):
    n_models = draw(st.integers(2, 9))
    n_bench = draw(st.integers(1, 4))
    rows = [[draw(cell) for _ in range(n_bench)] for _ in range(n_models)]
    return pd.DataFrame(rows, index=[f"m{i}" for i in range(n_models)], columns=[f"b{j}" for j in range(n_bench)], dtype=float)


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=150, deadline=None)
@given(score_tables())
def test_tables_match_scipy_pairwise(table):
    tau, p, n = kendall_tables(table)
    assert list(tau.index) == list(tau.columns) == list(table.columns)
    for a in table.columns:
        for b in table.columns:
            keep = table[a].notna() & table[b].notna()
            xs, ys = table.loc[keep, a].to_numpy(), table.loc[keep, b].to_numpy()
            assert n.loc[a, b] == len(xs)
            if len(xs) >= 2:
                ref = stats.kendalltau(xs, ys)  # tau-b by default
                assert same(tau.loc[a, b], float(ref.statistic)), (a, b, xs, ys)
                assert same(p.loc[a, b], float(ref.pvalue))
            else:
                assert math.isnan(tau.loc[a, b]) and math.isnan(p.loc[a, b])
    assert tau.equals(tau.T) and p.equals(p.T)


def test_pair_uses_only_models_both_scored_and_aligns_by_name():
    x = pd.Series({"a": 1.0, "b": 2.0, "c": 3.0, "d": np.nan, "e": 5.0})
    y = pd.Series({"e": 1.0, "c": 2.0, "b": 3.0, "a": 4.0, "z": 9.0})  # other order, an extra model
    r = kendall_pair(x, y)
    assert r.n == 4
    assert math.isclose(r.tau, -1.0)
    ref = stats.kendalltau([1, 2, 3, 5], [4, 3, 2, 1])
    assert math.isclose(r.p, ref.pvalue)


def test_constant_or_too_few_models_give_nan_not_an_error():
    assert math.isnan(kendall_pair(pd.Series({"a": 1.0, "b": 1.0}), pd.Series({"a": 1.0, "b": 2.0})).tau)
    r = kendall_pair(pd.Series({"a": 1.0}), pd.Series({"a": 2.0}))
    assert r.n == 1 and math.isnan(r.p)


def test_tau_b_tie_correction_differs_from_tau_a():
    # with ties, tau-b's denominator sqrt((P+Q+Tx)(P+Q+Ty)) is smaller than n(n-1)/2
    x = pd.Series([1, 1, 2, 3], index=list("abcd"), dtype=float)
    y = pd.Series([1, 2, 2, 3], index=list("abcd"), dtype=float)
    r = kendall_pair(x, y)
    concordant, discordant = 4, 0  # pairs (a,c) (a,d) (b,d) (c,d); (a,b) tied in x, (b,c) tied in y
    assert math.isclose(r.tau, (concordant - discordant) / math.sqrt(5 * 5))


def test_tau_b_from_sign_matrices_matches_scipy_with_ties():
    import numpy as np
    from scipy import stats

    from triangulation.report.kendall import tau_b_from_signs

    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 4, 30).astype(float), rng.integers(0, 5, 30).astype(float)  # many ties

    def signs(v):
        return np.sign(v[:, None] - v[None, :])

    assert tau_b_from_signs(signs(x), signs(y)) == pytest.approx(stats.kendalltau(x, y, variant="b").statistic)


def test_kendall_pairs_bootstrap_interval_and_small_sample_warning():
    import numpy as np
    import pandas as pd

    from triangulation.report.kendall import kendall_pairs

    rng = np.random.default_rng(0)
    base = rng.normal(size=40)
    frame = pd.DataFrame({"a": base, "b": base + rng.normal(scale=0.5, size=40), "c": rng.normal(size=40)})
    frame.loc[frame.index[6:], "d"] = np.nan  # d: only 6 models
    frame.loc[frame.index[:6], "d"] = base[:6]
    frame.loc[frame.index[:2], "e"] = [1.0, 2.0]  # e: 2 models, no pair row
    pairs = kendall_pairs(frame, n_boot=500, seed=1).set_index(["a", "b"])
    ab, ac = pairs.loc[("a", "b")], pairs.loc[("a", "c")]
    assert ab["ci_low"] <= ab["tau"] <= ab["ci_high"] and ab["ci_low"] > 0.3  # strong: interval away from 0
    assert ac["ci_low"] < 0 < ac["ci_high"]  # independent: interval covers 0
    assert ab["p"] < 1e-6 and ab["warning"] == ""
    assert pairs.loc[("a", "d"), "n"] == 6 and pairs.loc[("a", "d"), "warning"] == "n < 8"
    assert not any("e" in pair for pair in pairs.index)
    again = kendall_pairs(frame, n_boot=500, seed=1).set_index(["a", "b"])
    assert again.loc[("a", "b"), "ci_low"] == ab["ci_low"]  # seeded
