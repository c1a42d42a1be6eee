"""Seed 000 Table 1 (Dataset Overview): "C-R Group Amount" and "Total Group Amount" per subset, counted from the
upstream ``Grouping Datasets/*.xlsx`` (``Tag 1`` = 1 is a culturally related group)."""

from __future__ import annotations

from datasets_build.globalgroup import group_amounts

#: as printed in seed 000 Table 1 (C-R group amount, total group amount); NYT: "N/A", 2044
TABLE1 = {"en": (22, 48), "es": (27, 48), "zh": (35, 80), "hi": (32, 49), "ar": (19, 40), "nyt-shuf": (None, 2044), "nyt-seq": (None, 2044)}


def test_table1_group_amounts_from_the_grouping_sheets(upstream):
    assert group_amounts(upstream / "globalgroup") == TABLE1
