"""Shared machinery of the clembench games: a game master written as a generator, and its event log.

clembench's game masters (clembench v1.6, May 2024; seed 002 section 3) are loops that call the
players and log every step as *events* (``{"from", "to", "action": {"type", "content", ...}}``),
grouped in turns. Each of our games writes its master loop as a generator: ``reply = yield from
self.ask(...)`` sends one request and waits for the engine's reply, so the control flow (turn
limits, re-prompts, aborts) reads like clembench's own and the same event log comes out. The log
has clembench's ``interactions.json`` shape; :mod:`multiturn.games.clem.replay` compares it with
published episodes.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Generator, Mapping
from typing import Any

from multiturn.game import EpisodeSummary, Game, Message, Request, TurnView

#: what a master generator yields and is sent back
MasterLoop = Generator[Request, str, None]

#: roles of the engine: the evaluated model and the second player of two-player games
PLAYER_A = "player"
PLAYER_B = "player_b"

#: clembench's own default reply length in the v1.6 era: ``-l/--max_tokens``, ``default=100`` in
#: ``scripts/cli.py`` (clp-research/clemcore history, commit 745fcb0fe1df4cc8577abc2260e7474edb23e69d, the last
#: before 2024-05-20; introduced by 8399a7160a4f, 2024-02-14, which replaced the backends' hard-coded 100).
#: clemcore raised it to 300 on 2025-06-03 (099ab89619f6, "set default max_tokens value to 300"), after v1.6.
CLEMBENCH_MAX_TOKENS = 100
#: seed 003's clembench runs: ``gen_args = {'temperature': 0.0, 'max_tokens':250}`` in
#: ``evaluate/playpen_evaluator.py`` of momentino/playpen_eval (08e9761541122548af7cac325c8a345c8df32543, the last
#: commit where that call is live; added 1d12f29, 2025-01-27). ``--task_args max_tokens=250``; suites/triangulating.yaml.
TRIANGULATING_MAX_TOKENS = 250
#: clembench's generation settings: greedy, at most :data:`CLEMBENCH_MAX_TOKENS` new tokens per reply
CLEM_GEN_KWARGS: dict[str, Any] = {"do_sample": False, "temperature": 0.0, "max_gen_toks": CLEMBENCH_MAX_TOKENS, "until": []}

NAN = float("nan")


class EventLog:
    """clembench's interaction record: ``{"players": {...}, "turns": [[event, ...], ...]}``."""

    def __init__(self, players: Mapping[str, str] | None = None):
        self.players: dict[str, str] = dict(players or {})
        self.turns: list[list[dict[str, Any]]] = []

    def next_turn(self) -> None:
        self.turns.append([])

    def log(self, from_: str, to: str, type_: str, content: Any, **extra: Any) -> None:
        """Append one event to the current turn (a turn is opened if none is)."""
        if not self.turns:
            self.next_turn()
        action = {"type": type_, "content": content, **extra}
        self.turns[-1].append({"from": from_, "to": to, "action": action})

    def to_self(self, type_: str, content: Any, **extra: Any) -> None:
        """A game-master-internal event (GM -> GM): decisions such as ``valid clue`` or ``invalid format``."""
        self.log("GM", "GM", type_, content, **extra)

    def as_dict(self) -> dict[str, Any]:
        return {"players": dict(self.players), "turns": [list(t) for t in self.turns]}

    def events(self) -> list[dict[str, Any]]:
        return [event for turn in self.turns for event in turn]


