"""WCST (Kennedy & Nowak 2024; protocol, metrics and sources: :mod:`multiturn.games.flexibility`).

A card "shape color number" and four options, each sharing exactly one dimension with the card except one that
shares none; answer 1-4. ``perseverative_errors`` is a simplified rule of our own (neither paper defines one;
Heaton's WCST manual scores perseveration with more conditions): a wrong answer, after a switch, that matches the
card on the previous rule. Parse rule (the reference's): "option N" anywhere, else the whole reply as an integer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from multiturn.game import Request
from multiturn.games.flexibility import IDEAL_LEARNER, N_TRIALS, FlexibilityTask, SwitchingGame, templates, theoretical_bound
from multiturn.registry import register

WCST_RULES: tuple[str, ...] = ("shape", "color", "number")

Card = tuple[str, str, int]


def wcst_options(card: Card, rng: random.Random, shapes: Sequence[str], colors: Sequence[str], numbers: Sequence[int]) -> list[Card]:
    """Four options: one shares only the shape, one only the color, one only the number, one nothing; shuffled."""
    shape, color, number = card
    other_shapes = rng.sample([s for s in shapes if s != shape], 3)
    other_colors = rng.sample([c for c in colors if c != color], 3)
    other_numbers = rng.sample([n for n in numbers if n != number], 3)
    options: list[Card] = [
        (shape, other_colors[0], other_numbers[0]),
        (other_shapes[0], color, other_numbers[1]),
        (other_shapes[1], other_colors[1], number),
        (other_shapes[2], other_colors[2], other_numbers[2]),
    ]
    rng.shuffle(options)
    return options


def wcst_run(rng: random.Random, n_trials: int = N_TRIALS) -> dict[str, Any]:
    """One run's stimuli: the first rule and ``n_trials`` cards with options, drawn from the
    reference's deck (64 cards x 5, shuffled)."""
    cfg = templates()["wcst"]
    deck = [(s, c, n) for s in cfg["shapes"] for c in cfg["colors"] for n in cfg["numbers"]] * 5
    rng.shuffle(deck)
    trials = [
        {"card": list(card), "options": [list(o) for o in wcst_options(card, rng, cfg["shapes"], cfg["colors"], cfg["numbers"])]}
        for card in deck[:n_trials]
    ]
    return {"first_rule": rng.choice(WCST_RULES), "trials": trials}


def format_card(card: Sequence[Any]) -> str:
    return templates()["wcst"]["card"].format(shape=card[0], color=card[1], number=card[2])


def wcst_prompt(trial: Mapping[str, Any]) -> str:
    cfg = templates()["wcst"]
    text = cfg["trial_header"].format(card=format_card(trial["card"]))
    for i, option in enumerate(trial["options"], 1):
        text += cfg["trial_option"].format(i=i, card=format_card(option))
    return text + cfg["trial_footer"]


def parse_wcst(reply: str) -> int | None:
    """0-based option index: "option N" anywhere, else the whole reply as an integer; None unless 1 <= N <= 4."""
    match = re.search(r"option\s?(\d+)", reply, re.IGNORECASE)
    if match:
        value = int(match.group(1))
    else:
        text = reply.strip()
        if not re.fullmatch(r"[+-]?\d{1,3}", text):
            return None
        value = int(text)
    return value - 1 if 1 <= value <= 4 else None


def wcst_correct(card: Sequence[Any], option: Sequence[Any], rule: str) -> bool:
    i = WCST_RULES.index(rule)
    return option[i] == card[i]


class WCSTGame(SwitchingGame):
    rules = WCST_RULES
    expected = "'option N' anywhere in the reply, or the whole reply a number, with N from 1 to 4"

    def __init__(self, instance: Mapping[str, Any], seed: int):
        super().__init__(instance, seed)
        self.previous_rule: str | None = None

    def system_prompt(self) -> str:
        return templates()["wcst"]["system_prompt"]

    def prompt(self, trial: Mapping[str, Any]) -> str:
        return wcst_prompt(trial)

    def judge(self, trial: Mapping[str, Any], reply: str) -> dict[str, Any]:
        choice = parse_wcst(reply)
        if choice is None:
            return {"parsed": None, "correct": False, "perseverative": False}
        option = trial["options"][choice]
        correct = wcst_correct(trial["card"], option, self.rule)
        perseverative = (not correct) and self.previous_rule is not None and wcst_correct(trial["card"], option, self.previous_rule)
        return {"parsed": choice + 1, "correct": correct, "perseverative": perseverative}

    def reading(self, entry: Mapping[str, Any]) -> str | None:
        if entry["parsed"] is None:
            return None
        option = self.instance["trials"][entry["trial"]]["options"][entry["parsed"] - 1]
        return f"option {entry['parsed']}: {' '.join(map(str, option))}"

    def next_rule(self) -> str:
        self.previous_rule = self.rule
        return self.rng.choice([r for r in WCST_RULES if r != self.rule])

    def scores(self) -> dict[str, float]:
        out = super().scores()
        out["perseverative_errors"] = float(sum(bool(t.get("perseverative")) for t in self.transcript))
        return out


class WCSTTask(FlexibilityTask):
    make_run = staticmethod(wcst_run)
    game_class = WCSTGame
    reference_levels = {IDEAL_LEARNER: theoretical_bound(len(WCST_RULES))}

    def chance_reply(self, request: Request, rng: random.Random) -> str:
        """One of the four options, blind to the rule."""
        return str(rng.randint(1, 4))

    def higher_is_better(self) -> dict[str, bool]:
        return {"accuracy": True, "accuracy_all_trials": True, "parse_rate": True, "perseverative_errors": False}


register("wcst")(WCSTTask)
