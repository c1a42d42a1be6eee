"""What stands behind a leaderboard cell (n, parse share, score on parsed items, interval, split-half
reliability) and how sections that cannot be computed collapse into the Skipped list."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from triangulation.html import Image, Section, Table, Text
from triangulation.report.cells import LeaderboardCell, cell_note, split_half, why_undefined
from triangulation.report.context import Skipped
from triangulation.report.sections import collapse, finish
from triangulation.report.top import needs_models


def test_parse_share_score_on_parsed_and_why_a_cell_is_undefined():
    cell = LeaderboardCell(scores=[1.0, 0.0, 0.0, 0.5], parsed=[1.0, 0.0, 0.0, 0.5], n_total=50)
    assert cell.n == 4 and cell.limited and cell.parse_share == pytest.approx(0.375)
    assert cell.on_parsed == pytest.approx(0.75)  # items 1 and 4 had a parsed reply
    note = cell_note(cell)
    assert note.startswith("n=4/50 (--limit) 95% [") and "38% parsed" in note and "0.750 on parsed" in note
    nothing = LeaderboardCell(scores=[math.nan, math.nan], parsed=[0.0, 0.0], n_total=8)
    assert why_undefined(nothing) == "0% parsed" and math.isnan(nothing.on_parsed)
    assert why_undefined(LeaderboardCell(scores=[1.0], n_total=1)) == "" and "parsed" not in cell_note(
        LeaderboardCell(scores=[1.0], n_total=1)
    )


def test_wilson_interval_says_how_little_two_items_mean():
    lo, hi = LeaderboardCell(scores=[0.0, 0.0]).interval()
    assert lo == 0.0 and hi == pytest.approx(0.658, abs=1e-3)  # Wilson, n = 2, p = 0
    lo, hi = LeaderboardCell(scores=[0.5] * 400).interval()
    assert (lo, hi) == pytest.approx((0.451, 0.549), abs=1e-3)
    lo, hi = LeaderboardCell(scores=[2.0, 4.0, 6.0]).interval()  # not in [0, 1]: mean +- 1.96 SE
    assert (lo, hi) == pytest.approx((4 - 1.959964 * 2 / math.sqrt(3), 4 + 1.959964 * 2 / math.sqrt(3)))


def test_split_half_is_spearman_brown_over_models_and_needs_ten_items_and_three_models():
    rng = np.random.default_rng(0)
    ability = {"a": 0.2, "b": 0.5, "c": 0.8, "d": 0.6}
    cells = {(m, "t"): LeaderboardCell(scores=list((rng.random(20) < p).astype(float))) for m, p in ability.items()}
    odd = [np.mean(c.scores[0::2]) for c in cells.values()]
    even = [np.mean(c.scores[1::2]) for c in cells.values()]
    r = np.corrcoef(odd, even)[0, 1]
    rel, k = split_half(cells, "t")
    assert k == 4 and rel == pytest.approx(2 * r / (1 + r))
    few = {(m, "t"): LeaderboardCell(scores=[1.0] * 9) for m in "abcd"}
    assert math.isnan(split_half(few, "t")[0]) and split_half(few, "t")[1] == 0
    assert math.isnan(split_half(dict(list(cells.items())[:2]), "t")[0])


def test_sections_that_cannot_be_computed_collapse_into_one_skipped_list(tmp_path):
    png = tmp_path / "x.png"
    png.write_bytes(b"\x89PNG")
    built = [
        Section("Shown", [Text("a note", note=True), Table(pd.DataFrame({"v": [1.0]}, index=["m"]))]),
        Section("Needs models", [Text("about", note=True), needs_models("A Kendall correlation", 3, 1)]),
        Section("All blank", [Table(pd.DataFrame({"v": [math.nan]}, index=["m"])), Text("ratios", note=True)]),
        Section("Figure", [Table(pd.DataFrame({"v": [math.nan]}, index=["m"])), Image(png)]),
        Skipped("Abilities", "needs >= 3 models, has 2"),
    ]
    sections, skipped = collapse(built)
    assert [s.title for s in sections] == ["Shown", "Figure"]
    assert [b for b in sections[1].blocks if isinstance(b, Table)] == []  # the all-blank table is dropped
    assert {s.title: s.reason for s in skipped} == {
        "Needs models": "A Kendall correlation needs 3 models, has 1: add results of more models or --external tables.",
        "All blank": "ratios",
        "Abilities": "needs >= 3 models, has 2",
    }
    page = finish(built)
    assert page[-1].title.startswith("Skipped") and page[-1].blocks[0].lines[0].startswith("Needs models: ")
