"""The dry run's printout of a suite plan (:func:`triangulation.suite.plan.write_plan`): a line per cell and per model, the node's expected makespan and GPU shares, and where the plan is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from triangulation.suite.task_stats import PLAN_FILE


def _fmt(n: int | None) -> str:
    return "null" if n is None else f"{n:,}"


def print_plan(plan: dict[str, Any], root: Path) -> None:
    """One line per cell (state, counts, command), one per model (GPUs, wave, totals), the plan's path."""
    for m in plan["models"]:
        gpus = ",".join(m["gpus"]) or "-"
        t = plan["totals"][m["name"]]
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
    e = plan.get("expected") or {}
    if e.get("makespan_h") is not None:
        print(
            f"node: expected makespan {e['makespan_h']:.2f} h, GPUs working {100 * e['busy_work']:.0f}% of it, "
            f"held {100 * e['busy_held']:.0f}%; GPU-hours by phase {e['gpu_hours_by_phase']}"
        )
        for name, sources in e.get("sources", {}).items():
            print(f"  {name}: " + "; ".join(f"{k}: {v[:160]}" for k, v in sources.items()))
    print(f"plan: {root / PLAN_FILE}")
