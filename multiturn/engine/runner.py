"""Runs tasks: ``run_task`` plays one task's episodes and summarises them, ``run_tasks`` writes the results.

The pieces it puts together: :mod:`multiturn.engine.scheduler` plays the episodes in lockstep (with
:mod:`models.retry` for backend calls), :class:`multiturn.engine.store.TaskStore` owns the task's files (each
finished episode appended as it ends, each answered turn as it is answered; a killed run resumed from them, mid-episode),
:mod:`multiturn.engine.results` builds and writes the results JSON, and :mod:`multiturn.engine.distributed` shards the pending episodes over the ranks of an
``accelerate launch`` run (rank 0 gathers the records, writes them and computes the metrics).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from multiturn.engine import results as res
from multiturn.engine.distributed import barrier, gather_to_rank0, rank_and_world, shard
from multiturn.engine.scheduler import play_episodes
from multiturn.engine.settings import PlaySettings, TaskSettings
from multiturn.engine.store import TaskStore
from multiturn.engine.turns import Turns
from plumbing.locks import lock_all


def _seed_everything(seed: int) -> None:
    """Seed Python's generator, and numpy's and torch's where they are loaded (by a game or the model, which are
    imported before an episode starts): a chance or scripted player never pays for importing torch to seed it."""
    random.seed(seed)
    if (np := sys.modules.get("numpy")) is not None:
        np.random.seed(seed % (2**32))
    if (torch := sys.modules.get("torch")) is not None:
        torch.manual_seed(seed)


def _resume(lm: Any, store: TaskStore, wanted: list[str], settings: TaskSettings) -> tuple[dict[str, dict[str, Any]], Turns]:
    """Rank 0 checks the stored episodes' settings and compacts the task's files; every rank then reads the finished
    episodes among ``wanted`` and the logged turns of the unfinished ones. Returns (id -> finished record, id -> turns)."""
    if rank_and_world(lm)[0] == 0:
        store.check_settings(settings.episode_settings, overwrite=settings.overwrite)
        store.compact(overwrite=settings.overwrite)
    barrier(lm)
    all_done = store.finished()
    done = {i: all_done[i] for i in wanted if i in all_done}
    return done, store.stored_turns(i for i in wanted if i not in done)


def run_task(settings: TaskSettings, lms: Mapping[str, Any], *, progress: bool = True) -> dict[str, Any]:
    """Play one task and return its summary (``metrics``, ``stderr``, ``n_samples``, ``records``, ...).

    With ``settings.model_dir`` the records go to the task's episodes file there, every answered turn to its turn
    log, and stored episodes are resumed (finished ones skipped, unfinished ones rebuilt from their logged turns)
    unless ``settings.overwrite``, and only when they were played with the same settings
    (:attr:`~multiturn.engine.settings.TaskSettings.episode_settings`:
    :meth:`multiturn.engine.store.TaskStore.check_settings`). Under a distributed LM every rank must call this; only
    rank 0's return value holds the metrics (others get ``{"task": ..., "rank": r}``).
    """
    task = settings.task
    if "player" not in lms:
        raise ValueError("lms needs a 'player' backend")
    if not task.name:
        raise ValueError(f"{type(task).__qualname__} has no name: build it with multiturn.registry.get_task (its name is its registration)")
    lm = lms["player"]
    rank, world = rank_and_world(lm)
    instances, wanted, store = settings.instances, settings.wanted, settings.store
    _seed_everything(settings.seed + rank)

    done, resumed, writer, turn_log, settings_id = {}, {}, None, None, None
    if store is not None:
        done, resumed = _resume(lm, store, wanted, settings)
        writer, turn_log = store.writers(rank, world)
        settings_id = settings.settings_id  # every stored record carries it: a resume checks it when the settings file is gone

    pending = [inst for inst in instances if str(inst["id"]) not in done]
    mine = shard(pending, rank, world)
    try:
        new_records = play_episodes(
            task,
            mine,
            lms,
            seed=settings.seed,
            on_finish=writer.write if writer else None,
            gen_kwargs_override=settings.gen_kwargs,
            judge_gen_kwargs=settings.judge_gen_kwargs,
            max_live=settings.max_live,
            retry=settings.retry,
            progress=progress,
            position=rank,
            initial=len(done) if world <= 1 else 0,
            total=len(instances) if world <= 1 else len(mine),
            settings_id=settings_id,
            turn_log=turn_log,
            resumed=resumed,
        )
    finally:
        for log in filter(None, (writer, turn_log)):  # the records and turns written so far stay whole
            log.close()

    if world > 1:
        new_records = _gather(lm, rank, new_records, store)
        if new_records is None:
            return {"task": task.name, "rank": rank}
    by_id = {**done, **{str(r["id"]): r for r in new_records}}
    ordered = [by_id[i] for i in wanted if i in by_id]
    if store is not None and len(ordered) == len(wanted):
        store.drop_turns()  # every wanted episode has its record (failed ones are played again from the start)
    return res.summarize(task, ordered, len(settings.all_instances))


def _gather(lm: Any, rank: int, new_records: list[dict[str, Any]], store: TaskStore | None) -> list[dict[str, Any]] | None:
    """Every rank's new records on rank 0 (appended to the task's main episodes file there); None on other ranks."""
    gathered = gather_to_rank0(lm, new_records)
    if rank != 0:
        barrier(lm)
        return None
    records = [r for part in gathered or [] for r in part]
    if store is not None:
        store.append_gathered(records)
    barrier(lm)
    return records


def run_tasks(settings: PlaySettings, lms: Mapping[str, Any], *, progress: bool = True) -> tuple[dict[str, Any] | None, Path | None]:
    """Run the tasks and groups of ``settings``; on rank 0 build the lm-eval-shaped results and write them.

    Returns ``(payload, results_path)``; ``(None, None)`` on ranks other than 0. With ``settings.output_path``,
    rank 0 holds the lock of every task's episode file (:mod:`plumbing.locks`) from before the first episode until
    the results file is written: a second process on the same folder and task gets a one-line error naming this
    one's PID, or waits with ``settings.wait_lock``.
    """
    started = time.perf_counter()
    summaries: dict[str, dict[str, Any]] = {}
    plan = settings.plan
    rank = rank_and_world(lms["player"])[0]
    locked = [t.store.episodes for t in plan if t.store is not None] if rank == 0 else []
    with lock_all(locked, wait=settings.wait_lock):
        for task_settings in plan:
            task = task_settings.task
            summary = run_task(task_settings, lms, progress=progress)
            if "judge" in task.roles:  # SPLAT without --judge_model: the player judges itself, and the results say so
                summary["judge"] = "self" if lms.get("judge", lms["player"]) is lms["player"] else "separate"
            if "metrics" in summary:
                summaries[task.name] = summary
        if rank != 0:
            return None, None
        payload = res.play_payload(settings, summaries, lms["player"], time.perf_counter() - started)
        model_dir = settings.model_dir
        return payload, res.write_results(model_dir, payload) if model_dir is not None else None


def unchanged_results(settings: PlaySettings) -> Path | None:
    """The results file a resume of ``settings`` would only write again, or None when there is work to do.

    Nothing is left when, for every task, the stored episodes were played with these settings (the resume
    check's own rule: the task's settings file equals :attr:`TaskSettings.episode_settings` by
    :func:`multiturn.engine.store.same_settings`), every wanted episode has finished in its episodes file (no
    rank parts of an interrupted distributed run), and the newest results file that reports all these tasks
    (lm-eval runs of the model share the folder), written after every one of those episode files, reports each
    over exactly those episodes. Checked before any model is loaded (``settings.output_path`` given).
    """
    episode_files = []
    counts: dict[str, int] = {}
    for task_settings in settings.plan:
        store = task_settings.store
        if not store.played_with(task_settings.episode_settings):
            return None  # the run goes on, and its resume check names what changed
        done = store.finished()
        if any(i not in done for i in task_settings.wanted):
            return None
        episode_files.append(store.episodes)
        counts[task_settings.task.name] = len(task_settings.wanted)
    found = res.newest_results_of(settings.model_dir, list(counts))
    if found is None or found.path.stat().st_mtime < max(p.stat().st_mtime for p in episode_files):
        return None
    samples = found.data.get("n-samples") or {}
    return None if any((samples.get(t) or {}).get("effective") != n for t, n in counts.items()) else found.path
