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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from plumbing.errors import UserError
from triangulation.suite import estimate
from triangulation.suite.calibration import Measured, measured_rates, read_markers, start_key
from triangulation.suite.cells import model_key
from triangulation.suite.pool import Job, Slot, busy_share, choose_replicas, makespan, schedule
from triangulation.suite.spec import ModelSpec, TaskEntry
from triangulation.suite.split import leaf_tasks
from triangulation.suite.task_stats import DEFAULT_PATH, ONE_PASS, Counts, read_plan_counts, sum_counts, table_counts
from triangulation.suite.throughput import gpu_kind, hardware, table_rates

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


@dataclass(frozen=True)
class ModelCost:
    """One model's cells, how it runs (:class:`estimate.Setup`) and its pool job (seconds with 1, 2, ... replicas)."""

    job: Job
    cells: list[estimate.CellWork]
    setup: estimate.Setup

    def breakdown(self, replicas: int = 1) -> estimate.Breakdown:
        return estimate.breakdown(self.cells, self.setup, self.job.gpus, replicas)

    def sources(self) -> dict[str, str]:
        """Where each number comes from: the two rates, and how many cells were counted or taken from the table."""
        counted = sum(1 for c in self.cells if c.counts.source == "counted")
        start = self.setup.cell_start_s
        return {
            **self.setup.rates.sources,
            "cell_start": f"measured: {start:.0f} s before a cell's first request"
            if start
            else "table: 0 s (a GPU node's cells start in seconds)",
            "work": f"{counted} of {len(self.cells)} cells counted by the plan, the rest from the table",
        }


def model_cost(
    model: ModelSpec,
    tasks: Sequence[TaskEntry],
    n_gpus: int,
    leaves: Mapping[str, Sequence[str]] | None = None,
    counts: Mapping[str, Mapping[str, Counts]] | None = None,
    need: int | None = None,
    split: bool | None = None,
    measured: Mapping[str, Measured] | None = None,
    gpu: str | None = None,
) -> ModelCost:
    """A model's expected seconds (:mod:`triangulation.suite.estimate`) of ``tasks`` with 1, 2, ... replicas.
    ``leaves``: each task entry's subtasks, each then its own cell where the entry is split (``split``, default: the
    entry's ``split:`` option), else the entry is one cell; ``counts``: the plan's counts per task entry and leaf
    (else the table's); ``measured``: rates measured on this machine per model key (else the table's); ``gpu``:
    the table's GPU (default: this machine's, else H100)."""
    gpus = model.gpu_count if need is None else need
    cells: list[estimate.CellWork] = []
    for t in tasks:
        parts = list((leaves or {}).get(t.name) or [t.name])
        work = dict((counts or {}).get(t.name) or {})
        if set(work) != set(parts) and not (len(parts) == 1 and work):
            path = ONE_PASS if model.served and t.runner == "eval" else DEFAULT_PATH  # served: the one-pass client
            work = table_counts(t.name, parts, path=path, limit=t.options.get("limit"))
        batch = t.options.get("batch_size") or model.batch_size
        batch = batch if isinstance(batch, int) else 0
        if split if split is not None else bool(t.options.get("split")):
            cells += [estimate.CellWork(f"{t.name}/{leaf}", t.name, t.runner, c, batch) for leaf, c in work.items()]
        else:
            cells.append(estimate.CellWork(t.name, t.name, t.runner, sum_counts(list(work.values())), batch))
    setup = model_setup(model, max(gpus, 1), measured, gpu)
    got = (measured or {}).get(model_key(model))
    if got is not None and got.cell_starts:
        cells = [replace(c, start_s=got.cell_starts.get(start_key(c.name))) for c in cells]
    most = n_gpus // gpus if model.engine == "vllm" and gpus and n_gpus else 1
    seconds = tuple(estimate.model_seconds(cells, setup, r) for r in range(1, max(most, 1) + 1))
    return ModelCost(Job(model.name, gpus, seconds), cells, setup)


def model_setup(model: ModelSpec, gpus: int, measured: Mapping[str, Measured] | None = None, gpu: str | None = None) -> estimate.Setup:
    """The table's rates for the model's engine, size and GPUs, the measured ones where a run measured them."""
    engine = "hf" if model.engine == "hf" else "vllm"
    rates = table_rates(engine, gpu or gpu_kind(hardware()), model.size or 8.0, gpus)
    got = (measured or {}).get(model_key(model))
    if got is not None:
        rates = rates.with_measured(got.prefill, got.decode, got.why)
    start = estimate.HF_LOAD_S if engine == "hf" else estimate.SERVER_START_S
    cell_start = got.cell_starts.get("", 0.0) if got is not None else 0.0
    return estimate.Setup(engine, rates, start, model.num_concurrent, cell_start_s=cell_start, cores=os.cpu_count() or 1)


def model_job(
    model: ModelSpec,
    tasks: Sequence[TaskEntry],
    n_gpus: int,
    leaves: Mapping[str, Sequence[str]] | None = None,
    counts: Mapping[str, Mapping[str, Counts]] | None = None,
    need: int | None = None,
    split: bool | None = None,
) -> Job:
    """:func:`model_cost`'s pool job."""
    return model_cost(model, tasks, n_gpus, leaves, counts, need, split).job


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


def pool_placements(suite: Any, gpus: Sequence[str], replicas: bool = True, root: Path | None = None) -> list[Placement]:
    """The run's placements: the pool's on a GPU node, else one model after another. Expected work as the plan
    has it (:func:`suite_costs`): the counts of a ``--dry_run`` into ``root`` and the rates measured there."""
    if not gpus:
        return place(suite.models, [])
    costs = suite_costs(suite, len(gpus), root)
    return place_pool(suite.models, gpus, [c.job for c in costs])


def suite_costs(
    suite: Any,
    n_gpus: int,
    root: Path | None = None,
    counts: Mapping[str, Mapping[str, Mapping[str, Counts]]] | None = None,
    leaves: Mapping[str, Sequence[str]] | None = None,
    gpu: str | None = None,
) -> list[ModelCost]:
    """Each model's cost, the one estimate of the plan, the runner and ``benchmarks/battery_makespan.py``: the
    plan's counts (given, else ``root/suite_plan.json``, else the table), each split entry's and play group's
    leaves (given, else lm-eval's index and the play registry), rates measured by earlier runs into ``root``."""
    if counts is None:
        counts = read_plan_counts(root) if root is not None else {}
    if leaves is None:
        leaves = {t.name: leaf_tasks(t) for t in suite.tasks if t.runner == "play" or t.options.get("split")}
    measured = measured_rates(read_markers(root), hardware(), os.cpu_count() or 1) if root is not None else {}
    return [model_cost(m, suite.tasks, n_gpus, leaves, counts.get(m.name), measured=measured, gpu=gpu) for m in suite.models]


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
    parts = [c.breakdown(p.replicas) for c, p in zip(costs, placements)]
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
        "work_share_by_task": estimate.shares(by_task),
        "sources": {c.job.name: c.sources() for c in costs},
    }
    return placements, summary
