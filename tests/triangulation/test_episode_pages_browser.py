"""Episode pages as a reader meets them (issue 32), in headless Chromium: an undefined score reads "n/a", an
unparsed reply says "unparsed" once, the first episode is open, and the pages link back to the report; in the
report every benchmark's header opens its episodes (a group's header its list of task pages)."""

from __future__ import annotations

import math
import re
from pathlib import Path

from multiturn.game import TurnView
from tests.support.browser import load
from tests.triangulation.test_report_chance import write_mc_run
from triangulation.viewer.episodes import Episode
from triangulation.viewer.pages import render_task_page

WHY = "unparsed: the parser expects 'm' or '-'"  # what n-back's reply view says about a reply it cannot read


def episode(i: int) -> Episode:
    turns = [TurnView("gm", "letter A"), TurnView("player", "maybe?", verdict=False, why=WHY)]
    scores = {"accuracy": 0.0, "topic_achieved": math.nan, "parsed": 0.0}
    return Episode(f"ep{i}", "org/m", "nback_verbal_1", False, "lost", math.nan, turns, scores, "why")


def test_nan_reads_n_a_unparsed_once_and_the_first_episode_is_open(tmp_path):
    page = tmp_path / "nback_verbal_1.html"
    page.write_text(render_task_page("nback_verbal_1", [episode(0), episode(1)], report="../report.html"), encoding="utf-8")
    loaded = load(page)
    assert not loaded.errors, loaded.errors
    assert "topic_achieved = n/a" in loaded.dom and "topic_achieved = ," not in loaded.dom
    first = loaded.dom[loaded.dom.index('id="ep0"') : loaded.dom.index('id="ep1"')]
    assert first.count("unparsed") == 1  # one turn, one "unparsed"
    assert re.search(r'<li id="ep0"><details open="">', loaded.dom) and '<li id="ep1"><details>' in loaded.dom
    assert 'href="../report.html"' in loaded.dom


def test_report_headers_open_their_episodes_and_the_episodes_link_back(tmp_path):
    from triangulation.cli.main import main

    runs = tmp_path / "runs"
    write_mc_run(runs, "org/model", correct=1)
    out = tmp_path / "report"
    assert main(["report", str(runs), "--out", str(out)]) == 0
    report = load(out / "report.html")
    assert not report.errors, report.errors
    assert 'href="episodes/index.html#group-mc"' in report.dom  # the group's header
    index = load(out / "episodes" / "index.html")
    assert 'href="../report.html"' in index.dom
    group = re.search(r'<p id="group-mc">(.*?)</p>', index.dom, re.S)
    assert group and 'href="mc_a.html"' in group[1] and 'href="mc_b.html"' in group[1]
    assert 'href="../report.html"' in load(Path(out / "episodes" / "mc_a.html")).dom
