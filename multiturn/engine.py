"""The lockstep engine: plays a task's episodes on lm-eval backends and writes their records.

At every step each live episode that waits for a model says what it wants to send
(``Game.next_request``); the engine renders each request with ``lm.apply_chat_template``, sends
all requests of one role (and one set of generation kwargs) in one ``generate_until`` call, and
hands each reply back (``Game.on_reply``). An episode that finishes leaves the window at once and
the next queued episode takes its place, so one long episode never holds the others back.

Backend errors are retried with exponential backoff; after the last attempt the episodes of that
call are recorded as ``failed`` (a backend fault, not the model's) and the run goes on. Finished
episodes are appended to ``episodes_<task>.jsonl`` as they end (see :mod:`multiturn.results`);
the same command resumes a killed run. Under ``accelerate launch`` every rank plays its shard of
the pending episodes and rank 0 gathers the records, writes them and computes the metrics.
"""

from __future__ import annotations

import json
import logging
import math
import random
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from lm_eval.api.instance import Instance
from tqdm.auto import tqdm

from multiturn import results as res
from multiturn.backends import barrier, gather_to_rank0, rank_and_world, scrub_secrets
from multiturn.game import Game, Request, TaskSpec
from plumbing.stats import mean_of_keys
from plumbing.errors import UserError

log = logging.getLogger(__name__)

#: roles --gen_kwargs applies to (the evaluated model's turns); judges keep the protocol's kwargs.
OVERRIDE_ROLES: tuple[str, ...] = ("player", "player_b")
#: episodes in flight at once by default; a kill loses at most these.
DEFAULT_MAX_LIVE = 32


@dataclass
class RetryPolicy:
    """How often and how patiently a failing ``generate_until`` call is retried.

    ``timeout`` (seconds, None = wait forever) bounds one ``generate_until`` call: a call still running
    then counts as a failed attempt (``TimeoutError``) and is retried like any backend error. The call
    runs in a daemon thread that is abandoned, not killed (Python cannot stop a thread): use it for API
    backends that can hang; a local model keeps computing the abandoned batch in the background.
    """

    attempts: int = 4
    base_delay: float = 2.0
    max_delay: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    timeout: float | None = None

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based): base * 2**attempt, capped."""
        return min(self.max_delay, self.base_delay * (2**attempt))


@dataclass
class _Episode:
    instance: dict[str, Any]
    game: Game
    calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def id(self) -> str:
        return str(self.instance["id"])


class _BackendFailure:
    """Placeholder reply for a request whose backend call failed after every retry."""

    def __init__(self, message: str):
        self.message = message


def merged_gen_kwargs(
    task: TaskSpec, request: Request, override: Mapping[str, Any] | None, judge_override: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Task defaults < the request's own kwargs < the user's ``--gen_kwargs`` (player roles) or
    ``--judge_gen_kwargs`` (the judge role)."""
    kwargs = {**dict(task.gen_kwargs), **dict(request.gen_kwargs)}
    if override and request.role in OVERRIDE_ROLES:
        kwargs.update(override)
    if judge_override and request.role == "judge":
        kwargs.update(judge_override)
    return kwargs


def select_instances(instances: Sequence[Mapping[str, Any]], limit: int | float | None) -> list[dict[str, Any]]:
    """The first ``limit`` instances (a float in (0, 1) is a fraction, as in lm-eval); ids must be unique."""
    items = [dict(inst) for inst in instances]
    ids = [str(inst.get("id", "")) for inst in items]
    if any(not i for i in ids):
        raise ValueError("every instance needs a non-empty 'id'")
    if len(set(ids)) != len(ids):
        raise ValueError("instance ids are not unique")
    if limit is None:
        return items
    if isinstance(limit, float) and 0 < limit < 1:
        return items[: int(math.ceil(len(items) * limit))]
    if limit < 0:
        raise UserError(f"--limit must be positive, got {limit}")
    return items[: int(limit)]


