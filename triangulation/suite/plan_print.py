"""The dry run's two outputs of a suite plan (:func:`triangulation.suite.plan.build_plan`): ``DIR/suite_plan.json``
(:func:`write_plan`) and the printout (:func:`print_plan`: a line per cell and per model, the node's expected
makespan and GPU shares, and where the plan is stored)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from plumbing import jsonio
from triangulation.suite.plan import Plan
from triangulation.suite.task_stats import PLAN_FILE


def write_plan(plan: Plan, root: Path) -> Path:
    """The plan to ``root/suite_plan.json``."""
    path = root / PLAN_FILE
    jsonio.write_json(path, asdict(plan), indent=1)
    return path


def _fmt(n: int | None) -> str:
    return "null" if n is None else f"{n:,}"


def print_plan(plan: Plan, root: Path) -> None:
    """One line per cell (state, counts, command), one per model (GPUs, wave, totals), the plan's path."""
    for m in plan.models:
        gpus = ",".join(m["gpus"]) or "-"
        t = plan.totals[m["name"]]
        when = ""
        if m.get("expected_start_h") is not None:
            when = f" x{m['replicas']}, expected {m['expected_start_h']:.2f} h -> {m['expected_end_h']:.2f} h"
        print(f"{m['name']}: GPUs {gpus}{when}: {_fmt(t['requests'])} requests, {_fmt(t['prompt_tokens'])} prompt tokens")
        print(f"{m['name']}: engine {m['engine_reason']}" + (f"; server at {m['server']}" if m.get("server") else ""))
        for c in m["cells"]:
            state = "done" if c["done"] else "to run"
            served = (
                f" ({_fmt(c['served_requests'])} served one pass: {', '.join(c['one_pass']) or 'none'})"
                if c.get("one_pass") is not None
                else ""
            )
            print(f"  {c['name']}: {state}: {_fmt(c['requests'])} requests{served}, {_fmt(c['prompt_tokens'])} tokens: {c['command']}")
    e = plan.expected
    if e.get("makespan_h") is not None:
        print(
            f"node: expected makespan {e['makespan_h']:.2f} h, GPUs working {100 * e['busy_work']:.0f}% of it, "
            f"held {100 * e['busy_held']:.0f}%; GPU-hours by phase {e['gpu_hours_by_phase']}"
        )
        for name, sources in e.get("sources", {}).items():
            print(f"  {name}: " + "; ".join(f"{k}: {v[:160]}" for k, v in sources.items()))
    print(f"plan: {root / PLAN_FILE}")
