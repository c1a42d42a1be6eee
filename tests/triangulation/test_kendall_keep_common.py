"""Issue 31.3: the seed 003 figures correlate over the authors' keep_common models (only models that scored
every benchmark of the figure, playpen_eval analyze/score_extraction_utils.py at bf98080); pairwise deletion is
our named variant. Taus counted by hand below (concordant - discordant pairs over all pairs, no ties)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from triangulation.report.abilities import ability_matrix, load_taxonomy, static_vs_interactive
from triangulation.report.kendall import keep_common, kendall_tables, model_set

NAN = math.nan


def _scores() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "nback_verbal_3_triangulating": [1, 2, 3, 4, 5],  # working memory
            "mmlu": [1, 2, 3, 4, 0],  # static: m5 lowest
            "taboo": [1, 2, 3, 4, 5],  # interactive
            "wcst_triangulating": [1, 2, 3, 4, NAN],  # cognitive flexibility: m5 did not play it
        },
        index=pd.Index(["m1", "m2", "m3", "m4", "m5"], name="model"),
        dtype=float,
    )


def test_keep_common_keeps_only_models_with_every_benchmark():
    assert list(keep_common(_scores()).index) == ["m1", "m2", "m3", "m4"]
    assert list(keep_common(_scores(), ["mmlu", "taboo"]).index) == ["m1", "m2", "m3", "m4", "m5"]
    with pytest.raises(ValueError):
        model_set(_scores(), ["mmlu"], "listwise")


def test_figure3_default_is_keep_common_and_pairwise_is_the_variant():
    tax = load_taxonomy()
    wm = static_vs_interactive(_scores(), tax).set_index("ability").loc["working_memory"]
    # keep_common: m1-m4 (m5 lacks wcst): WM and MMLU in the same order, 6 concordant pairs of 6 -> tau 1
    assert wm["n_static"] == 4 and wm["tau_static"] == pytest.approx(1.0)
    pw = static_vs_interactive(_scores(), tax, models="pairwise").set_index("ability").loc["working_memory"]
    # pairwise: m1-m5; m5 is highest on WM and lowest on MMLU: 6 concordant, 4 discordant of 10 -> 0.2
    assert pw["n_static"] == 5 and pw["tau_static"] == pytest.approx(0.2)


def test_figure7_reports_n_per_cell_under_keep_common():
    tau, _p, n = ability_matrix(_scores(), load_taxonomy())
    assert (n.loc["Working Memory"] == 4).all()
    assert tau.at["Working Memory", "mmlu"] == pytest.approx(1.0)
    tau_pw, _p, n_pw = ability_matrix(_scores(), load_taxonomy(), models="pairwise")
    assert n_pw.at["Working Memory", "mmlu"] == 5 and tau_pw.at["Working Memory", "mmlu"] == pytest.approx(0.2)


def test_generic_tables_stay_pairwise():
    tau, _p, n = kendall_tables(_scores())
    assert n.at["nback_verbal_3_triangulating", "mmlu"] == 5 and tau.at["nback_verbal_3_triangulating", "mmlu"] == pytest.approx(0.2)
