"""Seed 003 Figure 6 (cognitive abilities spectrum) from hand-made scores (issue 31, reproduction)."""

from __future__ import annotations

import pandas as pd
import pytest

from triangulation.report.abilities import load_taxonomy
from triangulation.report.analyses.cognitive_spectrum import spectrum_table

GROUPS = {"cognitive_flexibility_triangulating": ["wcst_triangulating", "lnt_triangulating"]}


def _scores() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "nback_verbal_3_triangulating": [0.5, 0.8],  # working memory, accuracy
            "wcst_triangulating": [0.4, 0.6],
            "lnt_triangulating": [0.6, 0.9],
            "cognitive_flexibility_triangulating": [0.55, 0.72],  # the group (its own aggregate of the runs)
            "logiqa2": [0.3, 0.35],
            "eq_bench": [40.0, 70.0],  # 0-100 already
            "mmlu": [0.6, 0.7],  # static benchmark: not a cognitive test
        },
        index=pd.Index(["a", "b"], name="model"),
    )


def test_spectrum_is_one_score_per_ability_in_tables_1_2_order():
    table = spectrum_table(_scores(), load_taxonomy(), GROUPS)
    assert list(table.index) == ["Working Memory", "Cognitive Flexibility", "Logical Reasoning", "Emotional Intelligence"]
    assert list(table.columns) == ["a", "b"]
    assert table.at["Working Memory", "b"] == pytest.approx(80.0)
    # the group stands for WCST and LNT: 55 and 72, not pooled with them ((55 + 40 + 60) / 3 = 51.7 for a)
    assert table.at["Cognitive Flexibility", "a"] == pytest.approx(55.0)
    assert table.at["Cognitive Flexibility", "b"] == pytest.approx(72.0)
    assert table.at["Logical Reasoning", "a"] == pytest.approx(30.0)
    assert table.at["Emotional Intelligence", "b"] == pytest.approx(70.0)  # EQ-Bench stays on its 0-100 scale
    assert "mmlu" not in table.index
