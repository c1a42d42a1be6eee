"""Makespan, GPU shares and where the GPU time goes: suites/triangulating.yaml on one node, from tokens (issue 37).

    python benchmarks/battery_makespan.py [--suite FILE] [--plan DIR/suite_plan.json] [--runs DIR] [--gpus 8] [--gpu H100]

The run's own estimate, not a model of it: :func:`triangulation.suite.counting.model_costs` (each cell's
requests, prompt and generated tokens: a ``--dry_run``'s counts with ``--plan``, else the per-task table of
:mod:`triangulation.suite.task_stats`; each model's prefill and decode tokens/s: the throughput table of
:mod:`triangulation.suite.throughput`, or the rates measured by the finished cells under ``--runs``, a suite's
output folder) placed by :func:`~triangulation.suite.placement.pool_estimate` (the GPU pool with replicas, as
``--dry_run`` and the runner place them). Prints each model's GPUs and times, the GPU-hours by phase (prefill,
decode, start-up) and by task entry, where each model's numbers come from, and as its last line one JSON
object: ``makespan_h``, ``busy_work`` (GPU-seconds of prefill and decode at full rate over GPUs x makespan),
``busy_held`` (GPU-seconds held by the models), ``gpu_hours_by_phase``, ``work_share_by_task`` (task entry ->
share of the node's GPU work) and ``phase_share_by_task``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from triangulation.suite import estimate  # noqa: E402
from triangulation.suite.counting import model_costs  # noqa: E402
from triangulation.suite.estimate import ModelCost  # noqa: E402
from triangulation.suite.placement import pool_estimate  # noqa: E402
from triangulation.suite.spec import load_suite  # noqa: E402
from triangulation.suite.task_stats import plan_counts  # noqa: E402
from triangulation.suite.throughput import GPUS  # noqa: E402


def phase_by_task(costs: list[ModelCost]) -> dict[str, dict[str, float]]:
    """task entry -> GPU-hours of prefill and decode over every model (one replica's work)."""
    out: dict[str, dict[str, float]] = {}
    for c in costs:
        g = max(c.job.gpus, 1)
        hf = c.setup.engine == "hf"
        for cell in c.cells:
            row = out.setdefault(cell.task, {"prefill": 0.0, "decode": 0.0})
            row["prefill"] += estimate.prefill_seconds(cell, c.setup.rates) * g / 3600
            batch = (cell.batch or estimate.ENGINES["hf"].max_batch) if hf else None
            row["decode"] += estimate.decode_seconds(cell, c.setup.rates, batch) * g / 3600
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", type=Path, default=ROOT / "suites" / "triangulating.yaml")
    ap.add_argument("--plan", type=Path, default=None, help="a --dry_run's suite_plan.json (counted tokens; else the task table)")
    ap.add_argument("--runs", type=Path, default=None, help="a suite's output folder: rates measured by its finished cells")
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--gpu", choices=sorted(GPUS), default="H100", help="the throughput table's GPU")
    args = ap.parse_args()
    suite = load_suite(args.suite)
    counts = plan_counts(json.loads(args.plan.read_text(encoding="utf-8"))) if args.plan else {}
    costs = model_costs(suite, args.gpus, args.runs, counts=counts, gpu=args.gpu)
    gpus = [str(i) for i in range(args.gpus)]
    placements, summary = pool_estimate(suite.models, gpus, costs)
    print(f"{suite.name} on {args.gpus} x {args.gpu}: counts from {'the plan' if counts else 'the task table'}")
    print("  per model: GPUs, replicas, expected start -> end (h)")
    for p in sorted(placements, key=lambda p: (p.start or 0.0, p.model.name)):
        print(
            f"    {p.model.name:14s} GPUs {','.join(p.gpus or ()):16s} x{p.replicas}  {(p.start or 0) / 3600:5.2f} -> {(p.end or 0) / 3600:5.2f}"
        )
    by_task = phase_by_task(costs)
    total = sum(summary["gpu_hours_by_phase"].values())
    print("  GPU-hours by phase: " + ", ".join(f"{k} {v:.2f} ({100 * v / total:.1f}%)" for k, v in summary["gpu_hours_by_phase"].items()))
    print("  GPU-hours of work by task entry (prefill + decode, share of the node's work):")
    for task, share in sorted(summary["work_share_by_task"].items(), key=lambda kv: -kv[1]):
        row = by_task[task]
        print(f"    {task:36s} prefill {row['prefill']:7.2f}  decode {row['decode']:7.2f}  {100 * share:5.1f}%")
    print("  where the numbers come from:")
    for name, sources in summary["sources"].items():
        print(f"    {name}: " + "; ".join(f"{k}: {v[:120]}" for k, v in sources.items()))
    print(
        f"  makespan {summary['makespan_h']:.2f} h, GPUs working {100 * summary['busy_work']:.1f}% of it, "
        f"held {100 * summary['busy_held']:.1f}%"
    )
    summary.pop("sources")
    summary["phase_share_by_task"] = {t: {k: round(v / total, 4) if total else 0.0 for k, v in row.items()} for t, row in by_task.items()}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
