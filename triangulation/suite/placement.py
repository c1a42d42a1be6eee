"""Which GPUs each suite model runs on, and when: the plan of the node's GPU pool (``triangulate suite --gpus``).

The node's GPUs and whether a model fits them are the pool's (:mod:`triangulation.suite.pool`: ``--gpus``, else
``CUDA_VISIBLE_DEVICES``, else ``nvidia-smi -L``; checked before anything starts); a machine without any has
none, and its models run one after another on whatever device their ``model_args`` name. Each model needs
``gpus:`` GPUs (default 1) per replica.

On a GPU node the models share the pool (:func:`place_pool`): :func:`schedule` is the plan, list scheduling of
jobs (one per model: GPUs per replica, expected seconds per replica count, :class:`triangulation.suite.estimate.Job`)
on ``n`` GPUs, greedy in priority order, longest expected work first (:mod:`triangulation.suite.estimate`; a job
that does not fit lets a later, smaller one start: backfilling), each job on the lowest free GPU ids;
:func:`choose_replicas` gives an ``engine: vllm`` model data-parallel replicas only when the whole schedule's
makespan gets strictly shorter (one replica at a time, the largest gain first). The runner runs the models by the
same rule (:func:`triangulation.suite.pool.run_pool`). :func:`place` is the older rule, *waves* (largest first; a
wave's models at once, the next wave when it is done), kept for comparison (``benchmarks/battery_makespan.py``).
Each model's cells (and its server) see only their GPUs through ``CUDA_VISIBLE_DEVICES``.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbing.errors import UserError
from triangulation.suite.counting import model_costs
from triangulation.suite.estimate import Job, ModelCost, shares
from triangulation.suite.gpu_fit import check_fits
from triangulation.suite.spec import ModelSpec


@dataclass(frozen=True)
class Slot:
    """A job's place in the pool's plan (:func:`schedule`): its GPUs, its replicas, its expected start and end."""

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


@dataclass(frozen=True)
class Placement:
    model: ModelSpec
    gpus: tuple[str, ...] | None  # device ids for CUDA_VISIBLE_DEVICES; () = none visible; None = no GPU inventory
    wave: int  # models of one wave run at once (waves); 0 for every model of a pool
    replicas: int = 1  # data-parallel replicas (vLLM's --data-parallel-size); gpus holds all of them
    start: float | None = None  # expected start and end, seconds after the sweep starts (pool)
    end: float | None = None


def place(models: Sequence[ModelSpec], gpus: Sequence[str], need: Mapping[str, int] | None = None) -> list[Placement]:
    """Waves of models on disjoint GPUs, largest first (first fit); in the suite's model order.

    ``need`` overrides a model's ``gpus:`` by name (SLURM's ``gpus_per_model``). With no GPUs at all
    every model is its own wave (one after another, as on a CPU machine).
    """
    need = dict(need or {})
    wants = {m.name: need.get(m.name, m.gpu_count) for m in models}
    if not gpus:
        return [Placement(m, None, i) for i, m in enumerate(models)]
    check_fits(wants, gpus)
    order = sorted(range(len(models)), key=lambda i: (-wants[models[i].name], -(models[i].size or 0), i))
    free: list[list[str]] = []  # per wave: its GPUs not yet taken, in --gpus order
    placed: dict[int, Placement] = {}
    for i in order:
        m, n = models[i], wants[models[i].name]
        wave = next((k for k, left in enumerate(free) if len(left) >= n), None)
        if wave is None:
            free.append(list(gpus))
            wave = len(free) - 1
        taken, free[wave] = free[wave][:n], free[wave][n:]
        placed[i] = Placement(m, tuple(taken), wave)
    return [placed[i] for i in range(len(models))]


def place_pool(models: Sequence[ModelSpec], gpus: Sequence[str], jobs: Sequence[Job], replicas: bool = True) -> list[Placement]:
    """The pool's plan, in the suite's model order: each model's GPUs (replicas included), expected start and
    end; replicas where they shorten the makespan (:func:`choose_replicas`). Each job fits the node: the command
    checked them before anything started (:func:`triangulation.suite.gpu_fit.check_fits`; :func:`schedule` refuses one
    that does not)."""
    if not gpus:
        return [Placement(m, None, i) for i, m in enumerate(models)]
    counts = choose_replicas(jobs, len(gpus)) if replicas else {}
    slots = {s.job.name: s for s in schedule(jobs, len(gpus), counts)}
    out = []
    for m in models:
        s = slots[m.name]
        out.append(Placement(m, tuple(gpus[i] for i in s.gpus), 0, s.replicas, s.start, s.end))
    return out


def pool_placements(suite: Any, gpus: Sequence[str], replicas: bool = True, root: Path | None = None) -> list[Placement]:
    """The run's placements: the pool's on a GPU node, else one model after another. Expected work as the plan
    has it (:func:`triangulation.suite.counting.model_costs`): the counts of a ``--dry_run`` into ``root`` and the rates measured there."""
    return place_models(suite.models, gpus, model_costs(suite, len(gpus), root) if gpus else [])[0]


def waves(placements: Sequence[Placement]) -> list[list[Placement]]:
    """Placements grouped by wave, waves in order."""
    out: dict[int, list[Placement]] = {}
    for p in placements:
        out.setdefault(p.wave, []).append(p)
    return [out[k] for k in sorted(out)]


def gpu_env(placement: Placement, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a model's cells: ``base`` (default this process's) with its GPUs visible only."""
    env = dict(os.environ if base is None else base)
    if placement.gpus is not None:  # on a GPU node: its own GPUs only (none for a `gpus: 0` model)
        env["CUDA_VISIBLE_DEVICES"] = ",".join(placement.gpus)
    return env


