"""``random``: the chance reference player, an lm-eval model that answers every prompt with a random
well-formed reply (``--model random``, ``--model_args seed=N``).

It reads the prompt only to pick the reply's *form*, never its content: a random ``m``/``-`` for
n-back, a random option 1-4 for WCST, a random vowel/consonant/even/odd for LNT, a random legal
Wordle word, four random remaining words for interactive Connections / GlobalGroup, a random
partition of the pool for the static GlobalGroup and Connections tasks, a random ``Answer: first|
second|third`` for the reference game, random yes/no for probes and judges, and the form each
clembench role asks for otherwise. Its scores are what a model that follows every format but
knows nothing would get, so the report shows its row as "chance".

Where it lives: a model backend, like :mod:`multiturn.backends.scripted`, so ``triangulate play`` loads it
through lm-eval's registry (``register_model("random")`` at import; :mod:`multiturn.backends.loading` imports
this module), and ``triangulate eval`` (:mod:`triangulation.cli.eval`, the top layer) imports it
before handing over to lm-eval's CLI, so ``triangulate eval --model random`` scores the static
tasks. ``lm_eval_tasks`` never needs to import it (the harness instantiates models by name).

Every reply depends only on the seed and the request's text (a hash of both), so a run is
reproducible whatever the batch order.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

import lm_eval.models  # noqa: F401  (lm-eval fills its registry lazily, only while it is empty: fill it first)
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

from plumbing.errors import UserError

NAME = "random"
FILLER = ("thing", "place", "often", "small", "people", "use", "common", "kind", "make", "found")
LIST_LITERAL = re.compile(r"\[([^\[\]]+)\]")


def messages_of(context: str) -> list[dict[str, str]]:
    """The chat history a request carries: the JSON our ``apply_chat_template`` wrote, else one user message."""
    try:
        value = json.loads(context)
    except (json.JSONDecodeError, TypeError):
        return [{"role": "user", "content": str(context)}]
    if isinstance(value, list) and all(isinstance(m, dict) and "content" in m for m in value):
        return [{"role": str(m.get("role", "user")), "content": str(m["content"])} for m in value]
    return [{"role": "user", "content": str(context)}]


def split_list(body: str) -> list[str]:
    return [w.strip().strip("'\"‘’“”").strip() for w in body.split(",") if w.strip().strip("'\"‘’“”").strip()]


def last_list(text: str, min_items: int = 4) -> list[str]:
    """The last ``[...]`` list in ``text`` with at least ``min_items`` items (a word pool), else []."""
    for body in reversed(LIST_LITERAL.findall(text)):
        items = split_list(body)
        if len(items) >= min_items:
            return items
    return []


def group_shape(text: str, n_words: int) -> tuple[int, int]:
    """(groups, words per group): the first two numbers after the pool whose product is the pool size,
    else groups of 4 (or 2 when 4 does not divide it)."""
    tail = text[text.rfind("]") + 1 :] if "]" in text else text
    numbers = [int(n) for n in re.findall(r"\d+", tail)][:4]
    for a, b in zip(numbers, numbers[1:]):
        if a * b == n_words and a > 1 and b > 1:
            return a, b
    size = 4 if n_words % 4 == 0 else 2 if n_words % 2 == 0 else n_words
    return max(1, n_words // size), size


def random_partition(words: list[str], rng: random.Random, n_groups: int, size: int) -> list[list[str]]:
    shuffled = list(words)
    rng.shuffle(shuffled)
    return [shuffled[i * size : (i + 1) * size] for i in range(n_groups)]


def random_grid(rng: random.Random, rows: int = 5, cols: int = 5) -> str:
    return "\n".join(" ".join(rng.choice("X▢▢▢") for _ in range(cols)) for _ in range(rows))


def reply_for(messages: list[dict[str, str]], rng: random.Random) -> str:
    """A random reply of the form the conversation asks for (see the module docstring)."""
    system = " ".join(m["content"] for m in messages if m["role"] == "system")
    first = next((m["content"] for m in messages if m["role"] != "system"), "")
    last = messages[-1]["content"] if messages else ""
    everything = system + "\n" + first
    if "respond with 'm'" in everything or "-back task" in everything:
        return rng.choice(["m", "-"])
    if "card matching exercise" in everything or "Choose the correct option (1-4)" in last:
        return str(rng.randint(1, 4))
    if "sequence classification exercise" in everything:
        return rng.choice(["vowel", "consonant", "even", "odd"])
    if "GUESS: [" in first:  # interactive Connections / GlobalGroup: four random remaining words
        size = int(m.group(1)) if (m := re.search(r"groups of (\d+) words", first)) else 4
        pool = []
        for msg in reversed(messages):
            if msg["role"] == "user":
                found = re.search(r"(?:Remaining words|Words):\s*\[([^\]]*)\]", msg["content"])
                if found:
                    pool = split_list(found.group(1))
                    break
        pick = rng.sample(pool, min(size, len(pool))) if pool else []
        return f"GUESS: [{', '.join(pick)}]"
    if "agreement" in first.lower() and "Welcome to Wordle" not in first:  # Wordle's critic
        return f"agreement: {rng.choice(['yes', 'no'])}\nexplanation: a random opinion"
    if "Welcome to Wordle" in first or "guess_feedback" in everything:
        return f"guess: {rng.choice(wordle_words())}\nexplanation: a random legal word"
    if "reply in the form: CLUE:" in first:  # taboo, describer
        return "CLUE: " + " ".join(rng.sample(FILLER, 3))
    if "GUESS:" in first and "CLUE:" in first:  # taboo, guesser
        return f"GUESS: {rng.choice(wordle_words())}"
    if "Answer this question with yes or no" in last or "ASIDE:" in last:
        return f"ASIDE: {rng.choice(['yes', 'no'])}"
    if "ANSWER:" in everything:  # privateshared: a random slot answer
        return "ANSWER: " + rng.choice(FILLER)
    if 'tag "Answer: "' in last:  # referencegame, guesser
        return "Answer: " + rng.choice(["first", "second", "third"])
    if 'tag "Expression: "' in last:  # referencegame, describer
        return "Expression: the grid with " + rng.choice(["more", "fewer", "the most", "no"]) + " X"
    if "return only the grid" in first:  # imagegame, drawer
        return random_grid(rng)
    if "What is your next instruction?" in last:  # imagegame, describer: a random cell, sometimes DONE
        if len(messages) > 6 and rng.random() < 0.3:
            return "Instruction: DONE"
        return f"Instruction: Put an {rng.choice('XYZ')} in row {rng.randint(1, 5)} column {rng.randint(1, 5)}"
    if "You are the judge" in first:  # SPLAT's judge
        return rng.choice(["Yes", "No", "Irrelevant"])
    if "situation puzzle" in first.lower():  # SPLAT's player: a yes/no question about a word of the story
        words = re.findall(r"[A-Za-z]{4,}", first[-400:]) or list(FILLER)  # words of the puzzle's story
        return f"Is it about the {rng.choice(words).lower()}?"
    pool = last_list(last)
    if pool:  # a static grouping task: a random partition of the pool
        n_groups, size = group_shape(last, len(pool))
        groups = random_partition(pool, rng, n_groups, size)
        return "\n".join(f"Group {i + 1}: [{', '.join(g)}]" for i, g in enumerate(groups))
    words = re.findall(r"\w+", last) or list(FILLER)
    return " ".join(rng.choice(words) for _ in range(3))


_WORDLE: list[str] = []


def wordle_words() -> list[str]:
    """The legal Wordle words (clembench's recognised list, carried by the built ``clembench`` dataset's
    Wordle rows), sorted so the seed decides the choice."""
    if not _WORDLE:
        from datasets_build.clembench import load_clembench

        _WORDLE.extend(sorted(load_clembench("wordle")[0]["english_words"]))
    return _WORDLE


@register_model(NAME)
class RandomLM(LM):
    """Random well-formed replies (``generate_until``) and random log-likelihoods (multiple choice)."""

    #: what lm-eval and play pass to every backend besides its model_args
    RUNNER_KEYS = frozenset({"batch_size", "max_batch_size", "device"})

    def __init__(self, seed: int = 1234, **kwargs: Any):
        """``seed`` is the only model_arg; an unknown one or a seed that is not an integer is a one-line error."""
        super().__init__()
        unknown = sorted(set(kwargs) - self.RUNNER_KEYS)
        if unknown:
            raise UserError(f"--model random takes only model_args seed=N, not {', '.join(unknown)}")
        try:
            self.seed = int(seed)
        except (TypeError, ValueError):
            raise UserError(f"--model random: model_args seed must be an integer, got {seed!r}") from None

    @property
    def tokenizer_name(self) -> str:
        return NAME

    def apply_chat_template(self, chat_history: list[dict], add_generation_prompt: bool = True) -> str:
        return json.dumps(chat_history, ensure_ascii=False)

    def _rng(self, context: str) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}\0{context}".encode("utf-8", "replace")).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        return [reply_for(messages_of(req.args[0]), self._rng(req.args[0])) for req in requests]

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        return [(-self._rng(json.dumps(req.args, default=str)).random() * 10, False) for req in requests]

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
        return [-self._rng(json.dumps(req.args, default=str)).random() * 100 for req in requests]
