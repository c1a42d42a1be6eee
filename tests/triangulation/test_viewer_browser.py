"""The report and the episode viewer in headless Chromium, on a run of real games (the random player on
every family, a scripted player whose replies carry ``<script>``): no console errors, the expected
episodes listed after the page's script ran, model-written ``<script>`` shown as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.browser import load
from tests.support.played_run import FAMILY_TASKS, played_run


@pytest.fixture(scope="module")
def report(upstream, tmp_path_factory) -> Path:
    from triangulation.cli.main import main

    root = tmp_path_factory.mktemp("browser")
    runs = played_run(upstream, root)
    out = root / "report"
    assert main(["report", str(runs), "--out", str(out)]) == 0
    return out


def test_the_console_check_catches_a_broken_page(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><p>x</p><script>undefinedFunction()</script>")
    assert load(page).errors  # the check below is not vacuous


def test_report_loads_without_console_errors(report):
    loaded = load(report / "report.html")
    assert not loaded.errors, loaded.errors
    assert "chance (random player)" in loaded.dom and "Leaderboard" in loaded.dom
    assert "needs &gt;= 3 models" in loaded.dom  # two models: no correlation yet (listed under Skipped)
    assert 'href="episodes/wcst.html"' in loaded.dom


@pytest.mark.parametrize("task", sorted(set(FAMILY_TASKS.values())))
def test_episode_pages_list_their_episodes(report, task):
    runs = report.parent / "runs"
    expected = [json.loads(line)["id"] for path in runs.glob(f"*/episodes_{task}.jsonl") for line in path.read_text().splitlines()]
    loaded = load(report / "episodes" / f"{task}.html")
    assert not loaded.errors, loaded.errors
    assert f"{len(expected)} of {len(expected)} episodes, page 1 of 1" in loaded.dom  # the script ran and counted them
    for episode_id in expected:
        assert f'<span class="id">{episode_id}</span>' in loaded.dom


def test_script_in_a_model_reply_shows_as_text(report):
    loaded = load(report / "episodes" / "nback_verbal_1.html", fragment="ep2")
    assert not loaded.errors, loaded.errors
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in loaded.dom  # text in the page
    assert "<script>alert(1)</script>" not in loaded.dom  # never an element
    assert '<details open="">' in loaded.dom  # the #fragment opened that episode
