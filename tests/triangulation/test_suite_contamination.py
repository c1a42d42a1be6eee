"""A suite's ``contamination:`` list runs each named task's fresh twin beside it for every model (issue 33)."""

from __future__ import annotations

import pytest

from plumbing.errors import UserError
from triangulation.suite.spec import cells, load_suite


def _suite(tmp_path, body: str):
    path = tmp_path / "s.yaml"
    path.write_text(body, encoding="utf-8")
    return load_suite(path)


BASE = """
defaults: {limit: 3, seed: 5}
models:
  - name: a
  - name: b
    model: random
tasks:
  - eval: globalgroup_zh
    gen_kwargs: {max_gen_toks: 64}
  - play: [taboo, wordle]
    name: games
"""


def test_one_line_adds_the_fresh_twins_with_the_published_entries_options(tmp_path):
    suite = _suite(tmp_path, BASE + "contamination: [globalgroup_zh, wordle, taboo]\n")
    by_name = {t.name: t for t in suite.tasks}
    assert list(by_name) == ["globalgroup_zh", "games", "globalgroup_zh_fresh", "wordle_fresh", "taboo_fresh"]
    twin = by_name["globalgroup_zh_fresh"]
    assert (twin.runner, twin.tasks) == ("eval", ("globalgroup_zh_fresh",))
    assert (
        twin.options
        == by_name["globalgroup_zh"].options
        == {"limit": 3, "seed": 5, "gen_kwargs": {"max_gen_toks": 64}, "log_samples": True}
    )
    assert by_name["wordle_fresh"].runner == "play" and by_name["wordle_fresh"].options == by_name["games"].options
    assert {c.label for c in cells(suite)} >= {"a/wordle_fresh", "b/wordle_fresh", "a/globalgroup_zh_fresh", "b/taboo_fresh"}


def test_a_named_task_missing_from_tasks_is_added_with_the_defaults(tmp_path):
    suite = _suite(tmp_path, BASE + "contamination: globalgroup_en\n")
    by_name = {t.name: t for t in suite.tasks}
    assert by_name["globalgroup_en"].options == {"limit": 3, "seed": 5, "log_samples": True}
    assert by_name["globalgroup_en_fresh"].tasks == ("globalgroup_en_fresh",)


def test_a_task_without_a_fresh_twin_is_a_one_line_error(tmp_path):
    with pytest.raises(UserError, match="'connections' has no fresh twin"):
        _suite(tmp_path, BASE + "contamination: [connections]\n")


def test_the_fresh_play_tasks_are_registered_with_the_published_options():
    from multiturn.registry import task_options

    assert task_options("wordle_fresh") == {"instances": None, "speed": "v1.6"}
    assert task_options("taboo_fresh") == {"instances": None}
