"""Issue 30 item 10: a model name that a spreadsheet would run as a formula (``=cmd|' /C calc'!A0``) is written to
every CSV of the report as text (OWASP: a leading ``'`` before ``= + - @``, tab and carriage return), numbers stay
numbers, and the report reads its own ``leaderboard.csv`` back with the name intact."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from tests.triangulation.test_report_fakes import run_report, three_model_results, write_play_run
from triangulation.report.external import read_external

EVIL = "=cmd|' /C calc'!A0"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP
OTHERS = ["+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1+1", "\r=1+1"]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _live_formulas(path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [cell for row in csv.reader(fh) for cell in row if cell.startswith(FORMULA_STARTS) and not _is_number(cell)]


@pytest.mark.parametrize("value", [EVIL, *OTHERS, "'=x", "''@y", "'plain", "plain", "-0.5x"])
def test_escape_is_text_to_a_spreadsheet_and_reversible(value):
    from plumbing.csvio import escape_cell, unescape_cell

    escaped = escape_cell(value)
    assert not escaped.startswith(FORMULA_STARTS) and unescape_cell(escaped) == value
    assert escape_cell(-0.5) == -0.5 and escape_cell(3) == 3


def test_every_report_csv_holds_no_live_formula(tmp_path):
    three_model_results(tmp_path)
    for i, name in enumerate([EVIL, *OTHERS]):
        write_play_run(tmp_path / "play", {"pretrained": name}, {"wcst_triangulating": {"accuracy": 0.1 + i / 10}}, folder=f"evil{i}")
    out = tmp_path / "report"
    assert run_report([str(tmp_path / "lm_eval"), str(tmp_path / "play"), "--out", str(out)]) == 0
    written = sorted(out.rglob("*.csv"))
    names = {p.name for p in written}
    assert {"scores.csv", "leaderboard.csv", "discriminative_ratios.csv"} <= names
    for path in written:
        assert not _live_formulas(path), f"{path.name}: {_live_formulas(path)}"
    assert "'" + EVIL in (out / "scores.csv").read_text(encoding="utf-8")
    assert "'" + EVIL in (out / "leaderboard.csv").read_text(encoding="utf-8")
    back = read_external(f"lb={out / 'leaderboard.csv'}")
    assert EVIL in back.table.index and set(OTHERS) <= set(back.table.index)
    assert pd.read_csv(out / "scores.csv")["wcst_triangulating"].dtype.kind == "f"  # numbers are still numbers


def test_the_suite_model_sizes_file_is_escaped_too(tmp_path):
    from plumbing.csvio import write_rows

    path = write_rows(tmp_path / "model_sizes.csv", ["model", "size_b"], [[EVIL, "-1"], ["ok", "7"]])
    assert _live_formulas(path) == [] and "'" + EVIL in path.read_text(encoding="utf-8")
