"""Which GPUs each suite model runs on, and which models run at once (``triangulate suite --gpus``).

The node's GPUs come from ``--gpus 0,1,...``, else ``CUDA_VISIBLE_DEVICES``, else every GPU that
``nvidia-smi -L`` lists; a machine without any has none, and its models run one after another on
whatever device their ``model_args`` name. Each model needs ``gpus:`` GPUs (default 1) per replica.

On a GPU node the models share a pool (:func:`place_pool`, :mod:`triangulation.suite.pool`): a model
starts as soon as enough GPUs are free, longest expected work first (:mod:`triangulation.suite.estimate`),
and an ``engine: vllm`` model gets data-parallel replicas when that shortens the sweep. :func:`place`
is the older rule, *waves* (largest first; a wave's models at once, the next wave when it is done),
kept for comparison (``benchmarks/battery_makespan.py``). A model needing more GPUs than the node has
is a one-line error before anything starts. Each model's cells (and its server) see only their GPUs
through ``CUDA_VISIBLE_DEVICES``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbing.errors import UserError
from triangulation.suite.counting import model_costs
from triangulation.suite.estimate import ModelCost, shares
from triangulation.suite.pool import Job, Slot, busy_share, check_fits, choose_replicas, makespan, schedule
from triangulation.suite.spec import ModelSpec

SMI_LINE = re.compile(r"^GPU (\d+):", re.MULTILINE)


@dataclass(frozen=True)
class Placement:
    model: ModelSpec
    gpus: tuple[str, ...] | None  # device ids for CUDA_VISIBLE_DEVICES; () = none visible; None = no GPU inventory
    wave: int  # models of one wave run at once (waves); 0 for every model of a pool
    replicas: int = 1  # data-parallel replicas (vLLM's --data-parallel-size); gpus holds all of them
    start: float | None = None  # expected start and end, seconds after the sweep starts (pool)
    end: float | None = None


def parse_gpus(value: str) -> list[str]:
    """``"0,1,3"`` -> ``["0", "1", "3"]`` (ids or UUIDs as CUDA_VISIBLE_DEVICES takes them); ``""`` -> none."""
    ids = [g.strip() for g in value.split(",") if g.strip()]
    dup = sorted({g for g in ids if ids.count(g) > 1})
    if dup:
        raise UserError(f"--gpus: GPU {dup[0]} is listed twice")
    return ids


def nvidia_smi_gpus() -> list[str]:
    """The indices ``nvidia-smi -L`` lists (none when it is missing or fails)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return SMI_LINE.findall(out)


def gpu_inventory(flag: str | None, env: Mapping[str, str] | None = None) -> list[str]:
    """The GPUs the suite may use: ``--gpus``, else ``CUDA_VISIBLE_DEVICES``, else ``nvidia-smi -L``."""
    env = os.environ if env is None else env
    if flag is not None:
        return parse_gpus(flag)
    if env.get("CUDA_VISIBLE_DEVICES") is not None:
        return parse_gpus(env["CUDA_VISIBLE_DEVICES"])
    return nvidia_smi_gpus()


def place(models: Sequence[ModelSpec], gpus: Sequence[str], need: Mapping[str, int] | None = None) -> list[Placement]:
    """Waves of models on disjoint GPUs, largest first (first fit); in the suite's model order.

    ``need`` overrides a model's ``gpus:`` by name (SLURM's ``gpus_per_model``). With no GPUs at all
    every model is its own wave (one after another, as on a CPU machine).
    """
    need = dict(need or {})
    wants = {m.name: need.get(m.name, m.gpu_count) for m in models}
    if not gpus:
        return [Placement(m, None, i) for i, m in enumerate(models)]
    too_big = [m for m in models if wants[m.name] > len(gpus)]
    if too_big:
        m = too_big[0]
        raise UserError(
            f"model {m.name} needs {wants[m.name]} GPUs but this node has {len(gpus)} ({','.join(gpus) or 'none'}); lower its `gpus:`"
        )
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
    end; replicas where they shorten the makespan (:func:`triangulation.suite.pool.choose_replicas`)."""
    if not gpus:
        return [Placement(m, None, i) for i, m in enumerate(models)]
    check_fits({j.name: j.gpus for j in jobs}, gpus)
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
