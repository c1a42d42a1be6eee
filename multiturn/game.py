"""The contract between the engine and every multi-turn test.

A *task* (``TaskSpec``) names a test, lists its episodes' instances and aggregates their scores. A
*game* (``Game``) is one episode's state machine: it says what it wants to send next (a ``Request``
for one of its model-played roles), takes the reply, and keeps its own parsing, rules and scoring.
Programmatic roles (a questioner, Wordle's feedback, a judge's bookkeeping) are code inside the game.

The scheduler (:mod:`multiturn.engine.scheduler`, driven by :mod:`multiturn.engine.runner`) owns the loop: at each step it asks every live game for its
next request, sends all requests of one role in one ``generate_until`` call, and hands each reply
back with ``Game.on_reply``. Games never call a model themselves, so any test fits the same engine.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plumbing.stats import mean_of_keys

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": str}


@dataclass
class Request:
    """One model call a game waits for.

    ``messages`` is the chat history exactly as this role sees it (the engine renders it with
    ``lm.apply_chat_template``); ``role`` picks the backend: ``"player"`` (the evaluated model),
    ``"player_b"`` (second player of a two-player game; the evaluated model unless ``--model_b``),
    ``"judge"`` (``--judge_model``, default the evaluated model).
    """

    messages: list[Message]
    role: str = "player"
    gen_kwargs: dict[str, Any] = field(default_factory=dict)


class Game(abc.ABC):
    """One episode. Subclasses keep parsing, rules and scoring in small separate functions."""

    def __init__(self, instance: Mapping[str, Any]):
        self.instance = dict(instance)
        self.transcript: list[dict[str, Any]] = []  # {"role", "content", ...} in play order

    @abc.abstractmethod
    def next_request(self) -> Request | None:
        """The next model call, or None when the episode is over (then ``done`` is True)."""

    @abc.abstractmethod
    def on_reply(self, reply: str) -> None:
        """Take the model's reply to the request last returned by ``next_request``."""

    @property
    @abc.abstractmethod
    def done(self) -> bool:
        """True once the episode has ended (finished, lost or aborted)."""

    @abc.abstractmethod
    def scores(self) -> dict[str, float]:
        """Per-episode metrics (floats; NaN where undefined, e.g. the main score of an aborted game)."""

    def record(self) -> dict[str, Any]:
        """Extra per-episode data for the JSONL record (trials, events); the engine adds id, transcript, scores."""
        return {}


class TaskSpec(abc.ABC):
    """A named test: its episodes, how to play one, how to aggregate them.

    ``aggregate`` returns ``{metric: value}``; the engine writes them as ``"<metric>,none"`` in the
    results JSON, like lm-eval. ``higher_is_better`` mirrors lm-eval's field.
    """

    name: str = ""
    #: roles this task sends requests for; "judge" / "player_b" make the CLI build those backends.
    roles: tuple[str, ...] = ("player",)
    #: default generation kwargs (the published protocol's temperature, max tokens, stop strings).
    gen_kwargs: dict[str, Any] = {}
    #: the ``--task_args`` this task was built with (set by ``registry.get_task``; part of its config).
    task_args: dict[str, Any] = {}

    @abc.abstractmethod
    def instances(self, seed: int) -> list[dict[str, Any]]:
        """All episodes' instances in a fixed order; each has a unique string ``"id"``.

        The same seed gives the same stimuli and order; ``--limit N`` takes the first N.
        """

    @abc.abstractmethod
    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        """A fresh game for one instance (``seed`` drives any randomness inside the episode)."""

    def aggregate(self, episode_scores: list[dict[str, float]]) -> dict[str, float]:
        """Task metrics from the per-episode ``scores()``; default: the mean of each key, NaNs skipped."""
        return mean_of_keys(episode_scores)

    def higher_is_better(self) -> dict[str, bool]:
        return {}

    def config(self) -> dict[str, Any]:
        """The task's entry under ``configs`` in the results JSON."""
        config = {"task": self.name, "gen_kwargs": dict(self.gen_kwargs), "roles": list(self.roles)}
        if self.task_args:
            config["task_args"] = dict(self.task_args)
        return config
