"""A GPU pool for one node: a model starts as soon as enough GPUs are free, longest expected work first.

:func:`schedule` is the plan: list scheduling of jobs (one per model: GPUs per replica, expected seconds
per replica count) on ``n`` GPUs, greedy in priority order (a job that does not fit lets a later, smaller
one start: backfilling), each job on the lowest free GPU ids. :func:`choose_replicas` adds data-parallel
replicas to a job only when the whole schedule's makespan gets strictly shorter (one replica at a time,
the largest gain first). :func:`run_pool` is the same rule at run time: the real models, their real
durations; each start takes free GPUs at once, each end frees them at once.
On a cluster SLURM places the jobs instead (``--executor slurm``); the pool is for one node.
"""

from __future__ import annotations

import heapq
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plumbing.errors import UserError


@dataclass(frozen=True)
class Job:
    name: str
    gpus: int  # GPUs of one replica (tensor-parallel size); 0 = needs none
    seconds: tuple[float, ...]  # expected seconds with 1, 2, ... replicas (one entry: no replicas possible)

    def duration(self, replicas: int) -> float:
        return self.seconds[replicas - 1]


@dataclass(frozen=True)
class Slot:
    job: Job
    gpus: tuple[int, ...]  # indices into the node's GPU list
    replicas: int
    start: float
    end: float


def priority(jobs: Sequence[Job]) -> list[Job]:
    """Longest expected work first (seconds with one replica, then GPUs), stable for ties."""
    return sorted(jobs, key=lambda j: (-j.duration(1), -j.gpus))


def schedule(jobs: Sequence[Job], n_gpus: int, replicas: Mapping[str, int] | None = None) -> list[Slot]:
    """List scheduling in :func:`priority` order: at time 0 and at every end, each waiting job that fits the
    free GPUs starts on the lowest free ids. Returns the slots in start order."""
    replicas = dict(replicas or {})
    waiting = priority(jobs)
    for job in waiting:
        if job.gpus * replicas.get(job.name, 1) > n_gpus:
            raise UserError(f"model {job.name} needs {job.gpus * replicas.get(job.name, 1)} GPUs but this node has {n_gpus}")
    free = list(range(n_gpus))
    running: list[tuple[float, int, tuple[int, ...]]] = []
    slots: list[Slot] = []
    now = 0.0
    while waiting:
        for job in list(waiting):
            r = replicas.get(job.name, 1)
            need = job.gpus * r
            if need <= len(free):
                taken, free = tuple(free[:need]), free[need:]
                slots.append(Slot(job, taken, r, now, now + job.duration(r)))
                heapq.heappush(running, (slots[-1].end, len(slots), taken))
                waiting.remove(job)
        if waiting:
            now, _, released = heapq.heappop(running)
            free = sorted(free + list(released))
            while running and running[0][0] <= now:
                free = sorted(free + list(heapq.heappop(running)[2]))
    return slots


def makespan(slots: Sequence[Slot]) -> float:
    return max((s.end for s in slots), default=0.0)


def busy_share(slots: Sequence[Slot], n_gpus: int) -> float:
    """GPU-seconds held by the jobs over ``n_gpus`` x the makespan."""
    span = makespan(slots)
    return sum(len(s.gpus) * (s.end - s.start) for s in slots) / (n_gpus * span) if span and n_gpus else 0.0


def choose_replicas(jobs: Sequence[Job], n_gpus: int) -> dict[str, int]:
    """Replica counts that shorten the makespan: starting from one each, repeatedly add the one replica
    (to any job that can take one and still fits the node) that shortens :func:`schedule`'s makespan the
    most; stop when no replica shortens it."""
    replicas = {j.name: 1 for j in jobs}
    best = makespan(schedule(jobs, n_gpus, replicas))
    while True:
        gains: list[tuple[float, str]] = []
        for job in jobs:
            r = replicas[job.name] + 1
            if r > len(job.seconds) or job.gpus == 0 or job.gpus * r > n_gpus:
                continue
            span = makespan(schedule(jobs, n_gpus, {**replicas, job.name: r}))
            if span < best - 1e-9:
                gains.append((span, job.name))
        if not gains:
            return replicas
        best, name = min(gains)
        replicas[name] += 1


def check_fits(needs: Mapping[str, int], gpus: Sequence[str]) -> None:
    """A model needing more GPUs than the node has (``needs``: GPUs per model name): one line, before anything starts."""
    too_big = [(name, n) for name, n in needs.items() if n > len(gpus)]
    if too_big:
        name, n = too_big[0]
        raise UserError(f"model {name} needs {n} GPUs but this node has {len(gpus)} ({','.join(gpus) or 'none'}); lower its `gpus:`")


def run_pool(
    order: Sequence[tuple[str, int]],
    gpus: Sequence[str],
    start: Callable[[str, list[str]], Any],
    on_event: Callable[[str, str, list[str]], None] | None = None,
) -> dict[str, Any]:
    """Run ``start(name, gpu_ids)`` for each ``(name, gpus_needed)`` of ``order`` (priority order) in a thread
    of its own as soon as that many GPUs are free (a later entry that fits starts before an earlier one that
    does not); freed GPUs are handed out at once. Returns each name's result; the first exception raised by
    a ``start`` is re-raised once the running ones end. ``on_event(kind, name, gpu_ids)``: "start"/"end".
    The calling thread only waits (with a timeout, so Ctrl-C and SIGTERM reach it)."""
    check_fits(dict(order), gpus)
    free = list(gpus)
    waiting = list(order)
    ended: queue.Queue = queue.Queue()
    results: dict[str, Any] = {}
    errors: list[BaseException] = []
    running = 0

    def work(name: str, ids: list[str]) -> None:
        try:
            results[name] = start(name, ids)
        except BaseException as exc:  # noqa: BLE001  (re-raised in the calling thread)
            errors.append(exc)
        finally:
            ended.put((name, ids))

    while waiting or running:
        for name, need in list(waiting):
            if need <= len(free) and not errors:
                ids, free = free[:need], free[need:]
                waiting.remove((name, need))
                running += 1
                if on_event is not None:
                    on_event("start", name, ids)
                threading.Thread(target=work, args=(name, ids), name=f"suite-{name}", daemon=True).start()
        if errors and not running:
            break
        name, ids = _next_end(ended)
        running -= 1
        free = [g for g in gpus if g in set(free) | set(ids)]  # back in the node's order
        if on_event is not None:
            on_event("end", name, ids)
    if errors:
        raise errors[0]
    return results


def _next_end(ended: queue.Queue) -> tuple[str, list[str]]:
    while True:
        try:
            return ended.get(timeout=0.5)
        except queue.Empty:
            continue
