"""The turn log: every answered turn of a play task's unfinished episodes, stored as it is answered.

``episodes_<task>.turns.jsonl`` (its path and lifetime: :class:`multiturn.engine.store.TaskStore`) gets one line per
answered turn, appended and flushed at once (:class:`TurnLog`). A turn is logged as soon as the backend hands it to
lm-eval's cache hook (hf, vLLM and the API backends do, request by request within a batch: :class:`TurnHook`), else
when its batch returns (:func:`multiturn.engine.scheduler.ask`), so a kill loses only the requests in flight. A resumed
run rebuilds each unfinished episode by replaying its logged replies through a fresh game
(:func:`multiturn.engine.scheduler.rebuild`; games never call models).

A line is ``{"id", "turn", "role", "request", "reply"}``: the episode, the turn's number (the count of earlier
answered calls), the role asked, the request's digest (:func:`multiturn.engine.scheduler.request_digest`: its messages and generation kwargs, made
once per request with them: :class:`multiturn.engine.scheduler.Asked`)
and the backend's reply as it came (before ``--max_reply_chars``; every string scrubbed of credentials, as episode
records are). Reading (:func:`read_turns`) keeps, per episode, the turns numbered 0, 1, 2, ... in order; a later line
for turn k replaces turn k and drops the turns after it (the episode was played again from there).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from plumbing import atomic, jsonio
from plumbing.jsonio import read_jsonl
from plumbing.secrets import scrub_tree

#: episode id -> its logged turns, in play order
Turns = dict[str, list[dict[str, Any]]]


def turn_line(turn: Mapping[str, Any]) -> str:
    """One line of the turn log, every string scrubbed of credentials (as episode records are)."""
    return jsonio.dumps(scrub_tree(dict(turn)))


def read_turns(paths: Iterable[Path]) -> Turns:
    """Episode id -> its logged turns 0, 1, 2, ... (a later line for turn k replaces it and drops what followed; a line
    that skips a turn, or is not a turn, is ignored; a torn last line is skipped by the reader)."""
    out: Turns = {}
    for path in paths:
        for line in read_jsonl(path, missing_ok=True):
            if not _is_turn(line):
                continue
            turns = out.setdefault(str(line["id"]), [])
            if line["turn"] <= len(turns):
                del turns[line["turn"] :]
                turns.append(dict(line))
    return out


def _is_turn(line: Any) -> bool:
    return (
        isinstance(line, dict)
        and isinstance(line.get("id"), (str, int))
        and isinstance(line.get("turn"), int)
        and isinstance(line.get("role"), str)
        and isinstance(line.get("reply"), str)
    )


class TurnLog:
    """Appends answered turns, one flushed line each; safe to call from a backend's worker thread."""

    def __init__(self, path: Path):
        self._lines = atomic.LineAppender(path)
        self._lock = threading.Lock()

    def write(self, episode: str, turn: int, role: str, digest: str, reply: str) -> None:
        line = turn_line({"id": episode, "turn": turn, "role": role, "request": digest, "reply": reply})
        with self._lock:
            self._lines.write(line)

    def close(self) -> None:
        with self._lock:
            self._lines.close()


class TurnHook:
    """lm-eval's cache hook (``LM.cache_hook.add_partial``) for one backend call: each reply the backend hands it is
    logged at once as the turn of the episode whose prompt it answers (equal prompts: in order). hf, vLLM and the API
    backends call it request by request within a batch, so a kill mid-batch loses only the requests not yet
    answered. ``logged`` holds what was written (episode id -> reply); the scheduler logs the rest when the batch
    returns, and again any reply the backend returned differently. The previous hook is called too and put back."""

    def __init__(self, lm: Any, log: TurnLog | None, members: Sequence[tuple[str, int, str, str, str]]):
        """``members``: (rendered prompt, turn, episode id, role, request digest) of every request of the call; without
        a ``log`` (a run that stores nothing) the hook is not installed."""
        self.lm, self.log = lm, log
        self.waiting: dict[str, list[tuple[int, str, str, str]]] = {}
        for prompt, turn, episode, role, digest in members:
            self.waiting.setdefault(prompt, []).append((turn, episode, role, digest))
        self.logged: dict[str, str] = {}
        self._previous = getattr(lm, "cache_hook", None)
        #: installed for the call: a backend without lm-eval's hook gets its turns logged when the batch returns
        self._installs = self._previous is not None and log is not None
        self._open = False
        self._lock = threading.Lock()

    def add_partial(self, attr: str, req: Any, res: Any) -> None:
        if self._previous is not None:
            self._previous.add_partial(attr, req, res)
        if attr != "generate_until" or not isinstance(res, str) or not isinstance(req, (tuple, list)) or not req:
            return
        with self._lock:
            queue = self.waiting.get(req[0]) if self._open else None
            if not queue:
                return
            turn, episode, role, digest = queue.pop(0)
            self.logged[episode] = res
        self.log.write(episode, turn, role, digest, res)

    def __enter__(self) -> TurnHook:
        if self._installs:
            self._open = True
            self.lm.cache_hook = self
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._open = False  # a reply of an abandoned (timed-out) call arriving later is not logged
        if self._installs:
            self.lm.cache_hook = self._previous
