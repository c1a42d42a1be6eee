"""The lockstep scheduler: plays a task's episodes, batching every waiting request of one role.

At every step each live episode that waits for a model says what it wants to send
(``Game.next_request``); the scheduler renders each request with ``lm.apply_chat_template``, sends
all requests of one role (and one set of generation kwargs) in one ``generate_until`` call
(:func:`models.retry.call_backend`), and hands each reply back (``Game.on_reply``). An episode
that finishes leaves the window at once and the next queued episode takes its place, so one long
episode never holds the others back. An episode whose backend call fails after every retry ends as
``failed`` (a backend fault, not the model's) and the others go on.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm

from models.retry import BackendFailure, RetryPolicy, call_backend
from multiturn.engine.record import CUT_KEY, EpisodeRecord, make_record
from multiturn.game import Game, Request, TaskSpec

log = logging.getLogger(__name__)

#: roles --gen_kwargs applies to (the evaluated model's turns); the judge gets --judge_gen_kwargs.
OVERRIDE_ROLES: tuple[str, ...] = ("player", "player_b")
#: episodes in flight at once by default; a kill loses at most these.
DEFAULT_MAX_LIVE = 32


@dataclass
class LiveEpisode:
    """One episode in flight: its instance, its game, the model calls made so far and a backend error."""

    instance: dict[str, Any]
    game: Game
    calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def id(self) -> str:
        return str(self.instance["id"])


def merged_gen_kwargs(
    task: TaskSpec, request: Request, override: Mapping[str, Any] | None, judge_override: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Task defaults < the request's own kwargs < the user's ``--gen_kwargs`` (player roles) or
    ``--judge_gen_kwargs`` (the judge role)."""
    kwargs = {**dict(task.gen_kwargs), **dict(request.gen_kwargs)}
    if override and request.role in OVERRIDE_ROLES:
        kwargs = with_override(kwargs, override)
    if judge_override and request.role == "judge":
        kwargs = with_override(kwargs, judge_override)
    return kwargs


