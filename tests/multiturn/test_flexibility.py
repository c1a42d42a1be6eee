"""WCST and LNT (Kennedy & Nowak 2024): stimuli, rules, correct feedback, parse rules, metrics."""

from __future__ import annotations

import math

import pytest

from models.scripted import ScriptedLM
from multiturn import registry
from multiturn.engine.runner import run_task, run_tasks
from multiturn.engine.settings import TaskSettings
from multiturn.games import flexibility, wcst
from multiturn.games.flexibility import templates
from multiturn.games.lnt import lnt_answer, lnt_prompt, parse_lnt
from multiturn.games.wcst import WCST_RULES, parse_wcst, wcst_correct
from tests.support.play_settings import play_settings

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
    summary = run_task(TaskSettings(task, seed=SEED, max_live=0), {"player": ScriptedLM(shadow_oracle(task))}, progress=False)
    m = summary["metrics"]
    assert m["accuracy"] == 1.0 and m["accuracy_all_trials"] == 1.0 and m["parse_rate"] == 1.0
    assert summary["n_samples"]["effective"] == 8
    for record in summary["records"]:
        assert record["switches"] == 4  # 25 correct answers -> a switch after each 6
        feedback = [t["feedback"] for t in record["trials"]]
        assert feedback == ["Correct!"] * 25  # the reference would say "Incorrect!" after each 6th
    if name == "wcst":
        assert m["perseverative_errors"] == 0.0


def test_perseverative_errors_count_answers_by_the_previous_rule():
    task = registry.get_task("wcst")
    summary = run_task(
        TaskSettings(task, seed=SEED, limit=2), {"player": ScriptedLM(shadow_oracle(task, wrong_after_switch=True))}, progress=False
    )
    for record in summary["records"]:
        errors = [t for t in record["trials"] if not t["correct"]]
        assert errors and all(t["perseverative"] for t in errors)
        assert record["scores"]["perseverative_errors"] == len(errors)


def test_history_holds_trial_reply_feedback_and_feedback_reply():
    seen = []

    def respond(messages):
        seen.append(messages)
        return "vowel"

    run_task(TaskSettings(registry.get_task("lnt"), limit=1), {"player": ScriptedLM(respond)}, progress=False)
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

    summary = run_task(TaskSettings(registry.get_task(name), limit=2), {"player": ScriptedLM(respond)}, progress=False)
    # Nothing parsed: the parsed-only accuracy (seed 003 App. E.2.1) has no trials -> NaN.
    assert math.isnan(summary["metrics"]["accuracy"]) and summary["metrics"]["parse_rate"] == 0.0
    assert summary["metrics"]["accuracy_all_trials"] == 0.0
    assert len(calls) == 2 * 25  # no feedback turns
    assert all(t["feedback"] is None for r in summary["records"] for t in r["trials"])


def test_always_dash_is_unparseable_for_both_tests():
    for name in ("wcst", "lnt"):
        summary = run_task(TaskSettings(registry.get_task(name), limit=1), {"player": ScriptedLM(lambda m: "-")}, progress=False)
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
    def respond(messages):  # LNT: always "vowel"; WCST: "1" on the first 5 trials, then unparseable
        if "Sequence" in messages[1]["content"]:
            return "vowel"
        return "1" if sum(m["content"].startswith("\nNew Card") for m in messages) <= 5 else "9"

    payload, path = run_tasks(
        play_settings(["cognitive_flexibility"], output_dir=tmp_path, limit=2), {"player": ScriptedLM(respond)}, progress=False
    )
    acc_w = payload["results"]["wcst"]["accuracy,none"]
    acc_l = payload["results"]["lnt"]["accuracy,none"]
    all_w = payload["results"]["wcst"]["accuracy_all_trials,none"]
    assert payload["results"]["wcst"]["parse_rate,none"] == pytest.approx(5 / 25)
    assert all_w == pytest.approx(acc_w * 5 / 25)  # all-trials rate = parse rate x parsed-only accuracy
    assert payload["groups"]["cognitive_flexibility"]["accuracy,none"] == pytest.approx((acc_w + acc_l) / 2)
    assert payload["groups"]["cognitive_flexibility"]["cognitive_flexibility,none"] == pytest.approx((acc_w + acc_l) / 2)
    assert payload["configs"]["wcst"]["theoretical_bound"] == 0.75
    assert acc_l > 0
    assert "perseverative_errors,none" not in payload["groups"]["cognitive_flexibility"]
    assert path.is_file()


