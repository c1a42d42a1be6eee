"""Word-grouping games played one guess at a time, as the NYT Connections app plays them.

Seed 001 names interactive play as future work; this is the app's protocol: the model submits one
group of four words per turn; the game answers "Correct" (naming the group and, for NYT games, its
colour), "One away" (three of the four words belong to one unfound group) or "Incorrect"; the fourth
mistake ends the game. When all but one group are found, the last group is completed for the player
(the remaining words can only form that group, so the app cannot reject it either).

Prompt: ``multiturn/games/templates/connections_interactive.txt`` (our own wording; rules and examples
follow seed 001's static prompt, turn rules follow the app). The player's whole conversation is kept.

Parse rule (documented, tested): the guess is the first group of exactly four different words of
the remaining board written after the last ``GUESS:`` of the reply; without a ``GUESS:`` line, the
last such group anywhere in the reply (bracketed lists or ``Topic: a, b, c, d``, read with
:func:`custom_metrics.parsing.find_groups`; words matched case- and accent-insensitively). A reply
with no such group, a group with solved or unknown words, or a repeat of an earlier guess is
*invalid*: the game re-prompts once with the format (no mistake); a second invalid reply in a row
counts as a mistake (so every episode ends within 16 replies).

Per-episode metrics: ``solved`` (all groups found), ``groups_found`` (0-4), ``mistakes`` (0-4),
``one_away_recoveries`` (groups that drew a "one away" and were found later), ``invalid_replies``,
and for NYT games ``weighted_clustering``: the sum of the difficulty weights (yellow 1 ... purple 4)
of the groups found, the weighted clustering score of seed 001 section 4.3.1, so each game can be
compared with its static score (``connections`` task, same game ids).

The game-by-game comparison with the static task is part of ``triangulate report``
(``connections_by_game.csv``, :mod:`triangulation.report.analyses.connections`).

Task: ``connections_interactive`` (the 438 test games of dataset ``connections``). The same game
plays GlobalGroup's 4x4 boards in :mod:`multiturn.games.globalgroup_interactive`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from custom_metrics.parsing import find_groups
from custom_metrics.text import word_key
from multiturn.game import EpisodeSummary, Game, Message, Request, TaskSpec, TurnView
from multiturn.registry import register

TEMPLATE = Path(__file__).resolve().parent / "templates" / "connections_interactive.txt"
MAX_MISTAKES = 4
GROUP_SIZE = 4
GEN_KWARGS: dict[str, Any] = {"max_gen_toks": 256, "do_sample": False, "temperature": 0.0}
NYT_INTRO = "Let's play today's NYT Connections game, one guess at a time, as the New York Times app plays it."

_POOL = re.compile(r"(?:Remaining words|Words):\s*\[([^\]]*)\]")
_GUESS_MARK = re.compile(r"guess\s*[:：]", re.IGNORECASE)
#: up to the end of the LAST ``GUESS:`` mark (one backward scan; listing every mark of a long reply is slow)
_UP_TO_LAST_GUESS_MARK = re.compile(r".*" + _GUESS_MARK.pattern, re.IGNORECASE | re.DOTALL)


@lru_cache(maxsize=1)
def template() -> str:
    """The prompt template without its ``#`` comment lines."""
    lines = TEMPLATE.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith("#")).strip() + "\n"


def format_words(words: Sequence[str]) -> str:
    return "[" + ", ".join(words) + "]"


def opening_prompt(words: Sequence[str], n_groups: int, group_size: int, intro: str) -> str:
    return template().format(
        intro=intro,
        group_size=group_size,
        n_groups=n_groups,
        one_away=group_size - 1,
        max_mistakes=MAX_MISTAKES,
        words=format_words(words),
    )


# --- parsing and rules (pure) -----------------------------------------------------------------


def _key(word: str) -> str:
    return word_key(word)