def call_backend(lm, prompts: list[str], gen_kwargs: dict[str, Any], retry: RetryPolicy) -> list[str | _BackendFailure]:
    """One ``generate_until`` call for ``prompts`` with retries; a batch that keeps failing is split so
    that only the requests that fail alone are reported as failures."""
    last_error: Exception | None = None
    for attempt in range(max(1, retry.attempts)):
        try:
            return _generate_within(lm, prompts, gen_kwargs, retry.timeout)
        except Exception as exc:  # any backend error: network, rate limit, OOM, server 5xx
            last_error = exc
            log.warning("generate_until failed (attempt %d/%d): %s", attempt + 1, retry.attempts, _describe(exc))
            if attempt + 1 < retry.attempts:
                retry.sleep(retry.delay(attempt))
    if len(prompts) == 1:
        return [_BackendFailure(_describe(last_error))]
    out: list[str | _BackendFailure] = []
    for prompt in prompts:  # isolate the culprits: one more attempt each
        try:
            out.extend(_generate_within(lm, [prompt], gen_kwargs, retry.timeout))
        except Exception as exc:
            out.append(_BackendFailure(_describe(exc)))
    return out


def _describe(exc: BaseException | None) -> str:
    """``Type: message`` of a backend error, credentials removed (it goes to logs and the episode record)."""
    return scrub_secrets(f"{type(exc).__name__}: {exc}")


def _generate_within(lm, prompts: list[str], gen_kwargs: dict[str, Any], timeout: float | None) -> list[str]:
    """``_generate``, raising ``TimeoutError`` when it has not returned after ``timeout`` seconds."""
    if timeout is None or timeout <= 0:
        return _generate(lm, prompts, gen_kwargs)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["replies"] = _generate(lm, prompts, gen_kwargs)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="generate_until", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError(f"generate_until did not return within {timeout:g} s ({len(prompts)} requests)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["replies"]


def _generate(lm, prompts: list[str], gen_kwargs: dict[str, Any]) -> list[str]:
    requests = [Instance("generate_until", {}, (prompt, dict(gen_kwargs)), i) for i, prompt in enumerate(prompts)]
    try:
        replies = lm.generate_until(requests, disable_tqdm=True)
    except TypeError as exc:
        if "disable_tqdm" not in str(exc):
            raise
        replies = lm.generate_until(requests)
    if len(replies) != len(prompts):
        raise RuntimeError(f"backend returned {len(replies)} replies for {len(prompts)} requests")
    return ["" if r is None else str(r) for r in replies]


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
) -> list[dict[str, Any]]:
    """Play ``instances`` in lockstep and return their records (in finishing order).

    ``on_finish(record)`` is called as each episode ends (the engine uses it to append to the JSONL).
    """
    retry = retry or RetryPolicy()
    window = len(instances) if not max_live or max_live <= 0 else max_live
    queue = deque(dict(inst) for inst in instances)
    live: list[_Episode] = []
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

    def finish(ep: _Episode) -> None:
        record = episode_record(task, ep, seed)
        records.append(record)
        if on_finish is not None:
            on_finish(record)
        bar.update(1)

    try:
        while queue or live:
            while queue and len(live) < window:
                inst = queue.popleft()
                live.append(_Episode(inst, task.make_game(inst, seed)))
            waiting: list[tuple[_Episode, Request]] = []
            still: list[_Episode] = []
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
            groups: dict[tuple[str, str], list[tuple[_Episode, Request, dict[str, Any]]]] = {}
            for ep, request in waiting:
                kwargs = merged_gen_kwargs(task, request, gen_kwargs_override, judge_gen_kwargs)
                groups.setdefault((request.role, _gen_key(kwargs)), []).append((ep, request, kwargs))
            failed: set[int] = set()
            for (role, _), members in groups.items():
                lm = lms.get(role) or lms["player"]
                prompts = [lm.apply_chat_template(request.messages) for _, request, _ in members]
                replies = call_backend(lm, prompts, members[0][2], retry)
                for (ep, request, _), reply in zip(members, replies):
                    last = request.messages[-1]["content"] if request.messages else ""
                    if isinstance(reply, _BackendFailure):
                        ep.error = reply.message
                        ep.calls.append({"role": role, "prompt": last, "reply": None, "error": reply.message})
                        failed.add(id(ep))
                    else:
                        ep.calls.append({"role": role, "prompt": last, "reply": reply})
                        ep.game.on_reply(reply)
            if failed:
                for ep in live:
                    if id(ep) in failed:
                        finish(ep)
                live = [ep for ep in live if id(ep) not in failed]
    finally:
        bar.close()
    return records


