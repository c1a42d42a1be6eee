"""Rates measured by earlier runs: every finished cell's done-marker records its wall time, the machine, the
model and its work (requests, prompt and generated tokens: :func:`triangulation.suite.cells.write_marker`);
here those markers become each model's measured prefill and decode tokens/s on that machine, which
:mod:`triangulation.suite.estimate` uses in place of the table's (and says so).

A model's cells of one run share its server, so a cell's own wall time is not its work: the measure is the
model's **busy span**, the union of its cells' [start, end] intervals. Runs with only log-likelihood cells give
the prefill rate (their prompt tokens over their span); then runs with generated tokens give the decode rate
(their generated tokens over the span left after their prompts at that prefill rate). A cell whose marker
records its first model request (``first_request``: eval cells) counts from there: its start-up (imports,
task index, data, requests built) is measured apart, as the model's cell start-up (:func:`cell_start`), and
is not absorbed into the rates. A merged group's marker (its subtask cells have their own) is not counted twice.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKER = ".suite_done.json"


@dataclass(frozen=True)
class Measured:
    prefill: float | None  # prompt tokens/s
    decode: float | None  # generated tokens/s
    why: str  # cells and span it comes from
    cell_start: float | None = None  # a cell's start-up before its first request, alone on ``cores`` cores


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


def cell_start(markers: list[dict[str, Any]], cores: int) -> float | None:
    """The median start-up of the cells that recorded their first request, as one cell alone would take it:
    cells that start together share ``cores`` cores, so each start-up is scaled by ``cores / together`` when
    more cells than cores were starting (``together``: the cells whose start-ups overlap this one's)."""
    timed = [m for m in markers if m.get("first_request") is not None]
    alone = []
    for m in timed:
        a, b = float(m["started"]), work_start(m)
        together = sum(1 for o in timed if float(o["started"]) <= b and work_start(o) >= a)
        alone.append((b - a) * min(1.0, cores / together))
    return statistics.median(alone) if alone else None


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
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for m in markers:
        if m.get("hardware") == hardware and m.get("model_key"):
            groups.setdefault((m["model_key"], str(m.get("model"))), []).append(m)
    sums: dict[str, dict[str, list[tuple[float, float, float, int]]]] = {}
    for (key, _), ms in groups.items():
        span = busy_span((work_start(m), float(m["started"]) + float(m["seconds"])) for m in ms)
        p = sum(float(m["work"]["prompt_tokens"]) for m in ms)
        d = sum(float(m["work"].get("gen_tokens") or 0) for m in ms)
        kind = "decode" if d else "prefill"
        sums.setdefault(key, {"prefill": [], "decode": []})[kind].append((span, p, d, len(ms)))
    by_key: dict[str, list[dict[str, Any]]] = {}
    for (key, _), ms in groups.items():
        by_key.setdefault(key, []).extend(ms)
    starts = {key: cell_start(ms, cores) for key, ms in by_key.items()}
    out = {}
    for key, s in sums.items():
        prefill = decode = None
        notes = []
        if s["prefill"]:
            span, p = sum(x[0] for x in s["prefill"]), sum(x[1] for x in s["prefill"])
            prefill = p / span if span > 0 else None
            notes.append(f"prefill: {sum(x[3] for x in s['prefill'])} log-likelihood cells, {p:,.0f} prompt tokens in {span:,.0f} s")
        if s["decode"] and prefill:
            span = sum(x[0] for x in s["decode"])
            p, d = sum(x[1] for x in s["decode"]), sum(x[2] for x in s["decode"])
            left = span - p / prefill
            if left > 0:
                decode = d / left
                notes.append(f"decode: {sum(x[3] for x in s['decode'])} generating cells, {d:,.0f} generated tokens in {left:,.0f} s")
        if starts.get(key) is not None:
            notes.append(f"cell start-up {starts[key]:.0f} s (median, one cell alone on {cores} cores)")
        if prefill or decode:
            out[key] = Measured(prefill, decode, "; ".join(notes), starts.get(key))
    return out