def parse_guess(reply: str, remaining: Sequence[str], group_size: int = GROUP_SIZE) -> list[str] | None:
    """The guessed group (board spellings) by the parse rule above, or None when the reply has none."""
    text = str(reply or "")
    board = {_key(w): w for w in remaining}

    def valid(words: list[str]) -> list[str] | None:
        keys = [_key(w) for w in words]
        if len(words) != group_size or len(set(keys)) != group_size or not all(k in board for k in keys):
            return None
        return [board[k] for k in keys]

    last_mark = _UP_TO_LAST_GUESS_MARK.match(text)
    if last_mark:
        after = text[last_mark.end() :]
        for group in find_groups(after, list(remaining)):
            hit = valid(group.words)
            if hit:
                return hit
        line = after.strip().splitlines()[0] if after.strip() else ""
        pieces = line.strip(" []").replace(";", ",").split(",")  # str ops: a regex split is slow on 1 MB
        hit = valid([w for w in (p.strip() for p in pieces) if w])
        if hit:
            return hit
    for group in reversed(find_groups(text, list(remaining))):
        hit = valid(group.words)
        if hit:
            return hit
    return None


def judge_guess(guess: Sequence[str], groups: Sequence[Sequence[str]], found: Sequence[int]) -> tuple[str, int | None]:
    """``("correct", g)`` when the guess is unfound group g, ``("one_away", g)`` when all but one of its words
    are in unfound group g, else ``("wrong", None)``."""
    keys = frozenset(_key(w) for w in guess)
    best: tuple[int, int | None] = (0, None)
    for index, words in enumerate(groups):
        if index in found:
            continue
        overlap = len(keys & frozenset(_key(w) for w in words))
        if overlap == len(words) == len(keys):
            return "correct", index
        if overlap > best[0]:
            best = (overlap, index)
    if best[1] is not None and best[0] == len(keys) - 1:
        return "one_away", best[1]
    return "wrong", None


def weighted_score(levels_found: Sequence[int]) -> float:
    """Seed 001 4.3.1 weighted clustering score: each exactly-found group weighs its level + 1 (yellow 1 ... purple 4)."""
    return float(sum(level + 1 for level in levels_found))


# --- the game ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Board:
    """What the game needs of one instance: the pool and the gold groups (with level/colour for NYT)."""

    words: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    topics: tuple[str, ...]
    levels: tuple[int, ...] | None
    colors: tuple[str, ...] | None

    @classmethod
    def from_instance(cls, instance: Mapping[str, Any]) -> Board:
        groups = list(instance["groups"])
        levels = [g.get("level") for g in groups]
        colors = [g.get("color") for g in groups]
        return cls(
            words=tuple(str(w) for w in instance["words"]),
            groups=tuple(tuple(str(w) for w in g["words"]) for g in groups),
            topics=tuple(str(g.get("topic") or "") for g in groups),
            levels=tuple(int(v) for v in levels) if all(v is not None for v in levels) else None,
            colors=tuple(str(c) for c in colors) if all(c for c in colors) else None,
        )


