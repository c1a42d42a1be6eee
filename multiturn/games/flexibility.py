"""Cognitive flexibility: WCST and the Letter-Number Test (Kennedy & Nowak, ICML 2024 LLMs & Cognition WS).

Protocol (the authors' code; prompts and formats kept exact in ``templates/kennedy_nowak_2024.json``):
8 runs x 25 trials, temperature 0.7, one chat per run. Each trial is a user message; the model's
reply is kept; when it parses, the feedback ("Correct!" / "Incorrect!") goes out as its own user
message and the model's answer to it stays in the history too (the reference sends the feedback
through the same chat call). After 6 consecutive correct answers the rule switches without notice
(WCST: to one of the two other dimensions at random; LNT: to the other task).

- WCST (:mod:`multiturn.games.wcst`): a card "shape color number" and four options; answer 1-4.
- LNT (:mod:`multiturn.games.lnt`): a letter and a digit; answer vowel/consonant or even/odd.

This module holds what both tests share: the protocol (:class:`SwitchingGame`, :class:`FlexibilityTask`), the
reference's templates, the theoretical bound and the group ``cognitive_flexibility``.

Parse rules (the reference's): WCST takes "option N" anywhere, else the whole reply as an integer;
LNT takes the first of vowel|consonant|even|odd found in the lower-cased reply. An unparseable
reply (or a WCST number outside 1-4) gets no feedback and leaves the streak unchanged.

Metrics per run, averaged over the 8 runs (seed 003, App. E.2.1: "we ran each subtask 8 times with
25 trials each, and computed the average of the accuracy obtained in each run. In this case, the
accuracy was computed only on the trials for which response parsing was successful"):
``accuracy`` = correct / parsed trials (NaN for a run with no parsed trial; such runs are left out of
the mean, and the task's accuracy is NaN when no run parsed anything); ``accuracy_all_trials`` =
correct / 25 (our extra: unparsed trials count as wrong, i.e. parse rate x accuracy);
``parse_rate`` = parsed / 25. Kennedy & Nowak's theoretical bound (their analysis code,
``calculate_bounds``: required successes / (required successes + rules - 1)) is the accuracy of a
player that needs one error per wrong rule to find the new rule after each switch: 6/8 = 0.75 for
WCST (3 rules), 6/7 = 0.857 for LNT (2 tasks); each task's config reports it as ``theoretical_bound``.

Differences from the reference, on purpose: feedback is always right (the reference's WCST checks
the answer after switching the rule, so it sends "Incorrect!" after every 6th correct answer);
no feedback turn follows the 25th trial (its reply cannot change any score).

``cognitive_flexibility`` (Triangulating paper, seed 003 App. E.2.1: "We then averaged the accuracy
obtained on both subtasks to compute the final score") = mean of the two parsed-only accuracies: run
the group ``--tasks cognitive_flexibility``; the results JSON's ``groups.cognitive_flexibility``
entry holds it as ``cognitive_flexibility,none`` (and, as every group mean, ``accuracy,none``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from multiturn.game import EpisodeSummary, Game, Request, TaskSpec, TurnView
from multiturn.registry import register_group

N_RUNS = 8
N_TRIALS = 25
SWITCH_AFTER = 6
GEN_KWARGS: dict[str, Any] = {"temperature": 0.7, "do_sample": True, "max_gen_toks": 100}
TEMPLATE_FILE = Path(__file__).with_name("templates") / "kennedy_nowak_2024.json"
#: the report's label for :func:`theoretical_bound`: a player that errs once per wrong rule after each switch
#: (close to a ceiling, not a chance level: the rule-blind random player scores about 1/4 on WCST)
IDEAL_LEARNER = "ideal learner (Kennedy & Nowak 2024)"


@lru_cache(maxsize=1)
def templates() -> dict[str, Any]:
    """Prompts, formats and feedback strings of the reference implementation (source named inside)."""
    return json.loads(TEMPLATE_FILE.read_text(encoding="utf-8"))


def theoretical_bound(n_rules: int, required_successes: int = SWITCH_AFTER) -> float:
    """Kennedy & Nowak's worst-case bound for a player that learns each switch from feedback alone:
    ``required_successes / (required_successes + n_rules - 1)`` (their ``calculate_bounds``):
    WCST (3 rules) 6/8 = 0.75, LNT (2 tasks) 6/7 = 0.857."""
    return required_successes / (required_successes + n_rules - 1)


# ---------------------------------------------------------------- the games


class SwitchingGame(Game):
    """Shared loop: trial turn, then (if the reply parsed) a feedback turn; rule switch after 6 in a row."""

    rules: tuple[str, ...] = ()

    def __init__(self, instance: Mapping[str, Any], seed: int):
        super().__init__(instance)
        self.rng = random.Random(f"{seed}:{instance['id']}:switch")
        self.rule: str = instance["first_rule"]
        self.history: list[dict[str, str]] = [{"role": "system", "content": self.system_prompt()}]
        self.trial = 0
        self.streak = 0
        self.pending_feedback: str | None = None
        self.awaiting_feedback_reply = False
        self.n_switches = 0

    # -- per-test hooks
    def system_prompt(self) -> str:
        raise NotImplementedError

    def prompt(self, trial: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def judge(self, trial: Mapping[str, Any], reply: str) -> dict[str, Any]:
        """{'parsed': ..., 'correct': bool | None} for one reply under ``self.rule``."""
        raise NotImplementedError

    def next_rule(self) -> str:
        raise NotImplementedError

    # -- the loop
    @property
    def n_trials(self) -> int:
        return len(self.instance["trials"])

    @property
    def done(self) -> bool:
        return self.trial >= self.n_trials and not self.awaiting_feedback_reply

    def next_request(self) -> Request | None:
        if self.done:
            return None
        if self.awaiting_feedback_reply:
            if self.history[-1]["role"] != "user":
                self.history.append({"role": "user", "content": self.pending_feedback or ""})
        elif self.history[-1]["role"] != "user":
            self.history.append({"role": "user", "content": self.prompt(self.instance["trials"][self.trial])})
        return Request(messages=list(self.history))

    def on_reply(self, reply: str) -> None:
        self.history.append({"role": "assistant", "content": reply})
        if self.awaiting_feedback_reply:
            self.awaiting_feedback_reply = False
            self.transcript[-1]["feedback_reply"] = reply
            return
        entry = self.score_trial(reply)
        self.awaiting_feedback_reply = entry["feedback"] is not None and self.trial < self.n_trials

    def score_trial(self, reply: str) -> dict[str, Any]:
        """Judge the reply to the current trial, set the feedback (None when it did not parse), move the
        streak and the rule, append the transcript entry and go to the next trial; returns the entry."""
        trial = self.instance["trials"][self.trial]
        verdict = self.judge(trial, reply)
        entry = {"trial": self.trial, "rule": self.rule, "response": reply, **verdict, "feedback": None}
        if verdict["parsed"] is not None:
            fb = templates()["feedback"]
            self.pending_feedback = fb["correct"] if verdict["correct"] else fb["incorrect"]
            entry["feedback"] = self.pending_feedback
            self.streak = self.streak + 1 if verdict["correct"] else 0
            if self.streak == SWITCH_AFTER:
                self.rule = self.next_rule()
                self.streak = 0
                self.n_switches += 1
        self.transcript.append(entry)
        self.trial += 1
        return entry

    def scores(self) -> dict[str, float]:
        """Seed 003 App. E.2.1: "the accuracy was computed only on the trials for which response parsing
        was successful" -> ``accuracy`` = correct / parsed (NaN when nothing parsed);
        ``accuracy_all_trials`` = correct / all trials (ours); ``parse_rate`` = parsed / all trials."""
        n = self.n_trials
        correct = sum(bool(t["correct"]) for t in self.transcript)
        parsed = sum(t["parsed"] is not None for t in self.transcript)
        return {
            "accuracy": correct / parsed if parsed else float("nan"),
            "accuracy_all_trials": correct / n,
            "parse_rate": parsed / n,
        }

    def reply_view(self, request: Request, reply: str) -> TurnView:
        t = self.transcript[-1]
        if request.messages[-1]["content"] == t.get("feedback") and t.get("feedback_reply") == reply:
            return TurnView(request.role, reply, why="reply to the feedback (not scored)")
        why = f"trial {t['trial'] + 1}, hidden rule: {t['rule']}"
        if t["parsed"] is None:
            why = f"unparsed: the parser expects {self.expected}; {why}"
        if t.get("perseverative"):
            why += "; perseverative error (matches the previous rule)"
        return TurnView(request.role, reply, reading=self.reading(t), verdict=bool(t["correct"]), why=why)

    #: what the parse rule accepts, said to the reader of an unparsed reply
    expected: str = ""

    def reading(self, entry: Mapping[str, Any]) -> str | None:
        return None if entry["parsed"] is None else str(entry["parsed"])

    def record(self) -> dict[str, Any]:
        return {
            "switches": self.n_switches,
            "trials": [{k: v for k, v in t.items() if k not in ("response", "feedback_reply")} for t in self.transcript],
        }


class FlexibilityTask(TaskSpec):
    gen_kwargs = dict(GEN_KWARGS)
    version = 1.0
    #: one run's stimuli from its seeded ``random.Random`` (each test sets its own)
    make_run: Callable[[random.Random], dict[str, Any]]
    game_class: type[SwitchingGame]

    def instances(self, seed: int) -> list[dict[str, Any]]:
        """8 runs; run r's stimuli come from ``Random(f"{seed}:{name}:{r}")`` (same seed, same stimuli)."""
        out = []
        for r in range(N_RUNS):
            rng = random.Random(f"{seed}:{self.name}:{r}")
            out.append({"id": f"{self.name}_run{r}", "run": r, **self.make_run(rng)})
        return out

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return self.game_class(instance, seed)

    def summary(self, record: Mapping[str, Any]) -> EpisodeSummary:
        trials = list(record.get("trials") or record.get("transcript") or [])
        right = sum(bool(t.get("correct")) for t in trials)
        why = (
            f"{right} of {len(trials)} choices followed the hidden rule; the rule switched {record.get('switches', 0)} times "
            f"(after {SWITCH_AFTER} correct answers in a row). Accuracy counts parsed replies only."
        )
        first = str((record.get("instance") or {}).get("first_rule", ""))
        rules = list(dict.fromkeys(str(t["rule"]) for t in trials if t.get("rule")))  # the hidden rules in the order played
        target = f"first rule: {first}" + (f"; rules in play: {', '.join(rules)}" if rules else "")
        return EpisodeSummary(why, [("first rule", first)], "the run", target=target)

    def config(self) -> dict[str, Any]:
        cfg = super().config()
        cfg.update(
            runs=N_RUNS,
            trials=N_TRIALS,
            switch_after=SWITCH_AFTER,
            theoretical_bound=theoretical_bound(len(self.game_class.rules)),
            source=templates()["source"],
        )
        return cfg


def cognitive_flexibility(member_metrics: Mapping[str, Mapping[str, float]], members: Sequence[str] = ("wcst", "lnt")) -> dict[str, float]:
    """Seed 003 App. E.2.1: "the accuracy was computed only on the trials for which response parsing
    was successful. We then averaged the accuracy obtained on both subtasks to compute the final
    score" -> the mean of the WCST and LNT (``members``) parsed-only ``accuracy`` values."""
    accuracies = [member_metrics.get(task, {}).get("accuracy", float("nan")) for task in members]
    return {"cognitive_flexibility": sum(accuracies) / 2}  # NaN unless both tests were scored


register_group("cognitive_flexibility", ["wcst", "lnt"], aggregate=cognitive_flexibility)
