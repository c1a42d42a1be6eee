"""Replaying published clembench episodes through our games, and a small loop for scripted players.

``replay_episode(game, interactions)`` feeds the player messages recorded in a clembench
``interactions.json`` to our game master as scripted players, then compares every event our
master logs (what it sent, each validity decision, parse results, verdicts, turn structure) with
the recorded ones and returns the differences together with our episode scores.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from multiturn.game import Message
from multiturn.games.clem.catalog import candidate_instances
from multiturn.games.clem.common import ClemGame
from multiturn.games.clem.task import games
from plumbing.errors import UserError

Player = Callable[[list[Message]], str]
PLAYER_EVENT_TYPES = ("get message", "probe answer")
PLAYER_NAMES = ("Player 1", "Player 2")


def play_game(game: ClemGame, players: Mapping[str, Player], max_steps: int = 10_000) -> ClemGame:
    """Run one game to its end with a callable per engine role (``player``, ``player_b``)."""
    steps = 0
    while not game.done:
        request = game.next_request()
        if request is None:
            break
        respond = players.get(request.role) or players["player"]
        game.on_reply(respond(request.messages))
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"game did not end within {max_steps} replies")
    return game


def recorded_replies(interactions: Mapping[str, Any]) -> dict[str, deque[str]]:
    """The recorded replies of each player, in order."""
    out: dict[str, deque[str]] = {name: deque() for name in PLAYER_NAMES}
    for turn in interactions["turns"]:
        for event in turn:
            if event["from"] in out and event["action"]["type"] in PLAYER_EVENT_TYPES:
                out[event["from"]].append(event["action"]["content"])
    return out


def model_names(interactions: Mapping[str, Any]) -> dict[str, str]:
    """Player -> model name, from the recorded ``players`` block (formats differ per game)."""
    names: dict[str, str] = {}
    for key, value in interactions.get("players", {}).items():
        if key == "GM" or "Programmatic" in str(value):
            continue
        player = key.replace("_", " ")
        text = str(value)
        if "(" in text and text.endswith(")"):
            text = text[text.rindex("(") + 1 : -1]
        elif ", " in text:
            text = text.split(", ", 1)[1]
        elif ": " in text:
            text = text.split(": ", 1)[1]
        names[player] = text
    return names


def _event_key(event: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    action = event["action"]
    return {"from": event["from"], "to": event["to"], **{k: action.get(k) for k in keys}}


def compare_events(ours: list[list[dict]], recorded: list[list[dict]]) -> list[str]:
    """Differences between two event logs, turn by turn (timestamps ignored; every recorded action key compared)."""
    problems: list[str] = []
    if len(ours) != len(recorded):
        problems.append(f"turns: ours {len(ours)}, recorded {len(recorded)}")
    for t, (our_turn, rec_turn) in enumerate(zip(ours, recorded)):
        if len(our_turn) != len(rec_turn):
            problems.append(f"turn {t}: ours {len(our_turn)} events, recorded {len(rec_turn)}")
        for i, (a, b) in enumerate(zip(our_turn, rec_turn)):
            keys = tuple(k for k in b["action"] if k != "timestamp")
            if _event_key(a, keys) != _event_key(b, keys):
                problems.append(f"turn {t} event {i}: ours {_event_key(a, keys)!r} != recorded {_event_key(b, keys)!r}")
    return problems


def _sent_messages(turns: list[list[dict]]) -> list[tuple[str, str]]:
    """(recipient, content) of every message the game master sent to a player, in order."""
    return [
        (e["to"], e["action"]["content"])
        for turn in turns
        for e in turn
        if e["from"] == "GM" and e["to"] != "GM" and e["action"]["type"] == "send message"
    ]


def _recorded_target(interactions: Mapping[str, Any]) -> str | None:
    for turn in interactions["turns"]:
        for event in turn:
            info = event["action"].get("game_info") or event["action"].get("data_for_computation")
            if info and info.get("target_word"):
                return info["target_word"]
    return None


def _replay(game: str, instance: Mapping[str, Any], interactions: Mapping[str, Any]) -> tuple[ClemGame, dict, list[str]]:
    """Our master on ``instance`` with the recorded replies as scripted players: (game, unused replies, exhausted)."""
    replies = recorded_replies(interactions)
    ours = games()[game](dict(instance), model_names=model_names(interactions))
    exhausted: list[str] = []
    pending = ours.next_request()
    while pending is not None and not ours.done and not exhausted:
        # our masters name the player in the transcript; requests carry the engine role only
        player = "Player 2" if pending.role == "player_b" else "Player 1"
        if replies[player]:
            ours.on_reply(replies[player].popleft())
        else:
            exhausted.append(player)
        pending = ours.next_request()
    return ours, replies, exhausted


def recover_instance(game: str, interactions: Mapping[str, Any]) -> dict[str, Any]:
    """The upstream instance the episode was played on.

    Candidates must show the recorded first prompt (and, for Wordle, the recorded target word).
    Several instances can share the first prompt: clembench v1.6's reference-game instances come in
    triples (game ids 3k, 3k+1, 3k+2) with the same Player 1 prompt that differ only in Player 2's
    grid order and the target. So every candidate is played with the recorded replies and the first
    whose messages to the players (Player 2's included) all equal the recorded ones is taken; when
    none does, the first candidate (the replay then reports where it differs).
    """
    recorded = _sent_messages(interactions["turns"])
    if not recorded:
        raise UserError("the recorded episode has no message from the game master")
    target = _recorded_target(interactions)
    candidates = []
    for instance in candidate_instances(game):
        if target is not None and instance.get("target_word") != target:
            continue
        if _sent_messages(games()[game](instance).log.turns)[:1] == recorded[:1]:
            candidates.append(instance)
    if not candidates:
        raise UserError(f"no upstream {game} instance matches the recorded first prompt")
    if len(candidates) > 1:
        for instance in candidates:
            if _sent_messages(_replay(game, instance, interactions)[0].log.turns) == recorded:
                return instance
    return candidates[0]


def replay_episode(game: str, interactions: Mapping[str, Any], instance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Play a recorded clembench episode again through our game master.

    Returns ``events`` (our interactions log), ``scores`` (our episode scores) and their
    ``main_score`` / ``aborted`` / ``success`` / ``lose``, ``turns`` (number of turns),
    ``differences`` (empty when every recorded game-master decision was reproduced),
    ``unused_replies`` (recorded replies our master never asked for) and ``instance``.
    """
    catalogue = games()
    if game not in catalogue:
        raise UserError(f"unknown clembench game {game!r}; known: {', '.join(sorted(catalogue))}")
    inst = dict(instance) if instance is not None else recover_instance(game, interactions)
    ours, replies, exhausted = _replay(game, inst, interactions)
    log = ours.log.as_dict()
    differences = compare_events(log["turns"], interactions["turns"])
    if exhausted:
        differences.append(f"our game asked {exhausted[0]} for more replies than were recorded")
    scores = ours.scores()
    return {
        "game": game,
        "instance": inst,
        "events": log,
        "scores": scores,
        "main_score": scores["main_score"],
        "aborted": scores["aborted"],
        "success": scores["success"],
        "lose": scores["lose"],
        "turns": len(log["turns"]),
        "differences": differences,
        "unused_replies": {k: list(v) for k, v in replies.items() if v},
    }
