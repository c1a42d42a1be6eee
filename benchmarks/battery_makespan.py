"""Makespan and GPU-busy share of suites/triangulating.yaml on 8 x H100, simulated (issue 29).

    python benchmarks/battery_makespan.py [--plan DIR/suite_plan.json] [--gpus 8] [--h100_over_a100 1.6]

A discrete-event simulation of the battery's eight models on one node, three ways:
(a) waves with ``engine: hf`` (the suite before issue 29: each cell loads the model, play at batch 1,
    a 70B model layer by layer over its 4 GPUs), (b) waves with ``engine: vllm`` (one server per model, its
    cells at once), (c) the GPU pool with data-parallel replicas and group cells split into subtask cells.
Cell work and the throughput model per engine and size are :mod:`triangulation.suite.estimate`'s (every
figure cited there: seed 003 App. H, benchmarks/README.md, issue 29). ``--plan`` takes the per-cell and
per-subtask prompt-token counts of a ``--dry_run`` (used to split a group's App. H minutes over its
subtasks, and to time tasks App. H does not list); without it groups split equally. Group membership comes
from lm-eval's task index and the play registry. Prints one line per scenario, then a last-line JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from triangulation.suite import estimate, pool  # noqa: E402
from triangulation.suite.placement import model_job, place, waves  # noqa: E402
from triangulation.suite.spec import ModelSpec, Suite, load_suite  # noqa: E402


def plan_tokens(path: Path | None) -> dict[str, dict[str, dict[str, int | None]]]:
    """model -> task entry -> {leaf or entry name: prompt tokens} from a suite_plan.json."""
    if path is None:
        return {}
    plan = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, dict[str, dict[str, int | None]]] = {}
    for m in plan["models"]:
        for c in m["cells"]:
            subs = {k: v.get("prompt_tokens") for k, v in (c.get("subtasks") or {}).items()}
            out.setdefault(m["name"], {})[c["name"]] = subs or {c["name"]: c["prompt_tokens"]}
    return out


def with_engine(suite: Suite, engine: str) -> list[ModelSpec]:
    from dataclasses import replace

    return [replace(m, engine=engine) for m in suite.models]


def wave_run(models: list[ModelSpec], suite: Suite, n: int, tokens: dict, leaves: dict | None) -> tuple[float, float]:
    """Makespan and busy share of fixed waves (:func:`place`): each wave lasts as long as its slowest model."""
    names = [str(i) for i in range(n)]
    span = busy = 0.0
    for wave in waves(place(models, names)):
        seconds = [model_job(p.model, suite.tasks, n, leaves, tokens.get(p.model.name)).duration(1) for p in wave]
        busy += sum(len(p.gpus) * s for p, s in zip(wave, seconds))
        span += max(seconds)
    return span, busy / (n * span)


def pool_run(models: list[ModelSpec], suite: Suite, n: int, tokens: dict, leaves: dict) -> tuple[float, float, list[pool.Slot]]:
    jobs = [model_job(m, suite.tasks, n, leaves, tokens.get(m.name)) for m in models]
    slots = pool.schedule(jobs, n, pool.choose_replicas(jobs, n))
    return pool.makespan(slots), pool.busy_share(slots, n), slots


def group_leaves(suite: Suite) -> dict[str, list[str]]:
    """Each task entry's subtasks: play groups from the registry, lm-eval groups from its task index."""
    from multiturn import registry
    from triangulation.suite.plan import eval_leaves

    return {t.name: (registry.expand(list(t.tasks)) if t.runner == "play" else eval_leaves(t.tasks)) for t in suite.tasks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", type=Path, default=ROOT / "suites" / "triangulating.yaml")
    ap.add_argument("--plan", type=Path, default=None, help="a --dry_run's suite_plan.json (per-cell prompt tokens)")
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--h100_over_a100", type=float, default=estimate.H100_OVER_A100)
    args = ap.parse_args()
    estimate.H100_OVER_A100 = args.h100_over_a100  # the one knob the sensitivity row turns
    suite = load_suite(args.suite)
    tokens = plan_tokens(args.plan)
    leaves = group_leaves(suite)
    n = args.gpus
    rows: dict[str, Any] = {}
    for key, engine in (("a_waves_hf", "hf"), ("b_waves_vllm", "vllm")):
        span, busy = wave_run(with_engine(suite, engine), suite, n, tokens, None)
        rows[key] = {"makespan_h": round(span / 3600, 2), "busy": round(busy, 3)}
    span, busy, slots = pool_run(with_engine(suite, "vllm"), suite, n, tokens, leaves)
    rows["c_pool_replicas_split"] = {"makespan_h": round(span / 3600, 2), "busy": round(busy, 3)}
    span_ns, busy_ns, _ = pool_run(with_engine(suite, "vllm"), suite, n, tokens, {})
    rows["c0_pool_replicas_unsplit"] = {"makespan_h": round(span_ns / 3600, 2), "busy": round(busy_ns, 3)}
    print(f"{suite.name} on {n} x H100 (H100 = {args.h100_over_a100:g} x A100; plan counts: {'yes' if tokens else 'no'})")
    for key, row in rows.items():
        print(f"  {key:26s} makespan {row['makespan_h']:6.2f} h   GPU-busy {100 * row['busy']:5.1f}%")
    print("  (c) per model: GPUs, replicas, expected start -> end (h)")
    for s in sorted(slots, key=lambda s: s.start):
        print(f"    {s.job.name:14s} GPUs {','.join(map(str, s.gpus)):16s} x{s.replicas}  {s.start / 3600:5.2f} -> {s.end / 3600:5.2f}")
    target = rows["c_pool_replicas_split"]
    rows["target_met"] = target["makespan_h"] <= 10 and target["busy"] >= 0.85
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
