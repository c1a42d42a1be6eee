"""The contract between the engine and every multi-turn test.

A *task* (``TaskSpec``) names a test, lists its episodes' instances and aggregates their scores. A
*game* (``Game``) is one episode's state machine: it says what it wants to send next (a ``Request``
for one of its model-played roles), takes the reply, and keeps its own parsing, rules and scoring.
Programmatic roles (a questioner, a game's feedback, a judge's bookkeeping) are code inside the game.

The scheduler (:mod:`multiturn.engine.scheduler`, driven by :mod:`multiturn.engine.runner`) owns the loop: at each step it asks every live game for its
next request, sends all requests of one role in one ``generate_until`` call, and hands each reply
back with ``Game.on_reply``. Games never call a model themselves, so any test fits the same engine.

A game also owns how it is shown and how chance plays it, so nothing outside its module needs to
know its family: ``TaskSpec.turn_views(record)`` turns a stored episode record into
:class:`TurnView` rows (by default by replaying the record's stored replies through a fresh game:
the exact messages each role saw, system prompt included, and each reply with the game's own
reading of it, ``Game.reply_view``); ``TaskSpec.summary(record)`` says what the scores mean and which
stimuli to show above the turns; ``TaskSpec.chance_reply(request, rng)`` is the reply of a player
that follows the format and knows nothing (the ``random`` model); ``TaskSpec.reference_levels``
holds analytic levels a paper states for the task (e.g. an ideal learner's accuracy).
"""

from __future__ import annotations

import abc
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from plumbing.checks import DEFAULT_SEED
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

    @property
    def system(self) -> str:
        """The system messages' text (joined by spaces)."""
        return " ".join(m["content"] for m in self.messages if m["role"] == "system")

    @property
    def first(self) -> str:
        """The first non-system message's text ("" when none)."""
        return next((m["content"] for m in self.messages if m["role"] != "system"), "")

    @property
    def last(self) -> str:
        """The last message's text ("" when none)."""
        return self.messages[-1]["content"] if self.messages else ""


@dataclass
class TurnView:
    """One message of an episode as the viewer shows it.

    ``role`` is who speaks: ``"gm"`` (the game: system prompt, stimuli, feedback) or a model role
    (``"player"``, ``"player_b"``, ``"judge"``); ``to`` names the addressee. For a reply, ``reading``
    is our parsed reading of it (None when it did not parse), ``verdict`` True (right) / False (wrong) /
    None (not judged), and ``why`` a short reason (for an unparsed reply: what the parser expected).
    ``tiles`` is a row of coloured letter tiles ``(letter, colour)`` (e.g. a feedback grid).
    """

    role: str
    text: str
    reading: str | None = None
    verdict: bool | None = None
    why: str = ""
    to: str = ""
    tiles: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class EpisodeSummary:
    """What the viewer shows around an episode's turns: the scores explained and the stimuli / gold."""

    why: str = ""
    facts: list[tuple[str, str]] = field(default_factory=list)
    facts_title: str = ""
    outcome: str = ""  # one or two words for the episode list ("solved", ...); "" = the viewer's default
    target: str = ""  # the gold / hidden solution as text (the word, the rule, the groups): an export's sample target


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

    def reply_view(self, request: Request, reply: str) -> TurnView:
        """The reply just taken by ``on_reply`` as the viewer shows it: our reading, verdict and why
        (default: the reply alone, not judged)."""
        return TurnView(request.role, reply)


#: where the cost hints of the games in this repository come from (``turns`` and ``prompt_tokens``): the suite's plan
#: counted them, playing the chance player through the task and counting its prompts with the embedded SmolLM2's
#: tokenizer. A new game counts its own the same way (``triangulate suite <a suite with the game> --dry_run``).
DRY_RUN_COUNT = "measured: `triangulate suite suites/triangulating.yaml --dry_run` (chance player, SmolLM2 tokenizer), 2026-11-28"


@dataclass(frozen=True)
class CostHints:
    """What a full run of a task costs, declared by the task (``TaskSpec.cost``) for the suite's cost model where
    the plan cannot count it (no built data or no tokenizer on the machine).

    ``episodes``: the episodes a full run plays; ``turns``: its model requests (every turn of every role) and
    ``prompt_tokens`` its prompt tokens, over all episodes; ``reply_tokens``: the tokens of one reply, expected, and
    ``max_reply_tokens`` at most (the protocol's max tokens). ``source`` says where each number comes from (counted
    by a dry run, or assumed).
    """

    episodes: int
    turns: int
    prompt_tokens: int
    reply_tokens: float
    max_reply_tokens: float
    source: str

    @property
    def turns_per_episode(self) -> float:
        return self.turns / self.episodes

    @property
    def prompt_tokens_per_turn(self) -> float:
        return self.prompt_tokens / self.turns


