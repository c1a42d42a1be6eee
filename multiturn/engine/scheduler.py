"""The lockstep scheduler: plays a task's episodes, batching every waiting request of one role.

At every step each live episode that waits for a model says what it wants to send
(``Game.next_request``); the scheduler renders each request with ``lm.apply_chat_template``, sends
all requests of one role (and one set of generation kwargs) in one ``generate_until`` call
(:func:`models.retry.call_backend`), and hands each reply back (``Game.on_reply``). An episode
that finishes leaves the window at once and the next queued episode takes its place, so one long
episode never holds the others back. An episode whose backend call fails after every retry ends as
``failed`` (a backend fault, not the model's) and the others go on.

With a turn log (:class:`multiturn.engine.turns.TurnLog`) every answered turn is stored as it is answered, and an
episode that has logged turns (a resumed run) is rebuilt before it joins the window by replaying them through a
fresh game (:func:`rebuild`): only the turns it never got answered are asked of the model.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm

from models.retry import BackendFailure, RetryPolicy, call_backend
from multiturn.engine.record import CUT_KEY, EpisodeRecord, make_record
from multiturn.engine.turns import TurnHook, TurnLog, Turns
from multiturn.game import Game, Request, TaskSpec
from plumbing.errors import UserError

log = logging.getLogger(__name__)

#: roles --gen_kwargs applies to (the evaluated model's turns); the judge gets --judge_gen_kwargs.
OVERRIDE_ROLES: tuple[str, ...] = ("player", "player_b")
#: episodes in flight at once by default; a kill loses at most their requests in flight (the turn log keeps the rest).
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


@dataclass(frozen=True)
class Asked:
    """One request made whole once (:func:`asked`): the game's request, the generation kwargs it is sent with and its
    digest, which the turn log stores with the reply and a resume compares (:func:`rebuild`)."""

    request: Request
    gen_kwargs: dict[str, Any]
    digest: str


#: the user's generation kwargs overrides: (``--gen_kwargs`` for the player roles, ``--judge_gen_kwargs``)
Overrides = tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]


def asked(task: TaskSpec, request: Request, overrides: Overrides) -> Asked:
    """``request`` with its generation kwargs (:func:`merged_gen_kwargs`) and its digest (:func:`request_digest`)."""
    kwargs = merged_gen_kwargs(task, request, *overrides)
    return Asked(request, kwargs, request_digest(request.messages, kwargs))


def request_digest(messages: Sequence[Mapping[str, Any]], gen_kwargs: Mapping[str, Any]) -> str:
    """The first 16 hex digits of the SHA-256 of a request (its messages and generation kwargs): a logged turn is
    replayed only into a game that asks the same."""
    text = json.dumps({"messages": list(messages), "gen_kwargs": dict(gen_kwargs)}, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


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


def check_gen_kwargs(kwargs: Mapping[str, Any] | None, flag: str) -> None:
    """A user override checked where it is given (``--gen_kwargs``, ``--judge_gen_kwargs``), by the rule
    :func:`with_override` applies: ``temperature=0`` means greedy, so it cannot go with ``do_sample=True``."""
    kwargs = kwargs or {}
    if is_zero(kwargs.get("temperature")) and str(kwargs.get("do_sample", "")).lower() == "true":
        raise UserError(f"{flag}: temperature=0 means greedy decoding; drop do_sample=True or give a positive temperature")


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
    turn_log: TurnLog | None = None,
    resumed: Turns | None = None,
) -> list[dict[str, Any]]:
    """Play ``instances`` in lockstep and return their records (in finishing order).

    ``on_finish(record)`` is called as each episode ends (the engine uses it to append to the JSONL); every
    record carries ``settings_id`` when given (the fingerprint of the run's settings). ``turn_log`` stores every
    answered turn as it is answered; ``resumed`` (episode id -> its logged turns) rebuilds those episodes mid-way.
    """
    retry = retry or RetryPolicy()
    overrides = (gen_kwargs_override, judge_gen_kwargs)
    resumed = resumed or {}
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
                live.append(rebuild(task, inst, seed, resumed.get(str(inst["id"]), []), overrides, retry.max_reply_chars))
            waiting: list[tuple[LiveEpisode, Asked]] = []
            still: list[LiveEpisode] = []
            for ep in live:
                request = None if ep.game.done else ep.game.next_request()
                if request is None:
                    finish(ep)
                else:
                    waiting.append((ep, asked(task, request, overrides)))
                    still.append(ep)
            live = still
            if not waiting:
                continue
            failed = send_step(task, waiting, lms, retry, turn_log)
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
    waiting: Sequence[tuple[LiveEpisode, Asked]],
    lms: Mapping[str, Any],
    retry: RetryPolicy,
    turn_log: TurnLog | None = None,
) -> set[int]:
    """One lockstep step: the waiting requests grouped by role and generation kwargs, each group sent in
    one backend call, each reply handed to its game (and stored in ``turn_log`` as it comes: :func:`ask`);
    returns ``id()`` of the episodes whose call failed."""
    groups: dict[tuple[str, str], list[tuple[LiveEpisode, Asked]]] = {}
    for ep, one in waiting:
        groups.setdefault((one.request.role, _gen_key(one.gen_kwargs)), []).append((ep, one))
    failed: set[int] = set()
    for (role, _), members in groups.items():
        replies = ask(task, lms.get(role) or lms["player"], role, members, retry, turn_log)
        for (ep, one), reply in zip(members, replies):
            if isinstance(reply, BackendFailure):
                ep.error = reply.message
                ep.calls.append({"role": role, "prompt": last_message(one.request), "reply": None, "error": reply.message})
                failed.add(id(ep))
            else:
                answer(task, ep, one.request, reply, retry.max_reply_chars)
    return failed


def ask(
    task: TaskSpec,
    lm: Any,
    role: str,
    members: Sequence[tuple[LiveEpisode, Asked]],
    retry: RetryPolicy,
    turn_log: TurnLog | None,
) -> list[str | BackendFailure]:
    """One backend call for the requests of one role and one set of generation kwargs. With ``turn_log`` each reply is
    logged as the backend hands it to lm-eval's cache hook (:class:`multiturn.engine.turns.TurnHook`), and every reply
    not logged so (or logged otherwise than returned) when the call returns."""
    prompts = [lm.apply_chat_template(one.request.messages) for _, one in members]
    turns = [] if turn_log is None else _turns(prompts, members, role)
    with TurnHook(lm, turn_log, turns) as hook:
        replies = call_backend(lm, prompts, members[0][1].gen_kwargs, retry, task=task.name, role=role)
    for (_, turn, episode, _, digest), reply in zip(turns, replies):
        if turn_log is not None and not isinstance(reply, BackendFailure) and hook.logged.get(episode) != reply:
            turn_log.write(episode, turn, role, digest, reply)
    return replies


def _turns(prompts: Sequence[str], members: Sequence[tuple[LiveEpisode, Asked]], role: str) -> list[tuple[str, int, str, str, str]]:
    """(rendered prompt, turn, episode id, role, request digest) of each request of one call, as the turn log keeps them."""
    return [(prompt, len(ep.calls), ep.id, role, one.digest) for prompt, (ep, one) in zip(prompts, members)]


def last_message(request: Request) -> str:
    return request.messages[-1]["content"] if request.messages else ""


def answer(task: TaskSpec, ep: LiveEpisode, request: Request, reply: str, max_reply_chars: int | None) -> None:
    """Hand ``reply`` (cut to ``max_reply_chars``) to the episode's game and keep the call."""
    call = {"role": request.role, "prompt": last_message(request), **capped_reply(reply, max_reply_chars, task.name)}
    ep.calls.append(call)
    ep.game.on_reply(call["reply"])


def rebuild(
    task: TaskSpec,
    instance: Mapping[str, Any],
    seed: int,
    turns: Sequence[Mapping[str, Any]],
    overrides: Overrides,
    max_reply_chars: int | None,
) -> LiveEpisode:
    """A fresh episode of ``instance`` with its logged ``turns`` replayed through its game (games never call models):
    each turn is handed back while the game asks the same role for the same request (messages and generation
    kwargs); from the first that differs on, the model is asked again."""
    ep = LiveEpisode(dict(instance), task.make_game(instance, seed))
    for number, turn in enumerate(turns):
        request = None if ep.game.done else ep.game.next_request()
        if request is None or request.role != turn["role"] or turn.get("request") != asked(task, request, overrides).digest:
            log.warning(
                "%s: episode %s: %d of %d logged turns fit the game; the rest is asked again", task.name, instance["id"], number, len(turns)
            )
            return rebuild(task, instance, seed, turns[:number], overrides, max_reply_chars)  # a fresh game: next_request once per reply
        answer(task, ep, request, turn["reply"], max_reply_chars)
    return ep


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
