"""Issue 41 item 1: seed 003's Interactive score, the paper's rule (seed 002's clemscore) and the authors' code's
episode-pooled score (momentino/playpen_eval ``utils/utils.py`` ``clembench_report`` at bf980808, called with the
registry's task name ``clembench``), computed from the published clembench-runs v1.6 ``results.csv``."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from multiturn.games.clem import group_scores
from multiturn.games.clem.scoring import episode_pooled
from triangulation.html import Table, Text
from triangulation.report.abilities import load_taxonomy
from triangulation.report.analyses import figures_triangulating, interactive_score
from triangulation.report.external import read_external


def test_episode_pooled_by_hand():
    # game a: 10 episodes, 50% played, quality 80 -> 5 played episodes scoring 80 on average
    # game b: 30 episodes, 100% played, quality 20 -> 30 played episodes scoring 20
    # pooled: played 35 / 40 = 87.5 %, quality (5*80 + 30*20) / 35 = 1000 / 35, score = 1000 / 40 = 25
    # seed 002: played (50 + 100) / 2 = 75, quality (80 + 20) / 2 = 50, clemscore 37.5
    got = episode_pooled({"a": (50.0, 80.0, 10), "b": (100.0, 20.0, 30)})
    assert got["played_episode_pooled"] == pytest.approx(87.5)
    assert got["quality_episode_pooled"] == pytest.approx(1000 / 35)
    assert got["clemscore_episode_pooled"] == pytest.approx(25.0)
    nothing = episode_pooled({"a": (0.0, float("nan"), 10)})
    assert nothing["played_episode_pooled"] == 0.0 and nothing["clemscore_episode_pooled"] == 0.0
    assert math.isnan(episode_pooled({"a": (float("nan"), float("nan"), 10)})["clemscore_episode_pooled"])


def test_clembench_group_reports_both_rules():
    per_task = {"a": {"played": 50.0, "quality": 80.0, "episodes": 10}, "b": {"played": 100.0, "quality": 20.0, "episodes": 30}}
    got = group_scores(per_task)
    assert got["clemscore"] == pytest.approx(37.5)  # the paper's rule stays the clemscore
    assert got["clemscore_episode_pooled"] == pytest.approx(25.0)
    assert got["episodes"] == 40
    older = group_scores({t: {k: v for k, v in m.items() if k != "episodes"} for t, m in per_task.items()})
    assert "clemscore_episode_pooled" not in older  # results written before the count: no variant guessed


@pytest.fixture(scope="module")
def v16(upstream):
    return read_external(f"v1.6={upstream / 'clembench-runs' / 'v1.6' / 'results.csv'}")


def test_v16_episode_counts_are_the_published_instances(upstream):
    episodes = interactive_score.v16_episodes()
    assert sum(episodes.values()) == 420 and episodes["referencegame"] == 180


def test_published_v16_two_interactive_scores(v16):
    [found], notes = interactive_score.published([v16])
    assert not notes
    table = found.table
    assert len(table) == 66  # the v1.6 models that played all seven games
    # the paper's rule over the seven games equals the published clemscore, except for the one model that also played
    # the multimodal cloudgame (its published clemscore counts eight games)
    text_only = v16.table.loc[table.index, "v1.6/cloudgame/played"].isna()
    assert list(text_only[~text_only].index) == ["gpt-4o-2024-08-06"]
    published = v16.table.loc[table.index[text_only], "v1.6/clemscore"]
    assert (table.loc[published.index, "clemscore"] - published).abs().max() < 0.01
    # the authors' code: printed in issue 41 from the same file
    for model, paper, code in [
        ("openchat-3.5-0106", 17.10, 52.97),
        ("Meta-Llama-3.1-8B-Instruct", 18.36, 30.88),
        ("Meta-Llama-3.1-70B-Instruct", 38.83, 54.35),
    ]:
        assert table.at[model, "clemscore"] == pytest.approx(paper, abs=0.01)
        assert table.at[model, "clemscore_episode_pooled"] == pytest.approx(code, abs=0.01)
    assert found.tau == pytest.approx(0.70, abs=0.006)  # issue 41: 0.70 (0.695 over the seven games' clemscores)
    assert table["difference"].abs().idxmax() == "openchat-3.5-0106"
    assert round(table["difference"].abs().max(), 1) == 35.9


def test_another_release_is_left_out_with_a_note(upstream, v16):
    v10 = read_external(f"v1.0={upstream / 'clembench-runs' / 'v1.0' / 'results.csv'}")
    found, notes = interactive_score.published([v10, v16])
    assert [f.label for f in found] == ["v1.6"]
    assert len(notes) == 1 and notes[0].startswith("v1.0:")


def test_figure1_section_shows_both_scores_and_tau(v16, tmp_path):
    scores = pd.DataFrame({"mmlu": [0.5, 0.6, 0.7]}, index=pd.Index(["a", "b", "c"], name="model"))
    tau = p = n = pd.DataFrame()
    [fig1, _] = figures_triangulating.build(scores, load_taxonomy(), tau, p, n, tmp_path, {}, None, {}, [v16])
    texts = [b.text for b in fig1.blocks if isinstance(b, Text)]
    [found], _ = interactive_score.published([v16])
    assert any(f"Kendall tau-b between them {found.tau:.3f}" in t and "+35.87 points (openchat-3.5-0106)" in t for t in texts)
    tables = [b for b in fig1.blocks if isinstance(b, Table)]
    assert any("clemscore_episode_pooled" in t.frame.columns for t in tables)
    assert (tmp_path / "triangulating_interactive_two_ways_v1.6.csv").is_file()


def test_report_shows_both_scores_in_the_figure_1_and_3_sections(upstream, tmp_path):
    """The whole report on the published v1.0 and v1.6 tables: the Figure 1 and Figure 3 sections each carry the
    two Interactive scores and their tau for v1.6 (v1.0's % played are not whole v1.6 episodes: a note says so)."""
    from tests.triangulation.test_report_fakes import run_report

    out = tmp_path / "rep"
    argv = ["--external", f"v1.0={upstream / 'clembench-runs/v1.0/results.csv'}"]
    argv += ["--external", f"v1.6={upstream / 'clembench-runs/v1.6/results.csv'}", "--out", str(out)]
    assert run_report(argv) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    [found], _ = interactive_score.published([v16_table(upstream)])
    for title in ("Accuracy by model size (seed 003, Figure 1)", "Abilities: static versus interactive (seed 003, Figure 3)"):
        start = html.rindex(title)  # the section's heading (the first mention is the table of contents)
        end = html.find("<h2", start)
        section = html[start : end if end > 0 else None]
        assert f"Kendall tau-b between them {found.tau:.3f}" in section, title
        assert "v1.0: its % played are not whole numbers" in section, title
    assert (out / "triangulating_interactive_two_ways_v1.6.csv").is_file()


def v16_table(upstream):
    return read_external(f"v1.6={upstream / 'clembench-runs' / 'v1.6' / 'results.csv'}")
