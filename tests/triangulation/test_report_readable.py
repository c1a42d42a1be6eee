"""What the report says and how (issue 32): tie-aware ranks among published models, counts as whole numbers,
clembench's 0-100 metrics marked as such, a chart drawn only when it has bars, tables without rows or columns
that are blank throughout, and a verdict that says why it counts fewer benchmarks than the leaderboard has columns."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from tests.triangulation.test_report_fakes import clem, write_play_run
from triangulation.cli.main import main
from triangulation.html import Section, Table, render_table
from triangulation.report.analyses.published import place
from triangulation.report.sections import collapse


def test_a_tied_rank_says_it_is_a_tie():
    published = pd.Series([7.5] + [0.0] * 24)  # one model above, 24 at 0: ours at 0 ties them
    assert place(published, 0.0) == "tied 2-26 of 26"
    assert place(pd.Series([9.0, 3.0]), 5.0) == "2 of 3"


def test_counts_show_as_whole_numbers_and_scores_keep_their_decimals():
    html = render_table(Table(pd.DataFrame({"games": [1.0, math.nan], "score": [1.0, 0.5]}, index=["a", "b"])))
    assert "<td>1</td>" in html and "1.000" in html and "0.500" in html


def test_blank_columns_and_rows_are_left_out_and_named():
    frame = pd.DataFrame(
        {"items": ["2", "10"], "split-half": [math.nan, math.nan], "spread": [0.5, math.nan]}, index=pd.Index(["x", "y"], name="benchmark")
    )
    ratios = pd.DataFrame({"B / A": [math.nan, 2.0, math.nan]}, index=["p", "q", "r"])
    [section], skipped = collapse([Section("S", [Table(frame, "reliability"), Table(ratios, "ratios")])])
    reliability, kept_ratios = section.blocks
    assert list(reliability.frame.columns) == ["items", "spread"] and "split-half (blank throughout)" in reliability.caption
    assert list(kept_ratios.frame.index) == ["q"] and "2 blank rows (p, r)" in kept_ratios.caption
    kept, blank = collapse([Section("Only blanks", [Table(ratios.loc[["p", "r"]], "ratios")])])
    assert kept == [] and [s.title for s in blank] == ["Only blanks"]  # a section left with nothing folds into Skipped


def section_of(html: str, title: str) -> str:
    start = html.index(f">{title}</h2>")
    return html[start : html.find("<h2", start)]


def report_text(tmp_path: Path, played: float, quality: float) -> str:
    write_play_run(tmp_path / "runs", "pretrained=org/m", {"taboo": clem(played, quality), "wcst": {"accuracy": 0.5}}, folder="org__m")
    write_play_run(tmp_path / "runs", "pretrained=random", {"taboo": clem(100.0, 0.0), "wcst": {"accuracy": 0.3}}, folder="random")
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "runs"), "--out", str(out)]) == 0
    return (out / "report.html").read_text(encoding="utf-8")


def test_a_clemscore_chart_of_zeros_is_a_sentence_and_0_100_metrics_are_marked(tmp_path):
    html = report_text(tmp_path, played=0.0, quality=math.nan)
    clembench = section_of(html, "clembench games (seed 002)")
    assert "<img" not in clembench and "no chart, every clemscore here is 0" in clembench
    assert "played per game (% of episodes played, 0-100)" in html and "clemscore per game (played / 100 x quality, 0-100)" in html
    header = re.search(r"<th title='taboo'>(.*?)</th>", html)
    assert header and "(0-100)" in header[1]  # beside wcst's 0-1 accuracy
    with_bars = report_text(tmp_path / "bars", played=100.0, quality=50.0)
    assert "<img" in section_of(with_bars, "clembench games (seed 002)")