class ConnectionsGame(Game):
    """One board played guess by guess; see the module docstring for the rules and the parse rule."""

    def __init__(self, instance: Mapping[str, Any], intro: str = NYT_INTRO, gen_kwargs: Mapping[str, Any] | None = None):
        super().__init__(instance)
        self.board = Board.from_instance(instance)
        self.group_size = len(self.board.groups[0])
        self.gen_kwargs = dict(gen_kwargs or GEN_KWARGS)
        self.found: list[int] = []
        self.auto_completed: int | None = None
        self.mistakes = 0
        self.invalid_replies = 0
        self.events: list[dict[str, Any]] = []
        self._invalid_streak = 0
        self._guessed: set[frozenset[str]] = set()
        self._one_away_groups: set[int] = set()
        self._recovered: set[int] = set()
        first = opening_prompt(self.board.words, len(self.board.groups), self.group_size, intro)
        self.history: list[Message] = [{"role": "user", "content": first}]
        self.transcript.append({"role": "user", "content": first})
        self._over = False

    # state ------------------------------------------------------------------------------------

    @property
    def remaining(self) -> list[str]:
        taken = {_key(w) for g in self.found for w in self.board.groups[g]}
        return [w for w in self.board.words if _key(w) not in taken]

    @property
    def done(self) -> bool:
        return self._over

    def next_request(self) -> Request | None:
        if self._over:
            return None
        return Request(messages=[dict(m) for m in self.history], role="player", gen_kwargs=dict(self.gen_kwargs))

    # moves ------------------------------------------------------------------------------------

    def on_reply(self, reply: str) -> None:
        if self._over:
            raise RuntimeError("on_reply called on a finished game")
        reply = "" if reply is None else str(reply)
        self.history.append({"role": "assistant", "content": reply})
        self.transcript.append({"role": "player", "content": reply})
        guess = parse_guess(reply, self.remaining, self.group_size)
        reason = None
        if guess is None:
            reason = f"I could not find {self.group_size} different words from the remaining words in your reply"
        elif frozenset(_key(w) for w in guess) in self._guessed:
            reason = "you already tried that group"
        if reason is not None:
            self._invalid(reply, reason)
            return
        self._invalid_streak = 0
        self._guessed.add(frozenset(_key(w) for w in guess))
        verdict, group = judge_guess(guess, self.board.groups, self.found)
        self.events.append({"guess": guess, "result": verdict, "group": group})
        if verdict == "correct":
            self.found.append(group)
            if group in self._one_away_groups:
                self._recovered.add(group)
            message = f"Correct! {self._group_text(group)}"
        else:
            self.mistakes += 1
            if verdict == "one_away":
                self._one_away_groups.add(group)
            message = ("One away!" if verdict == "one_away" else "Incorrect.") + f" Mistakes: {self.mistakes}/{MAX_MISTAKES}."
        self._after_move(message)

    def _invalid(self, reply: str, reason: str) -> None:
        self.invalid_replies += 1
        self._invalid_streak += 1
        if self._invalid_streak == 1:
            self.events.append({"guess": None, "result": "invalid", "group": None, "reason": reason})
            message = (
                f"Invalid guess: {reason}. Reply with exactly {self.group_size} different words from the remaining "
                f"words, ending with: GUESS: [word1, word2, word3, word4]. This does not count as a mistake, "
                f"but a second invalid reply in a row will."
            )
        else:
            self._invalid_streak = 0
            self.mistakes += 1
            self.events.append({"guess": None, "result": "invalid_mistake", "group": None, "reason": reason})
            message = f"Invalid guess again ({reason}): counted as a mistake. Mistakes: {self.mistakes}/{MAX_MISTAKES}."
        self._after_move(message)

    def _after_move(self, message: str) -> None:
        if self.mistakes >= MAX_MISTAKES:
            self._end(message + " No mistakes left: game over.")
            return
        unfound = [g for g in range(len(self.board.groups)) if g not in self.found]
        if len(unfound) == 1:  # the last group is forced
            self.found.append(unfound[0])
            self.auto_completed = unfound[0]
            if unfound[0] in self._one_away_groups:
                self._recovered.add(unfound[0])
            self._end(message + f" The last group completes itself: {self._group_text(unfound[0])} You solved the puzzle!")
            return
        status = f"\nRemaining words: {format_words(self.remaining)}\nMistakes remaining: {MAX_MISTAKES - self.mistakes}."
        self.history.append({"role": "user", "content": message + status})
        self.transcript.append({"role": "user", "content": message + status})

    def _end(self, message: str) -> None:
        self.transcript.append({"role": "game", "content": message})
        self._over = True

    def _group_text(self, group: int) -> str:
        colour = f"{self.board.colors[group].capitalize()} group " if self.board.colors else ""
        return f"{colour}{self.board.topics[group]}: {format_words(self.board.groups[group])}."

    # scores -----------------------------------------------------------------------------------

    def scores(self) -> dict[str, float]:
        out = {
            "solved": float(len(self.found) == len(self.board.groups)),
            "groups_found": float(len(self.found)),
            "mistakes": float(self.mistakes),
            "one_away_recoveries": float(len(self._recovered)),
            "invalid_replies": float(self.invalid_replies),
        }
        if self.board.levels is not None:
            out["weighted_clustering"] = weighted_score([self.board.levels[g] for g in self.found])
        return out

    def reply_view(self, request: Request, reply: str) -> TurnView:
        event = self.events[-1]
        guess = ", ".join(event.get("guess") or []) or None
        why = str(event["result"]).replace("_", " ")
        if event.get("reason"):
            why = (
                f"{why}: {event['reason']}; the parser expects {self.group_size} different remaining words after the last "
                f"'GUESS:' (e.g. GUESS: [word1, word2, word3, word4]), else the last such group anywhere in the reply"
            )
        return TurnView(request.role, reply, reading=guess, verdict=event["result"] == "correct", why=why)

    def record(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "found": [self.board.topics[g] for g in self.found],
            "auto_completed": None if self.auto_completed is None else self.board.topics[self.auto_completed],
        }


