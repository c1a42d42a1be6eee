"""Episodes per second of the multi-turn runner: history recomputed, lockstep batching, prefix KV reuse.

The same episodes (the first ``--episodes`` instances of each task; default n-back 3-back and
Wordle) on the same model (default: the embedded SmolLM2 on CPU), greedy decoding, three ways:

- (a) baseline: the full history recomputed at every turn, batch size 1, one episode at a time
  (what clemcore and the Triangulating code do): plain ``HFLM`` generation;
- (b) lockstep: all episodes' next turns in one ``generate_until`` call, batch size = episodes;
- (c) default: the runner's default path for the backend. For ``hf`` that is
  :class:`models.prefix_cache.PrefixCacheHFLM` (per-episode KV prefix reuse, batch size 1,
  episodes in flight as ``triangulate play`` runs them, and for greedy requests drafts looked up in
  the history, :mod:`models.lookup_decoding`);
- optional (``--modes ...,c0_prefix_only``): (c) without history drafts, to see what each lever gives.

One model is loaded once (a ``PrefixCacheHFLM``); (a) and (b) switch its reuse off, which makes it
plain ``HFLM.generate_until``. Each run plays (a), (b), (c) back to back; the figures are medians
over ``--runs`` runs (the machine is shared: compare ratios, not absolute times). Checks printed:
greedy replies of (a) and (c) identical in every run.

Last line: a JSON object with ``baseline_episodes_per_s`` (a), ``best_episodes_per_s`` (fastest
mode), ``speedup`` ((c) over (a), over all tasks' episodes), per-task speedups, and
``speedup_vs_clemcore`` (from ``benchmarks/clemcore_compare.py``'s measurement when
``--clemcore_python``/``CLEMCORE_PYTHON`` names a python with clemcore; else null and the reason).

    python benchmarks/multiturn_throughput.py [--tasks nback_verbal_3,wordle] [--episodes 2] [--runs 3]
        [--threads 1] [--max_gen_toks N] [--model hf --model_args pretrained=...] [--device cuda]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from models.loading import load_lm, resolve_model  # noqa: E402
from models.ref import ModelRef  # noqa: E402
from multiturn import registry  # noqa: E402
from multiturn.engine.scheduler import play_episodes  # noqa: E402

GREEDY = {"temperature": 0.0, "do_sample": False}
MODES = ("a_recompute_batch1", "b_lockstep", "c_default", "c0_prefix_only")
DEFAULT_MODES = MODES[:3]


class CountingLM:
    """Wraps an LM to count generate_until calls and requests."""

    def __init__(self, lm):
        self.lm, self.calls, self.requests = lm, 0, 0

    def apply_chat_template(self, messages, add_generation_prompt: bool = True):
        return self.lm.apply_chat_template(messages)

    def generate_until(self, requests, disable_tqdm: bool = False):
        self.calls += 1
        self.requests += len(requests)
        return self.lm.generate_until(requests, disable_tqdm=True)


def configure(lm, mode: str, episodes: int) -> int:
    """Set the LM up for ``mode``; returns the episodes in flight (the engine's ``max_live``)."""
    reuse = mode in ("c_default", "c0_prefix_only")
    batch = episodes if mode == "b_lockstep" else 1
    if hasattr(lm, "prefix_cache_enabled"):
        lm.prefix_cache_enabled = reuse
        lm.prefix_pool.clear()
        if not hasattr(lm, "default_lookup_tokens"):
            lm.default_lookup_tokens = lm.prompt_lookup_tokens
        lm.prompt_lookup_tokens = 0 if mode == "c0_prefix_only" else lm.default_lookup_tokens
    if hasattr(lm, "batch_size_per_gpu"):
        lm.batch_size_per_gpu = batch  # HFLM's batch size, without loading the model twice
    return 1 if mode == "a_recompute_batch1" else episodes


def run_mode(task, instances, lm, mode: str, max_gen_toks: int | None) -> tuple[float, float, dict[str, str], CountingLM]:
    """Play ``instances`` in ``mode``: ``(wall seconds, process CPU seconds, replies by episode id, counter)``."""
    max_live = configure(lm, mode, len(instances))
    counting = CountingLM(lm)
    override = dict(GREEDY)
    if max_gen_toks:
        override["max_gen_toks"] = max_gen_toks
    start, cpu_start = time.perf_counter(), time.process_time()
    records = play_episodes(task, instances, {"player": counting}, seed=0, gen_kwargs_override=override, max_live=max_live, progress=False)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    failed = [r["id"] for r in records if r.get("failed")]
    if failed:
        raise SystemExit(f"{task.name} {mode}: episodes failed: {failed}")
    replies = {r["id"]: json.dumps(r["transcript"], sort_keys=True, default=str) for r in records}
    return seconds, cpu, replies, counting


def clemcore_speedup(args) -> tuple[float | None, str | None]:
    """``(ratio, None)`` from clemcore_compare's Taboo measurement, or ``(None, reason)``."""
    python = args.clemcore_python or os.environ.get("CLEMCORE_PYTHON")
    if not python:
        return None, "clemcore is not installed here (pass --clemcore_python or set CLEMCORE_PYTHON; see benchmarks/clemcore_compare.py)"
    import subprocess

    cmd = [sys.executable, str(REPO / "benchmarks" / "clemcore_compare.py"), "--episodes", str(args.episodes), "--clemcore_python", python]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(proc.stdout, end="", flush=True)
    import re

    ratios = {
        line.split()[0]: float(m.group(1))
        for line in proc.stdout.splitlines()
        if (m := re.search(r"ratio ours/clemcore[^0-9]*([0-9]+(?:\.[0-9]+)?)", line))
    }
    if ratios:  # the median line when the script prints one, else its only ratio line
        return ratios.get("median", next(iter(ratios.values()))), None
    return None, f"clemcore_compare.py failed: {proc.stderr.strip().splitlines()[-1:] or proc.returncode}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="nback_verbal_3,wordle")
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", default=None)
    parser.add_argument("--model_args", default=None)
    parser.add_argument("--device", default=None)
    parser.add_argument("--max_gen_toks", type=int, default=None, help="cap new tokens per reply (default: each task's own)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (1 avoids thrashing on a busy machine)")
    parser.add_argument(
        "--modes", default=",".join(DEFAULT_MODES), help=f"comma-separated subset of {','.join(MODES)} (a and c_default are required)"
    )
    parser.add_argument(
        "--budget_minutes", type=float, default=None, help="start no further run after this many minutes (runs done so far are summarised)"
    )
    parser.add_argument("--clemcore_python", default=None, help="python with clemcore installed (for speedup_vs_clemcore)")
    args = parser.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    modes = [m for m in MODES if m in {x.strip() for x in args.modes.split(",")}]
    if "a_recompute_batch1" not in modes or "c_default" not in modes:
        raise SystemExit("--modes must include a_recompute_batch1 and c_default")
    tasks = [registry.get_task(name.strip()) for name in args.tasks.split(",") if name.strip()]
    t0 = time.perf_counter()
    backend = resolve_model(ModelRef.parse(args.model, args.model_args), device=args.device, prefix_cache=True)
    lm, model = load_lm(backend, batch_size=1, device=args.device, prefix_cache=True), backend.model
    print(
        f"model {model} ({type(lm).__name__}) loaded in {time.perf_counter() - t0:.1f} s; "
        f"{args.episodes} episodes per task, {args.runs} runs, threads {args.threads or 'default'}, "
        f"max_gen_toks {args.max_gen_toks or 'task default'}",
        flush=True,
    )
    if not hasattr(lm, "prefix_cache_enabled"):
        print("note: this backend has no prefix reuse switch; (a) and (c) differ only in episodes in flight", flush=True)

    wall: dict[str, dict[str, list[float]]] = {t.name: {m: [] for m in modes} for t in tasks}
    cpu: dict[str, dict[str, list[float]]] = {t.name: {m: [] for m in modes} for t in tasks}
    identical: dict[str, list[bool]] = {t.name: [] for t in tasks}
    bench_start = time.perf_counter()
    runs_done = 0
    for run in range(args.runs):
        if run and args.budget_minutes and time.perf_counter() - bench_start > 60 * args.budget_minutes:
            print(f"time budget of {args.budget_minutes:g} min used: stopping after {run} runs", flush=True)
            break
        for task in tasks:
            instances = task.instances(0)[: args.episodes]
            replies = {}
            for mode in modes:
                secs, cpu_secs, replies[mode], counting = run_mode(task, instances, lm, mode, args.max_gen_toks)
                wall[task.name][mode].append(secs)
                cpu[task.name][mode].append(cpu_secs)
                print(
                    f"run {run + 1} {task.name:16s} {mode:20s} wall {secs:7.1f} s  cpu {cpu_secs:7.1f} s  "
                    f"{len(instances) / secs:.4f} episodes/s  {counting.requests} requests in {counting.calls} calls",
                    flush=True,
                )
            same = replies["a_recompute_batch1"] == replies["c_default"]
            identical[task.name].append(same)
            print(f"run {run + 1} {task.name:16s} greedy replies of (a) and (c) identical: {same}", flush=True)
        runs_done += 1

    per_task: dict[str, Any] = {}
    total = {m: 0.0 for m in modes}
    total_cpu = {m: 0.0 for m in modes}
    n_episodes = 0
    for task in tasks:
        med = {m: statistics.median(v) for m, v in wall[task.name].items()}
        med_cpu = {m: statistics.median(v) for m, v in cpu[task.name].items()}
        n = min(args.episodes, len(task.instances(0)))
        n_episodes += n
        for m in modes:
            total[m] += med[m]
            total_cpu[m] += med_cpu[m]
        entry = {f"{m}_episodes_per_s": round(n / med[m], 4) for m in modes}
        for m in modes[1:]:
            entry[f"speedup_{m.split('_')[0]}_over_a"] = round(med["a_recompute_batch1"] / med[m], 2)
            entry[f"cpu_speedup_{m.split('_')[0]}_over_a"] = round(med_cpu["a_recompute_batch1"] / med_cpu[m], 2)
        entry["identical_a_c"] = all(identical[task.name])
        per_task[task.name] = entry
        print(f"median {task.name:16s} " + "  ".join(f"{m} wall {med[m]:.1f} s cpu {med_cpu[m]:.1f} s" for m in modes), flush=True)
        print(
            f"median {task.name:16s} speedup (c)/(a): wall {entry['speedup_c_over_a']}x, cpu {entry['cpu_speedup_c_over_a']}x"
            + (f"; (b)/(a): wall {entry['speedup_b_over_a']}x, cpu {entry['cpu_speedup_b_over_a']}x" if "b_lockstep" in modes else ""),
            flush=True,
        )

    vs_clemcore, reason = clemcore_speedup(args)
    result: dict[str, Any] = {
        "model": model,
        "episodes_per_task": args.episodes,
        "runs": runs_done,
        "threads": args.threads,
        "baseline_episodes_per_s": round(n_episodes / total["a_recompute_batch1"], 4),
        "best_episodes_per_s": round(max(n_episodes / total[m] for m in modes), 4),
        "speedup": round(total["a_recompute_batch1"] / total["c_default"], 2),
        "cpu_speedup": round(total_cpu["a_recompute_batch1"] / total_cpu["c_default"], 2),
        "max_gen_toks": args.max_gen_toks,
        "identical_greedy_a_c": all(all(v) for v in identical.values()),
        "tasks": per_task,
        "speedup_vs_clemcore": vs_clemcore,
    }
    if reason:
        result["speedup_vs_clemcore_reason"] = reason
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
