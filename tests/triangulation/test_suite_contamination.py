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
    suite = _suite(tmp_path, BASE + "contamination: [globalgroup_zh, taboo]\n")
    by_name = {t.name: t for t in suite.tasks}
    assert list(by_name) == ["globalgroup_zh", "games", "globalgroup_zh_fresh", "taboo_fresh"]
    twin = by_name["globalgroup_zh_fresh"]
    assert (twin.runner, twin.tasks) == ("eval", ("globalgroup_zh_fresh",))
    assert (
        twin.options
        == by_name["globalgroup_zh"].options
        == {"limit": 3, "seed": 5, "gen_kwargs": {"max_gen_toks": 64}, "log_samples": True}
    )
    assert by_name["taboo_fresh"].runner == "play" and by_name["taboo_fresh"].options == by_name["games"].options
    assert {c.label for c in cells(suite)} >= {"a/taboo_fresh", "b/taboo_fresh", "a/globalgroup_zh_fresh", "b/globalgroup_zh_fresh"}


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

    assert task_options("taboo_fresh") == {"instances": None}


def test_wordle_has_no_twin_and_the_error_says_why(tmp_path):
    with pytest.raises(UserError, match="same prompt"):
        _suite(tmp_path, BASE + "contamination: [wordle]\n")


def test_a_task_inside_a_group_entry_is_not_added_again(tmp_path):
    """Issue 39 item 9: ``taboo`` under ``play: clembench`` was added again with the defaults (no ``task_args``) and
    played twice; now the group entry runs it and its twin gets the group entry's options."""
    body = """
defaults: {limit: 3, seed: 5}
models:
  - name: a
tasks:
  - play: clembench
    task_args: {max_tokens: 250}
contamination: [taboo]
"""
    suite = _suite(tmp_path, body)
    assert [t.name for t in suite.tasks] == ["clembench", "taboo_fresh"]
    assert suite.tasks[1].options == suite.tasks[0].options and suite.tasks[1].options["task_args"] == {"max_tokens": 250}


def test_a_task_inside_an_lm_eval_group_entry_is_not_added_again(tmp_path):
    """The same for an ``eval:`` group (lm-eval's own task index expands it): the group entry gets ``log_samples``."""
    body = "models:\n  - name: a\ntasks:\n  - eval: globalgroup\n    num_fewshot: 0\ncontamination: [globalgroup_zh]\n"
    suite = _suite(tmp_path, body)
    assert [t.name for t in suite.tasks] == ["globalgroup", "globalgroup_zh_fresh"]
    assert suite.tasks[0].options == suite.tasks[1].options == {"num_fewshot": 0, "log_samples": True}