# --- tasks -------------------------------------------------------------------------------------


class ConnectionsInteractiveTask(TaskSpec):
    """The 438 NYT Connections test games, played guess by guess."""

    gen_kwargs = dict(GEN_KWARGS)
    intro = NYT_INTRO

    def instances(self, seed: int) -> list[dict[str, Any]]:
        """The games in dataset order with the built (fixed-seed) word order; ``seed`` does not reshuffle,
        so game ids and boards match the static ``connections`` task."""
        from datasets_build.load import load_connections

        return [dict(row) for row in load_connections()["test"]]

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return ConnectionsGame(instance, self.intro, self.gen_kwargs)

    def summary(self, record: Mapping[str, Any]) -> EpisodeSummary:
        """Groups found, mistakes and invalid replies; the solution above (hidden from the player)."""
        scores, instance = record.get("scores") or {}, record.get("instance") or {}

        def count(key: str) -> str:
            value = scores.get(key)
            return "?" if value is None else f"{float(value):g}"

        why = (
            f"Found {', '.join(map(str, record.get('found') or [])) or 'no group'}; {count('mistakes')} mistakes, "
            f"{count('invalid_replies')} invalid replies; solved = every group found before the {MAX_MISTAKES}th mistake."
        )
        facts = [(str(g.get("topic", "")), ", ".join(map(str, g.get("words", [])))) for g in instance.get("groups", [])]
        return EpisodeSummary(why, facts, "the solution (hidden from the player)", target="\n".join(f"{k}: {v}" for k, v in facts))

    def chance_reply(self, request: Request, rng: random.Random) -> str:
        """A group of random remaining words (the board's size: ``groups of N words`` in the opening prompt)."""
        size = int(m.group(1)) if (m := re.search(r"groups of (\d+) words", request.first)) else GROUP_SIZE
        pool: list[str] = []
        for message in reversed(request.messages):
            found = _POOL.search(message["content"]) if message["role"] == "user" else None
            if found:
                pool = [w.strip().strip("'\"‘’“”").strip() for w in found.group(1).split(",")]
                pool = [w for w in pool if w]
                break
        pick = rng.sample(pool, min(size, len(pool))) if pool else []
        return f"GUESS: [{', '.join(pick)}]"

    def higher_is_better(self) -> dict[str, bool]:
        return {
            "solved": True,
            "groups_found": True,
            "mistakes": False,
            "one_away_recoveries": True,
            "invalid_replies": False,
            "weighted_clustering": True,
        }


register("connections_interactive")(ConnectionsInteractiveTask)