def episode_record(task: TaskSpec, ep: _Episode, seed: int) -> dict[str, Any]:
    """The JSONL record of one finished (or failed) episode."""
    record: dict[str, Any] = {
        "id": ep.id,
        "task": task.name,
        "seed": seed,
        "failed": ep.error is not None,
        "error": ep.error,
        "instance": ep.instance,
        "transcript": list(ep.game.transcript) or ep.calls,
        "scores": {} if ep.error is not None else dict(ep.game.scores()),
    }
    if ep.error is None:
        for key, value in ep.game.record().items():
            record.setdefault(key, value)
    return record


def _uses_default_aggregate(task: TaskSpec) -> bool:
    return type(task).aggregate is TaskSpec.aggregate


def summarize(task: TaskSpec, records: Sequence[Mapping[str, Any]], n_original: int) -> dict[str, Any]:
    """Task metrics from finished records (failed episodes left out and counted)."""
    ok = [r for r in records if not r.get("failed")]
    scores = [dict(r.get("scores", {})) for r in ok]
    metrics = task.aggregate(scores) if scores else {}
    stderr: dict[str, Any] = {}
    if _uses_default_aggregate(task):
        for key in mean_of_keys(scores):
            stderr[key] = res.stderr_of_mean(s.get(key, float("nan")) for s in scores)
    return {
        "task": task.name,
        "metrics": metrics,
        "stderr": stderr,
        "higher_is_better": task.higher_is_better(),
        "config": task.config(),
        "version": getattr(task, "version", 1.0),
        "n_samples": {"original": n_original, "effective": len(ok)},
        "n_failed": len(records) - len(ok),
        "records": list(records),
    }


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed % (2**32))
    except ImportError:  # pragma: no cover
        pass
    try:
        import torch

        torch.manual_seed(seed)
    except ImportError:  # pragma: no cover
        pass


