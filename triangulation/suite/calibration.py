"""Rates measured by earlier runs: every finished cell's done-marker records its wall time, the machine, the
model and its work (requests, prompt and generated tokens: :func:`triangulation.suite.cells.write_marker`);
here those markers become each model's measured prefill and decode tokens/s on that machine, which
:mod:`triangulation.suite.estimate` uses in place of the table's (and says so).

A model's cells of one run share its server, so a cell's own wall time is not its work: the measure is the
model's **busy span**, the union of its cells' [start, end] intervals. Runs with only log-likelihood cells give
the prefill rate (their prompt tokens over their span); then runs with generated tokens give the decode rate
(their generated tokens over the span left after their prompts at that prefill rate). A cell whose marker
records its first model request (``first_request``: eval cells) counts from there: its start-up (imports,
task index, data, requests built) is measured apart, per task folder (:func:`cell_starts`), and is not
absorbed into the rates. A merged group's marker (its subtask cells have their own) is not counted twice.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from triangulation.suite.cells import MARKER
from triangulation.suite.spec import ModelSpec
from triangulation.suite.task_stats import CellWork
from triangulation.suite.throughput import Rates, gpu_kind, hardware, table_rates


@dataclass(frozen=True)
class Measured:
    prefill: float | None  # prompt tokens/s
    decode: float | None  # generated tokens/s of one sequence (batch 1; a batch of b: about b times that)
    why: str  # cells and span it comes from
    cell_starts: Mapping[str, float] = field(default_factory=dict)  # :func:`cell_starts`


def read_markers(root: Path) -> list[dict[str, Any]]:
    """Every done-marker under ``root/runs`` that records work and times (older markers do not)."""
    out = []
    runs = root / "runs"
    if not runs.is_dir():
        return out
    for path in sorted(runs.rglob(MARKER)):
        if any(p != path and p.name == MARKER for p in path.parent.rglob(MARKER)):
            continue  # a merged group: its subtask cells are counted
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("work") and data.get("started") is not None and data.get("hardware"):
            out.append(data)
    return out


def work_start(marker: dict[str, Any]) -> float:
    """When a cell's work began: its first model request where recorded, else its start."""
    first = marker.get("first_request")
    return float(first) if first is not None else float(marker["started"])


def start_key(task: str) -> str:
    """Cells whose start-ups are alike: those of one lm-eval task folder (one loader, one kind of data; MMLU's 57
    subtasks share one), else of one task name. ``task``: a suite cell's task (``entry`` or ``entry/leaf``)."""
    from triangulation.suite import task_index  # lm-eval's task index: lm_eval

    leaf = task.rsplit("/", 1)[-1]
    entry = task_index.entry(leaf)
    path = getattr(entry, "yaml_path", None)
    return f"folder: {Path(path).parent}" if path else f"task: {leaf}"


def cell_starts(markers: list[dict[str, Any]], cores: int) -> dict[str, float]:
    """The median start-up of the cells that recorded their first request, as one cell alone would take it, per
    :func:`start_key` (and ``""``: over every cell). Cells that start together share ``cores`` cores, so each
    start-up is scaled by ``cores / together`` when more cells than cores were starting (``together``: the cells
    whose start-ups overlap this one's)."""
    timed = [m for m in markers if m.get("first_request") is not None]
    alone: dict[str, list[float]] = {"": []}
    for m in timed:
        a, b = float(m["started"]), work_start(m)
        together = sum(1 for o in timed if float(o["started"]) <= b and work_start(o) >= a)
        seconds = (b - a) * min(1.0, cores / together)
        alone[""].append(seconds)
        alone.setdefault(start_key(str(m.get("cell", "")).split("/", 1)[-1]), []).append(seconds)
    return {k: statistics.median(v) for k, v in alone.items() if v}