class ClemGame(Game):
    """A clembench game master on the engine's contract (:class:`multiturn.game.Game`).

    Subclasses implement :meth:`play` (the master loop, a generator) and :meth:`episode_scores`
    (clembench's scorer for the finished log). ``model_names`` (player name -> model name) only
    fills the texts clembench logs with model names in them (Wordle's metadata).
    """

    game_name: str = ""

    def __init__(self, instance: Mapping[str, Any], model_names: Mapping[str, str] | None = None):
        super().__init__(instance)
        self.model_names = dict(model_names or {})
        self.log = EventLog()
        self._pending: Request | None = None
        self._done = False
        self._loop = self.play()
        self._advance(None)

    # -- the engine's contract -------------------------------------------------------------------
    def next_request(self) -> Request | None:
        return None if self._done else self._pending

    def on_reply(self, reply: str) -> None:
        if self._done or self._pending is None:
            raise RuntimeError("on_reply called while no request is pending")
        self._advance(reply if isinstance(reply, str) else str(reply))

    @property
    def done(self) -> bool:
        return self._done

    def scores(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.episode_scores().items()}

    def record(self) -> dict[str, Any]:
        return {"interactions": self.log.as_dict()}

    # -- helpers for subclasses ------------------------------------------------------------------
    def _advance(self, value: str | None) -> None:
        try:
            self._pending = self._loop.send(value) if value is not None else next(self._loop)
        except StopIteration:
            self._pending = None
            self._done = True

    def ask(
        self,
        to: str,
        messages: list[Message],
        role: str = PLAYER_A,
        logged: str | None = None,
        send_type: str = "send message",
        reply_type: str = "get message",
    ) -> Generator[Request, str, str]:
        """Log ``GM -> to`` (the last message unless ``logged``), yield the request, log the reply."""
        content = messages[-1]["content"] if logged is None else logged
        self.log.log("GM", to, send_type, content)
        snapshot = [dict(m) for m in messages]
        reply = yield Request(messages=snapshot, role=role)
        self.transcript.append({"role": role, "player": to, "prompt": content, "reply": reply})
        self.log.log(to, "GM", reply_type, reply)
        return reply

    def reply_view(self, request: Request, reply: str) -> TurnView:
        """The reply and the master's own decisions on it (the GM -> GM events logged after it): a parse
        is our reading; an ``invalid ...`` or ``abort`` event marks it wrong, with the event as the why."""
        events = self.log.events()
        start = max((i for i, e in enumerate(events) if e["to"] == "GM" and e["from"] != "GM"), default=len(events) - 1) + 1
        own = [e["action"] for e in events[start:] if e["from"] == "GM" and e["to"] == "GM"]
        bad = [f"{a['type']}: {a['content']}" for a in own if "invalid" in a["type"] or "abort" in str(a["content"]).lower()]
        readings = [f"{a['type']}: {a['content']}" for a in own if a["type"] not in ("metadata", "info")]
        readings = [r for r in readings if r not in bad]
        why = f"{bad[0]}; {self.expected_format(request)}" if bad else ""
        return TurnView(request.role, reply, reading="; ".join(readings) or None, verdict=False if bad else None, why=why)

    def expected_format(self, request: Request) -> str:
        """What this game's parser expects of a reply to ``request`` (said next to a reply it refused)."""
        return "the reply must follow the format the prompt asks for"

    @staticmethod
    def chance_reply(request: Request, rng) -> str | None:
        """A random reply of the form this game asks for (None: the chance player's generic reply)."""
        return None

    def model_name(self, player: str) -> str:
        return self.model_names.get(player, "evaluated model")

    # -- per game --------------------------------------------------------------------------------
    @abc.abstractmethod
    def play(self) -> MasterLoop:
        """The master loop: ``reply = yield from self.ask(...)`` for every model call."""

    @abc.abstractmethod
    def episode_scores(self) -> dict[str, float]:
        """clembench's episode scores: ``main_score`` (NaN when aborted), ``aborted``, ``lose``,
        ``success``, ``request_count``, ``parsed_request_count``, ``violated_request_count``."""


def outcome_scores(
    aborted: bool, success: bool, main_score: float, requests: int, parsed: int, violated: int | None = None
) -> dict[str, float]:
    """The common clembench episode metrics (seed 002, section 3.3: Aborted, Lose, Success, Main Score)."""
    aborted_i = int(bool(aborted))
    success_i = 0 if aborted_i else int(bool(success))
    lose_i = 0 if aborted_i else 1 - success_i
    return {
        "main_score": NAN if aborted_i else float(main_score),
        "aborted": float(aborted_i),
        "lose": float(lose_i),
        "success": float(success_i),
        "request_count": float(requests),
        "parsed_request_count": float(parsed),
        "violated_request_count": float(requests - parsed if violated is None else violated),
        "request_success_ratio": float(parsed / requests) if requests else 0.0,
    }


#: clembench instance fields shown above an episode (the stimuli: target word, grids, ...)
INSTANCE_FACTS = (
    "target_word",
    "target_word_clue",
    "related_word",
    "target_grid",
    "player_1_target_grid",
    "target_grid_name",
    "experiment",
)

#: the instance field that is a game's hidden solution (taboo's and wordle's word, a grid to reproduce)
TARGET_FACTS = ("target_word", "target_grid", "player_1_target_grid", "target_grid_name")


def episode_summary(record: Mapping[str, Any]) -> EpisodeSummary:
    """The outcome explained (aborted / success / lost) and the players and stimuli above the turns."""
    scores = record.get("scores") or {}
    main = float(scores.get("main_score", NAN))
    if float(scores.get("aborted", 0)) == 1:
        why = "Aborted: a reply broke the game's format rules, so the main score is undefined (NaN; clemscore counts the episode as not played)."
    elif float(scores.get("success", 0)) == 1:
        why = f"Success: the game's goal was reached; main score {main:.3g}."
    else:
        why = f"Lost: the game ended without reaching its goal; main score {main:.3g}."
    players = (record.get("interactions") or {}).get("players") or {}
    facts = [(str(k), str(v)) for k, v in players.items()]
    instance = record.get("instance") or {}
    facts += [(key, str(instance[key])) for key in INSTANCE_FACTS if key in instance]
    target = next((str(instance[key]) for key in TARGET_FACTS if key in instance), "")
    return EpisodeSummary(why, facts, "players and instance", target=target)


def is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