def run_task(
    task: TaskSpec,
    lms: Mapping[str, Any],
    *,
    limit: int | float | None = None,
    seed: int = 1234,
    output_dir: str | Path | None = None,
    model_name: str = "model",
    overwrite: bool = False,
    gen_kwargs_override: Mapping[str, Any] | None = None,
    judge_gen_kwargs: Mapping[str, Any] | None = None,
    progress: bool = True,
    max_live: int | None = DEFAULT_MAX_LIVE,
    retry: RetryPolicy | None = None,
) -> dict[str, Any]:
    """Play one task and return its summary (``metrics``, ``stderr``, ``n_samples``, ``records``, ...).

    With ``output_dir`` the records go to ``output_dir/model_name/episodes_<task>.jsonl`` and an
    existing file is resumed (finished episodes skipped) unless ``overwrite``. Under a distributed
    LM every rank must call this; only rank 0's return value holds the metrics (others get
    ``{"task": ..., "rank": r}``).
    """
    if "player" not in lms:
        raise ValueError("lms needs a 'player' backend")
    lm = lms["player"]
    rank, world = rank_and_world(lm)
    all_instances = task.instances(seed)
    instances = select_instances(all_instances, limit)
    wanted = [str(inst["id"]) for inst in instances]
    _seed_everything(seed + rank)

    done: dict[str, dict[str, Any]] = {}
    main_path: Path | None = None
    write_path: Path | None = None
    if output_dir is not None:
        model_dir = Path(output_dir) / model_name
        main_path = res.episodes_path(model_dir, task.name)
        parts = sorted(model_dir.glob(f"episodes_{task.name}.rank*.jsonl"))
        if rank == 0:
            if overwrite:
                for path in [main_path, *parts]:
                    path.unlink(missing_ok=True)
            elif main_path.exists() or parts:
                kept = res.finished_records([main_path, *parts])
                res.rewrite_records(main_path, kept.values())  # drops truncated lines and failed episodes
                for path in parts:
                    path.unlink(missing_ok=True)
        barrier(lm)
        all_done = res.finished_records([main_path])
        done = {i: all_done[i] for i in wanted if i in all_done}
        write_path = main_path if world <= 1 else res.episodes_path(model_dir, task.name, rank)

    pending = [inst for inst in instances if str(inst["id"]) not in done]
    mine = pending[rank::world]
    writer = res.EpisodeWriter(write_path) if write_path is not None else None
    try:
        new_records = play_episodes(
            task,
            mine,
            lms,
            seed=seed,
            on_finish=writer.write if writer else None,
            gen_kwargs_override=gen_kwargs_override,
            judge_gen_kwargs=judge_gen_kwargs,
            max_live=max_live,
            retry=retry,
            progress=progress,
            position=rank,
            initial=len(done) if world <= 1 else 0,
            total=len(instances) if world <= 1 else len(mine),
        )
    finally:
        if writer:
            writer.close()

    if world > 1:
        gathered = gather_to_rank0(lm, new_records)
        if rank != 0:
            barrier(lm)
            return {"task": task.name, "rank": rank}
        new_records = [r for part in gathered or [] for r in part]
        if main_path is not None:
            with res.EpisodeWriter(main_path) as main_writer:
                for record in new_records:
                    main_writer.write(record)
            for path in main_path.parent.glob(f"episodes_{task.name}.rank*.jsonl"):
                path.unlink(missing_ok=True)
        barrier(lm)

    by_id = {**done, **{str(r["id"]): r for r in new_records}}
    ordered = [by_id[i] for i in wanted if i in by_id]
    return summarize(task, ordered, len(all_instances))


def run_tasks(
    names: Sequence[str],
    lms: Mapping[str, Any],
    *,
    output_dir: str | Path | None = None,
    model_name: str = "model",
    config: Mapping[str, Any] | None = None,
    task_args: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> tuple[dict[str, Any] | None, Path | None]:
    """Run tasks and groups by name; on rank 0 build the lm-eval-shaped results and write them.

    Returns ``(payload, results_path)``; ``(None, None)`` on ranks other than 0. ``kwargs`` go to
    :func:`run_task` (limit, seed, overwrite, gen_kwargs_override, judge_gen_kwargs, progress, max_live, retry);
    ``task_args`` go to every task's factory (each takes the options it declares).
    """
    from multiturn import registry

    groups = registry.group_names()
    requested_groups = {name: groups[name] for name in names if name in groups}
    started = time.perf_counter()
    summaries: dict[str, dict[str, Any]] = {}
    for name in registry.expand(list(names)):
        summary = run_task(registry.get_task(name, task_args), lms, output_dir=output_dir, model_name=model_name, **kwargs)
        if "metrics" in summary:
            summaries[name] = summary
    if rank_and_world(lms["player"])[0] != 0:
        return None, None
    payload = res.results_payload(
        summaries,
        groups=requested_groups,
        config=dict(config or {}),
        model_name=(config or {}).get("model_name", model_name),
        model_name_sanitized=model_name,
        total_seconds=time.perf_counter() - started,
    )
    path = res.write_results(Path(output_dir) / model_name, payload) if output_dir is not None else None
    return payload, path
