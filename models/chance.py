"""``random``: the chance reference player, an lm-eval model that answers every prompt with a random
well-formed reply (``--model random``, ``--model_args seed=N``).

It reads the prompt only to pick the reply's *form*, never its content. The form belongs to the
game: every request of ``triangulate play`` carries its task's name (lm-eval's ``Instance.task_name``)
and role (``Instance.doc["role"]``), and the task's ``TaskSpec.chance_reply(request, rng)`` (reached through
:mod:`models.forms`, which the side runner's task registry fills) says what a
player that follows the format and knows nothing would answer (each game module defines its own).
Requests of no play task (lm-eval's static tasks under ``triangulate eval``), and requests a game
gives no form for, get a generic reply: a random partition of the last word list in the prompt
(the static grouping tasks), else three random words of the prompt. Its scores are what a model that
follows every format but knows nothing would get, so the report shows its row as "chance".

Where it lives: a model backend, like :mod:`models.scripted`, so ``triangulate play`` loads it
through lm-eval's registry (``register_model("random")`` at import; :mod:`models.loading` imports
this module), and ``triangulate eval`` (:mod:`triangulation.cli.eval`, the top layer) imports it
before handing over to lm-eval's CLI, so ``triangulate eval --model random`` scores the static
tasks. ``lm_eval_tasks`` never needs to import it (the harness instantiates models by name).

Every reply depends only on the seed, the task, the role and the request's text (a hash of the seed
and the text), so a run is reproducible whatever the batch order.
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

from models.forms import CHANCE_MODEL, CHANCE_WORDS, reply_form_for
from plumbing.checks import DEFAULT_SEED
from plumbing.errors import UserError

NAME = CHANCE_MODEL
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


def reply_for(messages: list[dict[str, str]], rng: random.Random, task: str | None = None, role: str | None = None) -> str:
    """A random reply of the form the task's game asks for (a registered :mod:`models.forms` form), else the generic one."""
    reply = reply_form_for(task, role, messages, rng)
    return generic_reply(messages, rng) if reply is None else reply


def generic_reply(messages: list[dict[str, str]], rng: random.Random) -> str:
    """A random partition of the last word list of the last message (a static grouping task), else three
    random words of that message."""
    last = messages[-1]["content"] if messages else ""
    pool = last_list(last)
    if pool:
        n_groups, size = group_shape(last, len(pool))
        groups = random_partition(pool, rng, n_groups, size)
        return "\n".join(f"Group {i + 1}: [{', '.join(g)}]" for i, g in enumerate(groups))
    words = re.findall(r"\w+", last) or list(CHANCE_WORDS)
    return " ".join(rng.choice(words) for _ in range(3))


def request_role(req: Any) -> str | None:
    """The role the engine put on a request (``doc["role"]``; lm-eval's own requests carry a dataset doc)."""
    doc = getattr(req, "doc", None)
    role = doc.get("role") if isinstance(doc, dict) else None
    return role if isinstance(role, str) else None


@register_model(NAME)
class RandomLM(LM):
    """Random well-formed replies (``generate_until``) and random log-likelihoods (multiple choice)."""

    #: what lm-eval and play pass to every backend besides its model_args (and the keys that only name a run)
    RUNNER_KEYS = frozenset({"batch_size", "max_batch_size", "device", "model", "pretrained"})

    def __init__(self, seed: int = DEFAULT_SEED, **kwargs: Any):
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
        return [
            reply_for(
                messages_of(req.args[0]),
                self._rng(req.args[0]),
                getattr(req, "task_name", None),
                request_role(req),
            )
            for req in requests
        ]

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        return [(-self._rng(json.dumps(req.args, default=str)).random() * 10, False) for req in requests]

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
        return [-self._rng(json.dumps(req.args, default=str)).random() * 100 for req in requests]
