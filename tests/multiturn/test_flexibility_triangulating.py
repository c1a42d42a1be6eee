"""wcst_triangulating / lnt_triangulating: seed 003's user-only history, its settings and its text rule."""

from __future__ import annotations

import pytest

from models.scripted import ScriptedLM
from multiturn import registry
from multiturn.engine.runner import run_task, run_tasks
from multiturn.engine.settings import TaskSettings
from multiturn.games.flexibility import templates
from multiturn.games.lnt import lnt_answer
from multiturn.games.wcst import wcst_correct
from tests.support.play_settings import play_settings

SEED = 1234


def test_history_holds_only_user_messages_prompt_then_feedback():
    """Seed 003's port (playpen_eval ``llm_cognitive_flexibility_original_task.py``) appends each trial's
    prompt and, when the reply parses, the feedback, both as user messages; the reply never enters.

    LNT, 3 trials, replies "vowel", "no idea", "odd": one call per trial (3 calls, not 3 + 2); the third
    call sees system, prompt 1, feedback 1, prompt 2 (no feedback: unparsed), prompt 3 = 5 messages."""
    seen = []
    replies = iter(["vowel", "no idea", "odd"])

    def respond(messages):
        seen.append(messages)
        return next(replies)

    task = registry.get_task("lnt_triangulating")
    instance = task.instances(SEED)[0]
    game = task.make_game({**instance, "trials": instance["trials"][:3]}, SEED)
    while (request := game.next_request()) is not None:
        game.on_reply(respond(request.messages))
    assert len(seen) == 3
    last = seen[-1]
    assert [m["role"] for m in last] == ["system", "user", "user", "user", "user"]
    assert last[0]["content"] == templates()["lnt"]["system_prompt"]
    assert last[1]["content"].startswith("\nSequence: ") and last[2]["content"] in ("Correct!", "Incorrect!")
    assert last[3]["content"].startswith("\nSequence: ") and last[4]["content"].startswith("\nSequence: ")
    assert game.history[-1]["content"] in ("Correct!", "Incorrect!")  # the last parsed reply got feedback
    assert [t["parsed"] for t in game.transcript] == ["vowel", None, "odd"]


def test_settings_are_seed_003s_app_e():
    """App. E.2.1 "8 times with 25 trials each"; App. E.3 "0.7 to LLM-Cognitive-Flexibility"."""
    for name in ("wcst_triangulating", "lnt_triangulating"):
        task = registry.get_task(name)
        instances = task.instances(SEED)
        assert len(instances) == 8 and all(len(i["trials"]) == 25 for i in instances)
        assert task.gen_kwargs["temperature"] == 0.7
        assert "user-only" in task.config()["protocol"]


def test_parsed_only_accuracy_by_hand():
    """Seed 003 App. E.2.1: "the accuracy was computed only on the trials for which response parsing
    was successful".

    WCST, 4 trials: right, wrong, unparseable, right -> parsed 3, correct 2: accuracy 2/3 (their code
    would give 2/25 = 0.08: ``score / num_trials``), accuracy_all_trials 2/4, parse_rate 3/4."""
    task = registry.get_task("wcst_triangulating")
    instance = task.instances(SEED)[0]
    game = task.make_game({**instance, "trials": instance["trials"][:4]}, SEED)
    for k in range(4):
        game.next_request()
        trial = game.instance["trials"][game.trial]
        right = next(i for i, o in enumerate(trial["options"]) if wcst_correct(trial["card"], o, game.rule))
        game.on_reply([str(right + 1), str((right + 1) % 4 + 1), "pass", str(right + 1)][k])
    assert game.done
    assert game.scores()["accuracy"] == pytest.approx(2 / 3)
    assert game.scores()["accuracy_all_trials"] == pytest.approx(0.5)
    assert game.scores()["parse_rate"] == pytest.approx(0.75)
    assert [m["role"] for m in game.history].count("assistant") == 0


def test_group_is_the_mean_of_the_two_accuracies_and_oracle_scores_one(tmp_path):
    """App. E.2.1 "We then averaged the accuracy obtained on both subtasks": an LNT player that always
    answers by the hidden task scores 1.0; WCST always "1" scores some a; the group = (a + 1) / 2."""
    lnt = registry.get_task("lnt_triangulating")
    shadows = {}
    for inst in lnt.instances(SEED)[:2]:
        game = lnt.make_game(inst, SEED)
        shadows[game.next_request().messages[1]["content"]] = game

    def respond(messages):
        if not messages[1]["content"].startswith("\nSequence: "):
            return "1"
        game = shadows[messages[1]["content"]]
        assert game.next_request().messages == messages
        reply = lnt_answer(game.instance["trials"][game.trial]["sequence"], game.rule)
        game.on_reply(reply)
        return reply

    payload, _ = run_tasks(
        play_settings(["cognitive_flexibility_triangulating"], output_dir=tmp_path, limit=2),
        {"player": ScriptedLM(respond)},
        progress=False,
    )
    acc_w = payload["results"]["wcst_triangulating"]["accuracy,none"]
    assert payload["results"]["lnt_triangulating"]["accuracy,none"] == 1.0
    assert 0 < acc_w < 1
    group = payload["groups"]["cognitive_flexibility_triangulating"]
    assert group["cognitive_flexibility,none"] == pytest.approx((acc_w + 1.0) / 2)


def test_switches_follow_six_correct_in_a_row():
    """Kennedy & Nowak's rule kept: after 6 consecutive correct answers the rule switches (25 right
    answers -> switches after trials 6, 12, 18, 24 = 4)."""
    task = registry.get_task("lnt_triangulating")
    game = task.make_game(task.instances(SEED)[0], SEED)
    while game.next_request() is not None:
        game.on_reply(lnt_answer(game.instance["trials"][game.trial]["sequence"], game.rule))
    assert game.n_switches == 4 and game.scores()["accuracy"] == 1.0
    summary = run_task(TaskSettings(task, seed=SEED, limit=1), {"player": ScriptedLM(lambda m: "vowel")}, progress=False)
    assert summary["metrics"]["parse_rate"] == 1.0


def test_seed_003_code_lnt_bug_estimate():
    """FIDELITY.md's estimate of the LNT bug in seed 003's code (not copied): ``results.append`` inside the
    trial loop and ``return`` inside the run loop make the score the mean of one run's running
    accuracies, mean_k c_k / k. Trials: right on 1-7, then wrong/right alternating (16 of 25 right).

    Text rule (App. E.2.1, what ``lnt_triangulating`` computes): 16 / 25 = 0.64. Their code:
    (1 x 7 + sum_{k=8..25} c_k / k) / 25 = 0.7985 (c_k = 7 + floor((k - 7) / 2))."""
    flags = [True] * 7 + [False, True] * 9
    running = [sum(flags[:k]) / k for k in range(1, 26)]
    assert running[7] == pytest.approx(7 / 8) and running[8] == pytest.approx(8 / 9)
    assert sum(running) / 25 == pytest.approx(0.7985, abs=1e-4)

    task = registry.get_task("lnt_triangulating")
    game = task.make_game(task.instances(SEED)[0], SEED)
    for k in range(25):
        game.next_request()
        right = lnt_answer(game.instance["trials"][game.trial]["sequence"], game.rule)
        wrong = {"vowel": "consonant", "consonant": "vowel", "even": "odd", "odd": "even"}[right]
        game.on_reply(right if flags[k] else wrong)
    assert game.scores()["accuracy"] == pytest.approx(16 / 25)
