"""``triangulate suite --dry_run``: the size of a sweep before it starts, written to ``DIR/suite_plan.json``.

Shape: ``{"models": [{"name", "gpus": [ids], "wave": k, "replicas", "expected_start_h", "expected_end_h", "engine",
"engine_reason", "server", "cells": [{"name", "command", "kind", "requests", "prompt_tokens", "gen_tokens",
"max_gen_tokens", "tokenizer", "done", "note", "subtasks": {leaf: {"kind", "requests", "prompt_tokens", "gen_tokens",
"max_gen_tokens", "served_requests"}}, "served_requests", "one_pass", "per_choice"}]}], "gpus": [...], "totals": {...}, "expected": {"makespan_h", "busy_work", "busy_held",
"gpu_hours_by_phase", "work_share_by_task", "sources", "model"}}``. The counts are :mod:`triangulation.suite.counting`'s.
On a GPU node the models are placed by the GPU pool with the run's own estimate
(:func:`triangulation.suite.counting.model_costs`: these counts, else the task table; the rates measured by earlier
runs into the same folder, else the throughput table; ``sources`` says which): each model's GPUs, data-parallel
replicas, expected start and end, and the node's GPU shares, working and held. Every string of the plan (commands,
the server's URL) has its credentials redacted (:func:`plumbing.secrets.scrub_tree`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbing.secrets import scrub_tree
from triangulation.suite.cells import cell_argv, cell_dir, is_done, redacted_argv
from triangulation.suite.placement import Placement
from triangulation.suite.serve import planned_endpoint
from triangulation.suite.spec import Cell, ModelSpec, Suite


def engine_reason(model: ModelSpec, gpus: Sequence[str]) -> str:
    """Which engine a model runs on, and why (the plan's ``engine_reason``)."""
    if model.engine == "vllm":
        tp = f", tensor parallel over {model.gpu_count} GPUs" if model.gpu_count > 1 else ""
        return f"vllm: the suite's `engine: vllm`: one server for all its cells (continuous batching, prefix caching){tp}"
    if model.engine == "api":
        return "api: the suite's `engine: api`: an existing OpenAI-compatible endpoint"
    if gpus:
        return (
            "hf: the default engine: each cell loads the model, play at batch size 1 unless set, a multi-GPU model "
            "runs layer by layer; on GPUs `engine: vllm` is faster (benchmarks/battery_makespan.py)"
        )
    return "hf: the default engine (in process; the laptop path)"


@dataclass(frozen=True)
class Plan:
    """The dry run's plan, made once (:func:`build_plan`, credentials redacted) and read by both its outputs, the
    file and the printout (:mod:`triangulation.suite.plan_print`); its fields are ``suite_plan.json``'s keys."""

    suite: str
    gpus: list[str]
    models: list[dict[str, Any]]
    totals: dict[str, Any]
    expected: dict[str, Any]


def build_plan(
    suite: Suite,
    root: Path,
    launcher: Sequence[str],
    gpus: Sequence[str],
    counted: dict[str, list[dict[str, Any]]],
    placements: Sequence[Placement],
    expected: dict[str, Any],
) -> Plan:
    """The plan (see the module docstring) from values made before it: the cells' counts (:func:`triangulation.suite.counting.count_cells`), the
    models' placements and the node's expected figures (:func:`triangulation.suite.placement.place_models`, from the
    costs of these counts); here each model's server and each cell's command and state join them."""
    total = totals(counted)
    reasons = {m.name: engine_reason(m, gpus) for m in suite.models}
    models = []
    for p in placements:
        m = p.model
        endpoint = planned_endpoint(m) if m.served else None
        rows = []
        for task, row in zip(suite.tasks, counted[m.name]):
            cell = Cell(m, task)
            argv = redacted_argv(cell_argv(cell, cell_dir(root, cell), launcher, endpoint=endpoint))
            rows.append({**row, "command": shlex.join(argv), "done": is_done(root, cell)})
        start_h, end_h = (None if s is None else round(s / 3600, 2) for s in (p.start, p.end))
        models.append(
            {
                "name": m.name,
                "engine": m.engine,
                "engine_reason": reasons[m.name],
                "server": None if endpoint is None else endpoint.base_url,
                "cells": rows,
                "gpus": list(p.gpus or []),
                "wave": p.wave,
                "replicas": p.replicas,
                "expected_start_h": start_h,
                "expected_end_h": end_h,
            }
        )
    plan = {"suite": str(suite.path), "gpus": list(gpus), "models": models, "totals": total, "expected": expected}
    return Plan(**scrub_tree(plan))  # a served endpoint's URL password, a key in any command: never in the plan


def totals(counted: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per model and overall: requests and prompt tokens of the cells that were counted, and how many were not."""
    out: dict[str, Any] = {}
    for name, cells in counted.items():
        done = [c for c in cells if c["requests"] is not None]
        out[name] = {
            "requests": sum(c["requests"] for c in done),
            "prompt_tokens": sum(c["prompt_tokens"] for c in done),
            "cells_not_counted": len(cells) - len(done),
        }
    out["all"] = {k: sum(v[k] for v in out.values()) for k in ("requests", "prompt_tokens", "cells_not_counted")}
    return out