def test_accuracy_counts_parsed_trials_only_and_averages_runs():
    """Seed 003 App. E.2.1: "computed the average of the accuracy obtained in each run. In this case,
    the accuracy was computed only on the trials for which response parsing was successful".

    LNT, 2 runs of 25 trials; on trials 0-9 the player answers by the run's first task (right on
    the first 6 trials, then right only by chance after the silent switch), garbage on trials 10-24.
    Per run, c correct of 10 parsed (c >= 6): accuracy = c / 10, accuracy_all_trials = c / 25,
    parse_rate = 10 / 25.  The task values are the means over the two runs."""
    task = registry.get_task("lnt")
    first_rule = {lnt_prompt(i["trials"][0]): i["first_rule"] for i in task.instances(SEED)}

    def respond(messages):
        trials = [m["content"] for m in messages if m["role"] == "user" and m["content"].startswith("\nSequence: ")]
        if messages[-1]["content"] != trials[-1] or len(trials) > 10:
            return "no idea"
        return lnt_answer(trials[-1].split("Sequence: ")[1][:2], first_rule[trials[0]])

    summary = run_task(TaskSettings(task, seed=SEED, limit=2), {"player": ScriptedLM(respond)}, progress=False)
    per_run = []
    for record in summary["records"]:
        trials = record["trials"]
        assert [t["parsed"] is not None for t in trials] == [True] * 10 + [False] * 15
        correct = sum(t["correct"] for t in trials)  # c, counted from the trial records
        assert correct >= 6
        per_run.append(correct)
        assert record["scores"]["accuracy"] == pytest.approx(correct / 10)
        assert record["scores"]["accuracy_all_trials"] == pytest.approx(correct / 25)
        assert record["scores"]["parse_rate"] == pytest.approx(10 / 25)
    m = summary["metrics"]
    assert m["accuracy"] == pytest.approx(sum(c / 10 for c in per_run) / 2)
    assert m["accuracy_all_trials"] == pytest.approx(sum(c / 25 for c in per_run) / 2)
    assert m["accuracy"] > m["accuracy_all_trials"]  # the all-trials rate = parse rate x accuracy


def test_hand_made_run_scores():
    """One WCST run scored by hand: 4 trials, replies right, wrong, unparseable, right.

    parsed = 3, correct = 2 -> accuracy = 2/3 (parsed-only), accuracy_all_trials = 2/4 = 0.5,
    parse_rate = 3/4."""
    instance = registry.get_task("wcst").instances(SEED)[0]
    game = wcst.WCSTGame({**instance, "trials": instance["trials"][:4]}, SEED)
    for k in range(4):
        if game.awaiting_feedback_reply:
            game.next_request()
            game.on_reply("OK")
        game.next_request()
        trial = game.instance["trials"][game.trial]
        right = next(i for i, o in enumerate(trial["options"]) if wcst_correct(trial["card"], o, game.rule))
        game.on_reply([str(right + 1), str((right + 1) % 4 + 1), "pass", str(right + 1)][k])
    assert game.done
    scores = game.scores()
    assert scores["accuracy"] == pytest.approx(2 / 3)
    assert scores["accuracy_all_trials"] == pytest.approx(0.5)
    assert scores["parse_rate"] == pytest.approx(0.75)


def test_cognitive_flexibility_is_the_mean_of_the_parsed_only_accuracies():
    """Seed 003 App. E.2.1: "We then averaged the accuracy obtained on both subtasks".

    WCST parsed-only accuracy 0.6, LNT 0.9 -> (0.6 + 0.9) / 2 = 0.75; the all-trials rates are not used.
    A subtask with no parsed trial (NaN) leaves the score undefined (NaN)."""
    got = flexibility.cognitive_flexibility(
        {"wcst": {"accuracy": 0.6, "accuracy_all_trials": 0.1}, "lnt": {"accuracy": 0.9, "accuracy_all_trials": 0.2}}
    )
    assert got["cognitive_flexibility"] == pytest.approx(0.75)
    assert math.isnan(
        flexibility.cognitive_flexibility({"wcst": {"accuracy": 0.6}, "lnt": {"accuracy": float("nan")}})["cognitive_flexibility"]
    )


def test_theoretical_bounds_as_kennedy_and_nowak_state_them():
    """Kennedy & Nowak's bound: 6 required successes / (6 + rules - 1): WCST 6/(6+2) = 0.75,
    LNT 6/(6+1) = 0.857 (to 3 places); each task's config reports it."""
    assert flexibility.theoretical_bound(3) == 0.75
    assert round(flexibility.theoretical_bound(2), 3) == 0.857
    assert registry.get_task("wcst").config()["theoretical_bound"] == 0.75
    assert registry.get_task("lnt").config()["theoretical_bound"] == pytest.approx(6 / 7)