def busy_span(intervals: Iterable[tuple[float, float]]) -> float:
    """Length of the union of intervals."""
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def measured_rates(markers: Iterable[dict[str, Any]], hardware: str, cores: int = 1) -> dict[str, Measured]:
    """model key -> measured rates on ``hardware`` (``cores``: its CPU cores; see the module docstring)."""
    by_key: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for m in markers:
        if m.get("hardware") == hardware and m.get("model_key"):
            by_key.setdefault(m["model_key"], {}).setdefault(str(m.get("model")), []).append(m)
    out = {}
    for key, runs in by_key.items():
        prefill_runs = [ms for ms in runs.values() if not _generated(ms)]
        decode_runs = [ms for ms in runs.values() if _generated(ms)]
        notes = []
        prefill = _prefill_rate(prefill_runs, notes)
        decode = _decode_rate(decode_runs, prefill, notes) if prefill else None
        starts = cell_starts([m for ms in runs.values() for m in ms], cores)
        if starts:
            notes.append(f"cell start-up {starts['']:.0f} s (median, one cell alone on {cores} cores; {len(starts) - 1} task folder(s))")
        if prefill or decode:
            out[key] = Measured(prefill, decode, "; ".join(notes), starts)
    return out


def _generated(ms: list[dict[str, Any]]) -> float:
    return sum(float(m["work"].get("gen_tokens") or 0) for m in ms)


def _span(ms: list[dict[str, Any]]) -> float:
    return busy_span((work_start(m), float(m["started"]) + float(m["seconds"])) for m in ms)


def _prompts(ms: list[dict[str, Any]]) -> float:
    return sum(float(m["work"]["prompt_tokens"]) for m in ms)


def _prefill_rate(runs: list[list[dict[str, Any]]], notes: list[str]) -> float | None:
    """Prompt tokens/s over the busy spans of runs of log-likelihood cells only."""
    span, p = sum(_span(ms) for ms in runs), sum(_prompts(ms) for ms in runs)
    if span <= 0:
        return None
    notes.append(f"prefill: {sum(map(len, runs))} log-likelihood cells, {p:,.0f} prompt tokens in {span:,.0f} s")
    return p / span


def _decode_rate(runs: list[list[dict[str, Any]]], prefill: float, notes: list[str]) -> float | None:
    """Generated tokens/s of one sequence: a run's generated tokens over the span left after its prompts (at
    ``prefill``) times the sequences it decoded at once (its requests, at most the requests its cells keep in
    flight: ``in_flight`` in each marker, 1 where older markers do not say). A batch's sequences decode together, so
    the engine's rate at another batch is this rate times that batch (up to the full batch)."""
    tokens = seconds = 0.0
    for ms in runs:
        left = _span(ms) - _prompts(ms) / prefill
        batch = min(sum(float(m["work"].get("requests") or 1) for m in ms), sum(float(m.get("in_flight") or 1) for m in ms))
        if left > 0:
            tokens += _generated(ms)
            seconds += left * max(batch, 1.0)
    if seconds <= 0:
        return None
    notes.append(f"decode: {sum(map(len, runs))} generating cells, {tokens:,.0f} generated tokens in {seconds:,.0f} sequence-seconds")
    return tokens / seconds


def measured_for(keys: Mapping[str, str], root: Path | None) -> dict[str, Measured]:
    """The rates measured on this machine by earlier runs into ``root`` (none without one), by suite model name;
    ``keys``: each model's key (:attr:`triangulation.suite.spec.ModelSpec.key`: engine, weights, arguments, GPUs)."""
    if root is None:
        return {}
    rates = measured_rates(read_markers(root), hardware(), os.cpu_count() or 1)
    return {name: rates[key] for name, key in keys.items() if key in rates}


def with_start_ups(work: Mapping[str, Sequence[CellWork]], measured: Mapping[str, Measured]) -> dict[str, list[CellWork]]:
    """Each model's cells with their measured start-ups (their :func:`start_key`'s median), where a run measured them."""
    out = {}
    for name, cells in work.items():
        got = measured.get(name)
        starts = got.cell_starts if got is not None else {}
        out[name] = [replace(c, start_s=starts.get(start_key(c.name))) for c in cells] if starts else list(cells)
    return out


def model_rates(models: Sequence[ModelSpec], measured: Mapping[str, Measured], gpu: str | None = None) -> dict[str, Rates]:
    """Each model's replica rates: the throughput table's for its engine, size and GPUs (``gpu``: the table's GPU,
    default this machine's, else H100), the measured ones where a run measured them."""
    kind = gpu or gpu_kind(hardware())
    out = {}
    for m in models:
        rates = table_rates(m.engine, kind, m.size or 8.0, max(m.gpu_count, 1))
        got = measured.get(m.name)
        out[m.name] = rates if got is None else rates.with_measured(got.prefill, got.decode, got.why)
    return out
