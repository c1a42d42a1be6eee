"""The report's first screen says it plainly (issue 43 item 4): the verdict leads with whether a model is
distinguishable from chance at all, counts an undefined score as undefined (not below chance), counts a
fresh twin (``<task>_fresh``) with its published task instead of as one more benchmark, and reads a benchmark
where none of the model's replies parsed as "unparsed", with the reason."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from triangulation.report.cells import LeaderboardCell
from triangulation.report.context import ReportContext
from triangulation.report.summary import verdict

NAN = math.nan


def context(table: dict[str, dict[str, float]], cells: dict[tuple[str, str], LeaderboardCell]) -> ReportContext:
    frame = pd.DataFrame(table).T
    return ReportContext(runs=[], externals=[], taxonomy=None, out=Path("."), scores=SimpleNamespace(table=frame), cells=cells)


def items(mean: float, n: int = 40) -> list[float]:
    ones = round(mean * n)
    return [1.0] * ones + [0.0] * (n - ones)


def test_undefined_is_not_below_chance_and_a_fresh_twin_is_no_extra_benchmark():
    cells = {
        ("m", "above"): LeaderboardCell(scores=items(0.9), parsed=[1.0] * 40, n_total=100),
        ("m", "level"): LeaderboardCell(scores=items(0.5), parsed=[1.0] * 40, n_total=100),
        ("m", "undef"): LeaderboardCell(scores=[NAN] * 40, parsed=[0.5] * 40, n_total=100),
        ("m", "twin"): LeaderboardCell(scores=items(0.45), parsed=[1.0] * 40, n_total=100),
        ("m", "twin_fresh"): LeaderboardCell(scores=items(0.95), parsed=[1.0] * 40, n_total=100),
    }
    ctx = context(
        {
            "m": {"above": 0.9, "level": 0.5, "undef": NAN, "twin": 0.45, "twin_fresh": 0.95},
            "random": {"above": 0.25, "level": 0.45, "undef": 0.25, "twin": 0.5, "twin_fresh": 0.25},
        },
        cells,
    )
    line = verdict(ctx, "m", "random")
    assert line.startswith("m: measurably above chance on 1 of 4 benchmarks, indistinguishable from chance on 2, undefined (no score) on 1")
    assert "below" not in line  # the undefined score is not counted below chance
    assert "did not parse" not in line  # every reply of the counted benchmarks parsed at least half the time
    from triangulation.report.summary import group_count_note

    assert "A fresh twin (the contamination check's new items) counts with its published task" in group_count_note(ctx)
    assert "twin_fresh" in group_count_note(ctx)


def test_nothing_parsed_reads_the_same_way_on_every_benchmark():
    cells = {
        ("m", "a"): LeaderboardCell(scores=[0.0, 0.0], parsed=[0.0, 0.0], n_total=50),  # scored 0 on nothing parsed
        ("m", "b"): LeaderboardCell(scores=[NAN, NAN], parsed=[0.0, 0.0], n_total=8),  # undefined on nothing parsed
        ("m", "c"): LeaderboardCell(scores=items(0.5, 10), parsed=[1.0] * 10, n_total=100),
    }
    ctx = context({"m": {"a": 0.0, "b": NAN, "c": 0.5}, "random": {"a": 0.6, "b": 0.36, "c": 0.5}}, cells)
    line = verdict(ctx, "m", "random")
    assert line.startswith("m: indistinguishable from chance on every benchmark (3); 2 of the 3 because its replies did not parse")
    assert "--limit (n <= 10 per benchmark)" in line
