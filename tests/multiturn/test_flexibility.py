"""WCST and LNT (Kennedy & Nowak 2024): stimuli, rules, correct feedback, parse rules, metrics."""

from __future__ import annotations

import pytest

from multiturn import registry
from multiturn.engine import run_task, run_tasks
from multiturn.flexibility import (
    WCST_RULES,
    lnt_answer,
    parse_lnt,
    parse_wcst,
    templates,
    wcst_correct,
)
from multiturn.scripted import ScriptedLM

SEED = 1234


def shadow_oracle(task, seed: int = SEED, wrong_after_switch: bool = False):
    """A player that knows the hidden rule: it plays a shadow copy of each game with the true answers.

    With ``wrong_after_switch`` it keeps answering by the previous rule for one trial after each
    switch (a perseverative error)."""
    shadows = {}
    for inst in task.instances(seed):
        game = task.make_game(inst, seed)
        first = game.next_request().messages[1]["content"]
        shadows[first] = {"game": game, "last_switches": 0, "prev": None}

    def respond(messages):
        state = shadows[messages[1]["content"]]
        game = state["game"]
        request = game.next_request()
        assert request.messages == messages  # the shadow sees exactly what the player sees
        if game.awaiting_feedback_reply:
            reply = "OK"
        else:
            trial = game.instance["trials"][game.trial]
            rule = game.rule
            if wrong_after_switch and state["prev"] is not None and game.n_switches > state["last_switches"]:
                rule, state["last_switches"] = state["prev"], game.n_switches
            state["prev"] = game.rule if game.streak == 5 else state["prev"]
            if "card" in trial:
                idx = next(i for i, o in enumerate(trial["options"]) if wcst_correct(trial["card"], o, rule))
                reply = str(idx + 1)
            else:
                reply = lnt_answer(trial["sequence"], rule)
        game.on_reply(reply)
        return reply

    return respond


@pytest.mark.parametrize("name", ["wcst", "lnt"])
def test_a_player_that_knows_the_rule_scores_one_and_sees_switches(name):
    task = registry.get_task(name)
    summary = run_task(task, {"player": ScriptedLM(shadow_oracle(task))}, seed=SEED, progress=False, max_live=0)
    m = summary["metrics"]
    assert m["accuracy"] == 1.0 and m["parse_rate"] == 1.0
    assert summary["n_samples"]["effective"] == 8
    for record in summary["records"]:
        assert record["switches"] == 4  # 25 correct answers -> a switch after each 6
        feedback = [t["feedback"] for t in record["trials"]]
        assert feedback == ["Correct!"] * 25  # the reference would say "Incorrect!" after each 6th
    if name == "wcst":
        assert m["perseverative_errors"] == 0.0


def test_perseverative_errors_count_answers_by_the_previous_rule():
    task = registry.get_task("wcst")
    summary = run_task(task, {"player": ScriptedLM(shadow_oracle(task, wrong_after_switch=True))}, seed=SEED, limit=2, progress=False)
    for record in summary["records"]:
        errors = [t for t in record["trials"] if not t["correct"]]
        assert errors and all(t["perseverative"] for t in errors)
        assert record["scores"]["perseverative_errors"] == len(errors)


def test_history_holds_trial_reply_feedback_and_feedback_reply():
    seen = []

    def respond(messages):
        seen.append(messages)
        return "vowel"

    run_task(registry.get_task("lnt"), {"player": ScriptedLM(respond)}, limit=1, progress=False)
    assert len(seen) == 25 + 24  # 25 trials, a feedback turn after each but the last
    last = seen[-1]
    assert last[0] == {"role": "system", "content": templates()["lnt"]["system_prompt"]}
    assert [m["role"] for m in last[1:5]] == ["user", "assistant", "user", "assistant"]
    assert last[1]["content"].startswith("\nSequence: ") and last[3]["content"] in ("Correct!", "Incorrect!")


@pytest.mark.parametrize("name", ["wcst", "lnt"])
def test_garbage_gets_no_feedback_and_scores_zero(name):
    calls = []

    def respond(messages):
        calls.append(1)
        return "I am not sure what you mean."

    summary = run_task(registry.get_task(name), {"player": ScriptedLM(respond)}, limit=2, progress=False)
    assert summary["metrics"]["accuracy"] == 0.0 and summary["metrics"]["parse_rate"] == 0.0
    assert len(calls) == 2 * 25  # no feedback turns
    assert all(t["feedback"] is None for r in summary["records"] for t in r["trials"])


def test_always_dash_is_unparseable_for_both_tests():
    for name in ("wcst", "lnt"):
        summary = run_task(registry.get_task(name), {"player": ScriptedLM(lambda m: "-")}, limit=1, progress=False)
        assert summary["metrics"]["parse_rate"] == 0.0


def test_same_seed_same_stimuli_other_seed_other_stimuli():
    task = registry.get_task("wcst")
    assert task.instances(1) == task.instances(1)
    assert task.instances(1) != task.instances(2)
    assert len(task.instances(1)) == 8 and all(len(i["trials"]) == 25 for i in task.instances(1))


def test_wcst_options_share_exactly_one_dimension_but_one():
    for inst in registry.get_task("wcst").instances(7):
        for trial in inst["trials"]:
            shared = sorted(sum(a == b for a, b in zip(o, trial["card"])) for o in trial["options"])
            assert shared == [0, 1, 1, 1]
            for rule in WCST_RULES:
                assert sum(wcst_correct(trial["card"], o, rule) for o in trial["options"]) == 1


def test_parse_rules():
    assert parse_wcst("3") == 2 and parse_wcst("Option 4") == 3 and parse_wcst("I pick option2.") == 1
    assert parse_wcst("5") is None and parse_wcst("0") is None and parse_wcst("three") is None
    assert parse_lnt("Consonant.") == "consonant" and parse_lnt("odd") == "odd"
    assert parse_lnt("yes") is None
    assert lnt_answer("y4", "letter") == "consonant" and lnt_answer("E3", "letter") == "vowel"
    assert lnt_answer("E3", "number") == "odd"


def test_group_cognitive_flexibility_is_the_mean_of_the_two_accuracies(tmp_path):
    def respond(messages):  # right on every LNT letter-task trial, wrong on every WCST trial
        return "vowel" if "Sequence" in messages[1]["content"] else "9"

    payload, path = run_tasks(["cognitive_flexibility"], {"player": ScriptedLM(respond)}, output_dir=tmp_path, model_name="m", limit=2, progress=False)
    acc_w = payload["results"]["wcst"]["accuracy,none"]
    acc_l = payload["results"]["lnt"]["accuracy,none"]
    assert payload["groups"]["cognitive_flexibility"]["accuracy,none"] == pytest.approx((acc_w + acc_l) / 2)
    assert payload["groups"]["cognitive_flexibility"]["cognitive_flexibility,none"] == pytest.approx((acc_w + acc_l) / 2)
    assert acc_l > 0 and acc_w == 0
    assert "perseverative_errors,none" not in payload["groups"]["cognitive_flexibility"]
    assert path.is_file()