def pool_estimate(models: Sequence[ModelSpec], gpus: Sequence[str], costs: Sequence[ModelCost]) -> tuple[list[Placement], dict[str, Any]]:
    """The pool's placements of ``costs`` on ``gpus`` and the node's expected figures: makespan, GPU shares (work:
    prefill and decode at the engine's full rate; held: GPUs held by a model, its start-up and idle included), GPU
    work by phase and by task entry, and per model where its numbers come from."""
    placements = place_pool(models, gpus, [c.job for c in costs])
    n = len(gpus)
    slots = [Slot(c.job, tuple(range(len(p.gpus or ()))), p.replicas, p.start, p.end) for c, p in zip(costs, placements)]
    span = makespan(slots)
    parts = [c.breakdowns[p.replicas - 1] for c, p in zip(costs, placements)]
    phases = {"prefill": sum(b.prefill for b in parts), "decode": sum(b.decode for b in parts), "start-up": sum(b.startup for b in parts)}
    by_task: dict[str, float] = {}
    for b in parts:
        for task, s in b.by_task.items():
            by_task[task] = by_task.get(task, 0.0) + s
    work = sum(b.work for b in parts)
    summary = {
        "makespan_h": round(span / 3600, 2),
        "busy_work": round(work / (n * span), 3) if span and n else None,
        "busy_held": round(busy_share(slots, n), 3),
        "gpu_hours_by_phase": {k: round(v / 3600, 2) for k, v in phases.items()},
        "work_share_by_task": shares(by_task),
        "sources": {c.job.name: dict(c.sources) for c in costs},
    }
    return placements, summary


#: the plan's ``expected.model`` on a GPU node: how its figures are made
POOL_MODEL = (
    "GPU pool, longest expected work first, replicas where they shorten the sweep; seconds from tokens "
    "(triangulation/suite/estimate.py: this plan's counts, else the task table; rates measured on this machine, else the throughput table)"
)


def place_models(
    models: Sequence[ModelSpec], gpus: Sequence[str], costs: Sequence[ModelCost], at_once: bool = False
) -> tuple[list[Placement], dict[str, Any]]:
    """The placements of a run or a ``--dry_run`` and the node's expected figures: the pool's from ``costs`` (made once,
    :func:`triangulation.suite.counting.model_costs`) on a GPU node (:func:`pool_estimate`); else no figures, and the
    models one after another (a CPU machine), or all at once (``at_once``: SLURM places each model's job)."""
    if not gpus:
        expected: dict[str, Any] = {"makespan_h": None, "busy_work": None, "busy_held": None, "model": None}
        return [Placement(m, None, 0 if at_once else i) for i, m in enumerate(models)], expected
    placements, expected = pool_estimate(models, gpus, costs)
    return placements, {**expected, "model": POOL_MODEL}