class TaskSpec(abc.ABC):
    """A named test: its episodes, how to play one, how to aggregate them.

    ``aggregate`` returns ``{metric: value}``; the engine writes them as ``"<metric>,none"`` in the
    results JSON, like lm-eval. ``higher_is_better`` mirrors lm-eval's field.
    """

    #: the task's name, set by :func:`multiturn.registry.get_task` from ``@register("name")`` (file names, the
    #: results key, the chance player's lookup all use it): a registered task states none of its own
    name: str = ""
    #: roles this task sends requests for; "judge" / "player_b" make the CLI build those backends.
    roles: tuple[str, ...] = ("player",)
    #: default generation kwargs (the published protocol's temperature, max tokens, stop strings).
    gen_kwargs: dict[str, Any] = {}
    #: the scoring version: raise it whenever parsing, rules or scoring would score the same replies differently.
    #: Written to the results JSON (``versions``) and the episodes' settings file: ``triangulate play`` refuses to
    #: resume episodes of another version, ``triangulate score`` re-scores them and records the new one.
    version: ClassVar[float] = 1.0
    #: the ``--task_args`` this task was built with (set by ``registry.get_task``; part of its config).
    task_args: dict[str, Any] = {}
    #: levels a paper states analytically for this task's main metric: row label -> value (the report
    #: shows each as a reference row; e.g. an ideal learner's accuracy). Not a model, never correlated.
    reference_levels: ClassVar[dict[str, float]] = {}
    #: the groups this task joins (e.g. ``("clembench",)``): a group registered elsewhere (``register_group``) then
    #: lists it without an edit there; read from the class, so listing groups builds no task and loads no data.
    groups: ClassVar[tuple[str, ...]] = ()
    #: what a full run costs (:class:`CostHints`), for the suite's cost model; None: the cost model assumes a row.
    cost: ClassVar[CostHints | None] = None

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

    def turn_views(self, record: Mapping[str, Any]) -> list[TurnView]:
        """A stored episode record as the viewer's turns: the record's replies replayed through a fresh
        game (:func:`views_by_replay`), else (no stored calls, or the current code plays it differently)
        its transcript as it was stored (:func:`transcript_views`)."""
        return views_by_replay(self, record) or transcript_views(record)

    def summary(self, record: Mapping[str, Any]) -> EpisodeSummary:
        """The scores explained and the stimuli shown above the turns (default: nothing)."""
        return EpisodeSummary()

    def judge_label(self, reply: str) -> Any:
        """A judge reply's verdict, for comparing two judges (``triangulate score --judge_model``); None:
        unparseable (default: tasks without a judge role)."""
        return None

    def chance_reply(self, request: Request, rng: random.Random) -> str | None:
        """The reply of a player that follows the format the request asks for and knows nothing (the
        ``random`` model draws every choice from ``rng``); None: no form of its own (the chance player
        then answers with random words of the prompt)."""
        return None


def views_by_replay(task: TaskSpec, record: Mapping[str, Any]) -> list[TurnView]:
    """Replay ``record["calls"]`` through ``task.make_game``: for every model call, the messages its role
    had not seen yet (the whole history at a role's first call, system prompt included) and the reply
    read by ``Game.reply_view``. Where the current game code plays the record differently (it asks
    another role, ends early, or fails on it), the remaining stored replies follow as they are, saying
    so. [] when the record has no calls or its first call already does not fit."""
    calls = record.get("calls")
    if not isinstance(calls, list) or not calls or record.get("failed") or not all(isinstance(c, Mapping) for c in calls):
        return []  # none, or a damaged record's (the transcript is shown as stored)
    views: list[TurnView] = []
    done = 0
    try:
        game = task.make_game(record["instance"], int(record.get("seed", DEFAULT_SEED)))
        seen: dict[str, list[Message]] = {}
        for call in calls:
            request = None if game.done else game.next_request()
            if request is None or request.role != call.get("role"):
                break
            views.extend(new_messages(seen.get(request.role, []), request))
            reply = "" if call.get("reply") is None else str(call["reply"])
            seen[request.role] = [*request.messages, {"role": "assistant", "content": reply}]
            game.on_reply(reply)
            views.append(game.reply_view(request, reply))
            done += 1
    except Exception:  # a record the current game code cannot replay (older data): the rest as stored
        pass
    if done == 0:
        return []
    why = "stored reply: the current game code plays this record differently from here, so no prompt or reading is shown"
    return views + [TurnView(str(c.get("role", "player")), str(c.get("reply") or ""), why=why) for c in calls[done:]]


def new_messages(before: list[Message], request: Request) -> list[TurnView]:
    """The request's messages after the longest prefix it shares with what its role saw ``before``."""
    common = len(before) if request.messages[: len(before)] == before else 0  # the usual case: the history grew
    if not common:
        for old, new in zip(before, request.messages):
            if old.get("role") != new.get("role") or old.get("content") != new.get("content"):
                break
            common += 1
    out = []
    for message in request.messages[common:]:
        text = str(message.get("content", ""))
        if message.get("role") == "assistant":  # a turn the game wrote into this role's history
            out.append(TurnView(request.role, text, why="in the history as this role's turn, written by the game (not a model reply)"))
        elif text:  # an empty message (e.g. an empty system prompt) shows nothing
            out.append(TurnView("gm", text, to="system prompt" if message.get("role") == "system" else request.role))
    return out


def transcript_views(record: Mapping[str, Any]) -> list[TurnView]:
    """The stored transcript as turns (``role``/``content`` items; anything else as its JSON)."""
    roles = {"player": "player", "player_b": "player_b", "judge": "judge", "assistant": "player"}
    out = []
    for item in record.get("transcript") or []:
        if isinstance(item, Mapping) and "content" in item:
            out.append(TurnView(roles.get(str(item.get("role")), "gm"), str(item["content"]), to=str(item.get("to") or "")))
        else:
            out.append(TurnView("gm", json.dumps(item, ensure_ascii=False, default=str)))
    return out
