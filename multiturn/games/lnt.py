"""The Letter-Number Test (Kennedy & Nowak 2024; protocol, metrics and sources: :mod:`multiturn.games.flexibility`).

A letter (a-z, A-Z) and a digit; answer vowel/consonant while the letter task holds, even/odd while the number
task holds. Parse rule (the reference's): the first of vowel|consonant|even|odd found in the lower-cased reply.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping
from typing import Any

from multiturn.game import Request
from multiturn.games.flexibility import IDEAL_LEARNER, N_TRIALS, FlexibilityTask, SwitchingGame, templates, theoretical_bound
from multiturn.registry import register

LNT_TASKS: tuple[str, ...] = ("letter", "number")


def lnt_run(rng: random.Random, n_trials: int = N_TRIALS) -> dict[str, Any]:
    """One run's stimuli: the first task and ``n_trials`` letter+digit sequences (reference: any ASCII letter, 0-9)."""
    sequences = [f"{rng.choice(string.ascii_letters)}{rng.randint(0, 9)}" for _ in range(n_trials)]
    return {"first_rule": rng.choice(LNT_TASKS), "trials": [{"sequence": s} for s in sequences]}


def lnt_prompt(trial: Mapping[str, Any]) -> str:
    return templates()["lnt"]["trial"].format(sequence=trial["sequence"])


def parse_lnt(reply: str) -> str | None:
    """The first of vowel / consonant / even / odd in the lower-cased reply (substring match, as the reference)."""
    match = re.search(r"vowel|consonant|even|odd", reply.lower())
    return match.group(0) if match else None


def lnt_answer(sequence: str, task: str) -> str:
    """The right answer for a sequence under a task ('y' is a consonant)."""
    if task == "letter":
        return "vowel" if sequence[0].lower() in "aeiou" else "consonant"
    return "even" if int(sequence[1]) % 2 == 0 else "odd"


class LNTGame(SwitchingGame):
    rules = LNT_TASKS
    expected = "one of the words vowel, consonant, even, odd in the reply"

    def system_prompt(self) -> str:
        return templates()["lnt"]["system_prompt"]

    def prompt(self, trial: Mapping[str, Any]) -> str:
        return lnt_prompt(trial)

    def judge(self, trial: Mapping[str, Any], reply: str) -> dict[str, Any]:
        answer = parse_lnt(reply)
        if answer is None:
            return {"parsed": None, "correct": False}
        return {"parsed": answer, "correct": answer == lnt_answer(trial["sequence"], self.rule)}

    def next_rule(self) -> str:
        return "number" if self.rule == "letter" else "letter"


class LNTTask(FlexibilityTask):
    make_run = staticmethod(lnt_run)
    game_class = LNTGame
    reference_levels = {IDEAL_LEARNER: theoretical_bound(len(LNT_TASKS))}

    def chance_reply(self, request: Request, rng: random.Random) -> str:
        """One of the four answers, blind to the task and the sequence."""
        return rng.choice(["vowel", "consonant", "even", "odd"])

    def higher_is_better(self) -> dict[str, bool]:
        return {"accuracy": True, "accuracy_all_trials": True, "parse_rate": True}


register("lnt")(LNTTask)
