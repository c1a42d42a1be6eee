"""Issue 31.2, 31.4, 31.5: clembench reply length, Gong et al.'s n-back parse rule, working-memory decoding.

Expected values are read off the authors' sources by hand: clemcore ``scripts/cli.py`` at 745fcb0 (``-l/--max_tokens``
default 100), playpen_eval ``evaluate/playpen_evaluator.py`` at 08e9761 (``'max_tokens':250``), Gong et al.'s
``experiments/verbal.ipynb`` cells 5-7 (exact 'm'/'-', else the first character), playpen_eval 91059d1 (WM greedy)."""

from __future__ import annotations

import pytest

from multiturn import registry
from multiturn.games.nback import NBackGame, parse_notebook
from plumbing.errors import UserError


def _block() -> dict:
    # a hand-made 1-back block: B B C -> targets - m -
    return {
        "id": "b0",
        "system_prompt": "You are asked to perform a 1-back task.",
        "stimuli": "BBC",
        "messages": ["B", "B", "C"],
        "targets": ["-", "m", "-"],
    }


def _play(game: NBackGame, replies: list[str]) -> dict[str, float]:
    for reply in replies:
        game.next_request()
        game.on_reply(reply)
    return game.scores()


def test_notebook_rule_takes_the_first_character_of_a_reply_that_is_not_exactly_m_or_dash():
    assert parse_notebook("m") == "m" and parse_notebook("-") == "-"
    assert parse_notebook("m (match)") == "m"  # "Extracting the first letter of the response."
    assert parse_notebook("- (no match)") == "-"
    assert parse_notebook("match") == "m"  # first character 'm'
    # first character neither 'm' nor '-': the notebook raises ValueError; here: invalid
    assert parse_notebook(" m") is None and parse_notebook("M") is None and parse_notebook("") is None
    assert parse_notebook("No match") is None


def test_nback_tasks_follow_the_notebook_and_keep_the_strict_rule_as_a_named_variant():
    replies = ["- no", "m (match)", "-"]
    default = registry.get_task("nback_verbal_1")
    assert default.parse == "notebook"
    scores = _play(default.make_game(_block(), 0), replies)
    # notebook: all three read (-, m, -) and right: accuracy 3/3, hit rate 1/1, no false alarm
    assert scores["accuracy"] == pytest.approx(1.0) and scores["hit_rate"] == 1.0 and scores["false_alarm_rate"] == 0.0
    strict = registry.get_task("nback_verbal_1", {"parse": "strict"})
    s = _play(strict.make_game(_block(), 0), replies)
    # strict: "- no" and "m (match)" are invalid: 1/3 right, the match missed, the first non-target a false alarm
    assert s["accuracy"] == pytest.approx(1 / 3) and s["hit_rate"] == 0.0 and s["false_alarm_rate"] == pytest.approx(0.5)
    assert s["parse_rate"] == pytest.approx(1 / 3)
    with pytest.raises(UserError, match="parse"):
        registry.get_task("nback_verbal_1", {"parse": "loose"})


def test_seed_003_three_back_keeps_exact_match():
    task = registry.get_task("nback_verbal_3_triangulating")
    assert task.parse == "exact"
    game = task.make_game(_block(), 0)
    s = _play(game, ["-", "m (match)", "-"])
    assert s["accuracy"] == pytest.approx(2 / 3) and s["hit_rate"] == 0.0  # "m (match)" is not 'm' there


def test_working_memory_temperature_is_the_papers_1_and_the_codes_greedy_is_a_task_argument():
    paper = registry.get_task("nback_verbal_3_triangulating")
    assert paper.gen_kwargs["temperature"] == 1.0 and paper.gen_kwargs["do_sample"] is True
    code = registry.get_task("nback_verbal_3_triangulating", {"greedy": True})
    assert code.gen_kwargs["do_sample"] is False and code.gen_kwargs["temperature"] == 0.0
    assert code.config()["task_args"] == {"greedy": True}  # recorded, so a resume tells the two apart
    assert registry.get_task("nback_spatial_2", {"greedy": True}).gen_kwargs["do_sample"] is False


def test_clem_reply_length_is_clembench_100_by_default_and_250_as_an_option():
    taboo = registry.get_task("taboo")
    assert taboo.gen_kwargs["max_gen_toks"] == 100 and taboo.gen_kwargs["temperature"] == 0.0
    long = registry.get_task("wordle", {"max_tokens": 250})
    assert long.gen_kwargs["max_gen_toks"] == 250 and long.config()["gen_kwargs"]["max_gen_toks"] == 250
    assert registry.get_task("taboo").gen_kwargs["max_gen_toks"] == 100  # the option does not leak into the class
    with pytest.raises(UserError, match="max_tokens"):
        registry.get_task("taboo", {"max_tokens": 0})
