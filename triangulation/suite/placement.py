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
from typing import Any

from plumbing.errors import UserError
from triangulation.suite import estimate
from triangulation.suite.pool import Job, choose_replicas, schedule
from triangulation.suite.spec import ModelSpec, TaskEntry
from triangulation.suite.split import leaf_tasks

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


def model_job(
    model: ModelSpec,
    tasks: Sequence[TaskEntry],
    n_gpus: int,
    leaves: Mapping[str, Sequence[str]] | None = None,
    tokens: Mapping[str, Mapping[str, int | None]] | None = None,
    need: int | None = None,
    split: bool | None = None,
) -> Job:
    """A model's pool job: expected seconds (:mod:`triangulation.suite.estimate`) of ``tasks`` with 1, 2, ...
    replicas. ``leaves``: each task entry's subtasks, each then its own cell where the entry is split
    (``split``, default: the entry's ``split:`` option), else they only look up App. H's figures and the
    entry is one cell;
    ``tokens``: counted prompt tokens per task entry and leaf (the plan's counts)."""
    gpus = model.gpu_count if need is None else need
    cells: list[estimate.CellWork] = []
    for t in tasks:
        parts = list((leaves or {}).get(t.name) or [t.name])
        ref = estimate.reference_seconds(_table_key(t), parts, (tokens or {}).get(t.name))
        if split if split is not None else bool(t.options.get("split")):
            cells += [estimate.CellWork(f"{t.name}/{leaf}", t.runner, s) for leaf, s in ref.items()]
        else:
            cells.append(estimate.CellWork(t.name, t.runner, sum(ref.values())))
    size = model.size or 8.0
    most = n_gpus // gpus if model.engine == "vllm" and gpus and n_gpus else 1
    seconds = tuple(
        estimate.model_seconds(cells, model.engine, size, max(gpus, 1), r, model.num_concurrent) for r in range(1, max(most, 1) + 1)
    )
    return Job(model.name, gpus, seconds)


def _table_key(t: TaskEntry) -> str:
    """The name App. H's table knows a task entry by: its own name, else its one lm-eval/play task."""
    if t.name in estimate.APP_H_MINUTES or t.name in estimate.APP_H_SHARED or len(t.tasks) != 1:
        return t.name
    return t.tasks[0]


def place_pool(models: Sequence[ModelSpec], gpus: Sequence[str], jobs: Sequence[Job], replicas: bool = True) -> list[Placement]:
    """The pool's plan, in the suite's model order: each model's GPUs (replicas included), expected start and
    end; replicas where they shorten the makespan (:func:`triangulation.suite.pool.choose_replicas`)."""
    if not gpus:
        return [Placement(m, None, i) for i, m in enumerate(models)]
    too_big = [j for j in jobs if j.gpus > len(gpus)]
    if too_big:
        j = too_big[0]
        raise UserError(f"model {j.name} needs {j.gpus} GPUs but this node has {len(gpus)} ({','.join(gpus)}); lower its `gpus:`")
    counts = choose_replicas(jobs, len(gpus)) if replicas else {}
    slots = {s.job.name: s for s in schedule(jobs, len(gpus), counts)}
    out = []
    for m in models:
        s = slots[m.name]
        out.append(Placement(m, tuple(gpus[i] for i in s.gpus), 0, s.replicas, s.start, s.end))
    return out


def pool_placements(suite: Any, gpus: Sequence[str], replicas: bool = True) -> list[Placement]:
    """The run's placements: the pool's on a GPU node (expected work from the suite alone: App. H and sizes;
    play groups' games looked up in App. H; ``split: true`` entries as their subtask cells), else one model
    after another."""
    if not gpus:
        return place(suite.models, [])
    leaves = {t.name: leaf_tasks(t) for t in suite.tasks if t.runner == "play" or t.options.get("split")}
    jobs = [model_job(m, suite.tasks, len(gpus), leaves) for m in suite.models]
    return place_pool(suite.models, gpus, jobs, replicas)


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