def with_override(kwargs: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` updated by a user override; an override of ``temperature`` to 0 means greedy decoding on
    every backend, so a task's ``do_sample=True`` does not survive it (``do_sample`` is set False unless the
    override names it too). hf then drops the temperature, API and vLLM backends send ``temperature=0``."""
    out = {**dict(kwargs), **dict(override)}
    if "do_sample" not in override and is_zero(override.get("temperature")):
        out["do_sample"] = False
    return out


def is_zero(value: Any) -> bool:
    try:
        return value is not None and float(value) == 0.0
    except (TypeError, ValueError):
        return False


def _gen_key(kwargs: Mapping[str, Any]) -> str:
    return json.dumps(kwargs, sort_keys=True, default=str)


def play_episodes(
    task: TaskSpec,
    instances: Sequence[Mapping[str, Any]],
    lms: Mapping[str, Any],
    *,
    seed: int,
    on_finish: Callable[[dict[str, Any]], None] | None = None,
    gen_kwargs_override: Mapping[str, Any] | None = None,
    judge_gen_kwargs: Mapping[str, Any] | None = None,
    max_live: int | None = DEFAULT_MAX_LIVE,
    retry: RetryPolicy | None = None,
    progress: bool = True,
    position: int = 0,
    initial: int = 0,
    total: int | None = None,
    settings_id: str | None = None,
) -> list[dict[str, Any]]:
    """Play ``instances`` in lockstep and return their records (in finishing order).

    ``on_finish(record)`` is called as each episode ends (the engine uses it to append to the JSONL); every
    record carries ``settings_id`` when given (the fingerprint of the run's settings).
    """
    retry = retry or RetryPolicy()
    window = len(instances) if not max_live or max_live <= 0 else max_live
    queue = deque(dict(inst) for inst in instances)
    live: list[LiveEpisode] = []
    records: list[dict[str, Any]] = []
    bar = tqdm(
        total=total if total is not None else len(instances),
        initial=initial,
        desc=task.name,
        unit="episode",
        disable=not progress,
        position=position,
        leave=True,
    )

    def finish(ep: LiveEpisode) -> None:
        record = episode_record(task, ep, seed, settings_id)
        records.append(record)
        if on_finish is not None:
            on_finish(record)
        bar.update(1)

    try:
        while queue or live:
            while queue and len(live) < window:
                inst = queue.popleft()
                live.append(LiveEpisode(inst, task.make_game(inst, seed)))
            waiting: list[tuple[LiveEpisode, Request]] = []
            still: list[LiveEpisode] = []
            for ep in live:
                request = None if ep.game.done else ep.game.next_request()
                if request is None:
                    finish(ep)
                else:
                    waiting.append((ep, request))
                    still.append(ep)
            live = still
            if not waiting:
                continue
            failed = send_step(task, waiting, lms, retry, gen_kwargs_override, judge_gen_kwargs)
            if failed:
                for ep in live:
                    if id(ep) in failed:
                        finish(ep)
                live = [ep for ep in live if id(ep) not in failed]
    finally:
        bar.close()
    return records


def send_step(
    task: TaskSpec,
    waiting: Sequence[tuple[LiveEpisode, Request]],
    lms: Mapping[str, Any],
    retry: RetryPolicy,
    gen_kwargs_override: Mapping[str, Any] | None = None,
    judge_gen_kwargs: Mapping[str, Any] | None = None,
) -> set[int]:
    """One lockstep step: the waiting requests grouped by role and generation kwargs, each group sent in
    one backend call, each reply handed to its game; returns ``id()`` of the episodes whose call failed."""
    groups: dict[tuple[str, str], list[tuple[LiveEpisode, Request, dict[str, Any]]]] = {}
    for ep, request in waiting:
        kwargs = merged_gen_kwargs(task, request, gen_kwargs_override, judge_gen_kwargs)
        groups.setdefault((request.role, _gen_key(kwargs)), []).append((ep, request, kwargs))
    failed: set[int] = set()
    for (role, _), members in groups.items():
        lm = lms.get(role) or lms["player"]
        prompts = [lm.apply_chat_template(request.messages) for _, request, _ in members]
        replies = call_backend(lm, prompts, members[0][2], retry, task=task.name, role=role)
        for (ep, request, _), reply in zip(members, replies):
            last = request.messages[-1]["content"] if request.messages else ""
            if isinstance(reply, BackendFailure):
                ep.error = reply.message
                ep.calls.append({"role": role, "prompt": last, "reply": None, "error": reply.message})
                failed.add(id(ep))
            else:
                call = {"role": role, "prompt": last, **capped_reply(reply, retry.max_reply_chars, task.name)}
                ep.calls.append(call)
                ep.game.on_reply(call["reply"])
    return failed


def capped_reply(reply: str, limit: int | None, task: str) -> dict[str, Any]:
    """``{"reply": reply}``, or the reply cut to ``limit`` characters with ``cut_from`` (its length), said in a warning."""
    if limit is None or len(reply) <= limit:
        return {"reply": reply}
    log.warning("%s: a reply of %d characters was cut to %d (--max_reply_chars; cut_from in the episode's calls)", task, len(reply), limit)
    return {"reply": reply[:limit], CUT_KEY: len(reply)}


def episode_record(task: TaskSpec, ep: LiveEpisode, seed: int, settings_id: str | None = None) -> EpisodeRecord:
    """The record of one finished (or failed) episode (:func:`multiturn.engine.record.make_record`)."""
    failed = ep.error is not None
    return make_record(
        task=task.name,
        instance=ep.instance,
        seed=seed,
        calls=ep.calls,
        transcript=ep.game.transcript,
        scores={} if failed else ep.game.scores(),
        extras={} if failed else ep.game.record(),
        error=ep.error,
        settings_id=settings_id,
    )
