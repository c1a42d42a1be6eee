"""`triangulate suite --check` and the preflight every real run starts with: each misconfiguration is one line,
all of them in one run, exit 2, nothing started.

Real parts: lm-eval's own task index and IFEval's files (its imports, not installed here unless the extra is),
the Hugging Face cache with the Hub offline, vLLM looked up on PATH; the GPUs are a stand-in ``nvidia-smi``
(two 80 GB H100s) on PATH, since this machine has none."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import tomllib
import yaml

from triangulation.suite.gpu_fit import memory_problem
from triangulation.suite.preflight import BATTERY, BATTERY_EXTRA, imported_modules
from triangulation.suite.spec import ModelSpec, load_suite

ROOT = Path(__file__).resolve().parents[2]
FAKE_SMI = """#!/bin/sh
case "$*" in
  *query-gpu*) printf '0, 81559\\n1, 81559\\n' ;;
  *) printf 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\\n' ;;
esac
"""


def _write(tmp: Path, data: dict) -> Path:
    path = tmp / "suite.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _env(tmp: Path) -> dict[str, str]:
    """Offline Hub, a stand-in nvidia-smi with two 80 GB GPUs first on PATH, no vLLM anywhere."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "nvidia-smi").write_text(FAKE_SMI)
    (bin_dir / "nvidia-smi").chmod(0o755)
    path = os.pathsep.join([str(bin_dir), *(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "vllm").exists())])
    env = {k: v for k, v in os.environ.items() if k not in ("TRIANGULATE_VLLM", "CUDA_VISIBLE_DEVICES")}
    return {**env, "PATH": path, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


BAD = {
    "models": [
        {"name": "gone", "model": "hf", "model_args": "pretrained=/nonexistent/weights,dtype=bfloat16", "size": 1},
        {"name": "uncached", "model": "hf", "model_args": "pretrained=org-that-is-not-cached/model-x", "size": 1},
        {"name": "too-big", "model": "hf", "model_args": "pretrained=/nonexistent/big,dtype=bfloat16", "size": 72, "gpus": 1},
        {"name": "too-many", "model": "random", "gpus": 4},
        {"name": "served", "model": "hf", "model_args": "pretrained=/nonexistent/served", "engine": "vllm", "size": 1},
    ],
    "tasks": [{"eval": "leaderboard_ifeval"}, {"eval": "no_such_task_anywhere"}, {"play": "lnt"}],
}


def test_check_lists_every_problem_in_one_run_and_starts_nothing(tmp_path):
    suite = _write(tmp_path, BAD)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "-o", str(out), "--check", "--gpus", "0,1"]
    result = subprocess.run(cmd, cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert result.returncode == 2, result.stderr[-3000:]
    lines = [ln.strip() for ln in result.stderr.splitlines()]
    expected = [
        "task entry no_such_task_anywhere: lm-eval knows no task, group or tag 'no_such_task_anywhere'",
        "model gone: weights and tokenizer /nonexistent/weights: folder not found",
        "model uncached: weights and tokenizer org-that-is-not-cached/model-x: not in the Hugging Face cache, and "
        "HF_HUB_OFFLINE/HF_DATASETS_OFFLINE is set: download it first",
        "model too-many needs 4 GPUs but this node has 2 (0,1); lower its `gpus:`",
        "model served (engine: vllm): vllm not found: install vLLM (`vllm` on PATH) or set $TRIANGULATE_VLLM to its command",
    ]
    for line in expected:
        assert line in lines, (line, result.stderr[-3000:])
    [big] = [ln for ln in lines if ln.startswith("model too-big does not fit:")]
    assert "72B parameters x 2 bytes (bfloat16) + 20% KV headroom = 173 GB > 1 GPU(s) x 77 GB" in big and "`gpus: 3`" in big
    if not all(importlib.util.find_spec(m) for m in BATTERY):  # IFEval's imports, unless the battery extra is installed
        [deps] = [ln for ln in lines if ln.startswith("task entry leaderboard_ifeval: Python packages missing:")]
        assert deps.endswith(f"pip install '{BATTERY_EXTRA}'")
    assert any(
        ln.startswith("dataset wis-k/instruction-following-eval (task leaderboard_ifeval): not in the Hugging Face cache") for ln in lines
    )
    assert "problem(s); nothing was started" in result.stderr and not out.exists()


def test_a_real_run_starts_with_the_preflight(tmp_path):
    data = {"models": [BAD["models"][0], BAD["models"][4]], "tasks": [{"play": "lnt"}]}
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "triangulation", "suite", str(_write(tmp_path, data)), "-o", str(out)]
    result = subprocess.run(cmd, cwd=ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert "  model gone: weights and tokenizer /nonexistent/weights: folder not found" in result.stderr.splitlines()
    assert "preflight found 3 problem(s)" in result.stderr.splitlines()[-1]
    assert not (out / "runs").exists()


def test_ifeval_needs_what_the_battery_extra_installs():
    """The modules IFEval's files import that are not lm-eval's own dependencies are exactly the extra's."""
    index_dir = Path(importlib.util.find_spec("lm_eval").origin).parent / "tasks" / "leaderboard" / "ifeval"
    assert set(BATTERY) <= imported_modules(index_dir)
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["battery"]
    names = {req.split(">")[0].split("<")[0].split("=")[0] for req in extra}
    assert names == {pip.split("<")[0] for pip in BATTERY.values()}


def test_memory_fit_and_the_shipped_battery_sizes():
    h100 = 81559  # MiB, as nvidia-smi reports an H100 80GB
    llama70 = ModelSpec(name="l70", model="hf", model_args="pretrained=x,dtype=bfloat16", size=70, gpus=4)
    assert memory_problem(llama70, 4, h100) is None
    assert "needs at least 3 GPUs" in memory_problem(llama70, 1, h100)
    big = ModelSpec(name="l405", model="hf", model_args="pretrained=x,dtype=bfloat16", size=405, gpus=8)
    assert "needs at least 13 GPUs" in memory_problem(big, 8, h100)  # 405B in bf16 does not fit 8 x 80 GB
    fp32 = ModelSpec(name="s", model="hf", model_args="pretrained=x,dtype=float32", size=20)
    assert "x 4 bytes (float32)" in memory_problem(fp32, 1, h100)
    suite = load_suite(ROOT / "suites" / "triangulating.yaml")
    for model in suite.models:  # the shipped sizes fit their gpus: on 80 GB GPUs
        assert memory_problem(model, model.gpu_count, h100) is None, model.name


def test_check_loads_custom_datasets_as_lm_eval_will(tmp_path, upstream):
    """Issue 43 item 8: CLadder, SimpleToM and NATURAL PLAN build their data from the Hub or a pinned download
    (``custom_dataset``); `--check` passed them and the run failed 27 s in, offline. Now each is loaded as lm-eval
    will load it and an unloadable one is one line; our tasks on built data load and pass."""
    from tests.support.built_data import built_data_root

    data = {
        "models": [{"name": "chance", "model": "random"}],
        "tasks": [{"eval": "cladder"}, {"eval": "natural_plan"}, {"eval": "connections"}],
    }
    cmd = [sys.executable, "-m", "triangulation", "suite", str(_write(tmp_path, data)), "-o", str(tmp_path / "out"), "--check"]
    env = {**_env(tmp_path), "TRIANGULATE_DATA": str(built_data_root(str(upstream))), "TRIANGULATE_CACHE": str(tmp_path / "cache")}
    env.pop("TRIANGULATE_UPSTREAM", None)
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 2, result.stderr[-3000:]
    lines = [ln.strip() for ln in result.stderr.splitlines()]
    for task in ("cladder", "natural_plan_trip", "natural_plan_calendar"):
        [line] = [ln for ln in lines if ln.startswith(f"task {task} (entry ") and "its data cannot be loaded" in ln]
        assert len(line) < 500
    assert not any(ln.startswith("task connections ") for ln in lines)  # built data: loads


def test_memory_fit_counts_quantized_weights():
    """Issue 43 item 8: an FP8 405B on 8 x 80 GB was refused (the check read bf16 whatever the quantization)."""
    h100 = 81559
    for args, serve in (
        ("pretrained=meta-llama/Llama-3.1-405B-Instruct", ("--quantization", "fp8")),
        ("pretrained=meta-llama/Llama-3.1-405B-Instruct-FP8", ()),
        ("pretrained=x,quantization=fp8", ()),
    ):
        model = ModelSpec(name="l405", model="hf", model_args=args, size=405, gpus=8, engine="vllm", serve_args=serve)
        assert memory_problem(model, 8, h100) is None, (args, serve)
    awq = ModelSpec(name="q", model="hf", model_args="pretrained=org/Qwen2.5-72B-Instruct-AWQ", size=72)
    assert memory_problem(awq, 1, h100) is None  # 72B x 0.5 bytes + 20% = 43 GB
    assert "x 2 bytes (bfloat16)" in memory_problem(ModelSpec(name="b", model="hf", model_args="pretrained=x", size=405), 8, h100)


def test_a_slurm_sweep_is_judged_against_the_partitions_gpus(tmp_path, monkeypatch):
    from triangulation.suite.gpu_fit import slurm_gpu_memory_mib

    sinfo = tmp_path / "sinfo"
    sinfo.write_text("#!/bin/sh\nprintf 'gpu:h200:8(S:0-1)\\n'\n")
    sinfo.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    [mib] = slurm_gpu_memory_mib("gpu").values()
    big = ModelSpec(name="l405", model="hf", model_args="pretrained=x,dtype=bfloat16", size=405, gpus=8)
    assert memory_problem(big, 8, 81559) and memory_problem(big, 8, mib) is None  # fits 8 x H200, not 8 x H100
    sinfo.write_text("#!/bin/sh\nprintf 'gpu:mystery:8\\n'\n")
    assert slurm_gpu_memory_mib("gpu") == {}  # an unknown type: not judged (a note), never the submitting host's GPUs


def test_a_hub_dataset_cached_by_datasets_passes_offline(tmp_path, monkeypatch):
    """``datasets`` caches ``pbevan11/EQ-Bench`` (EQ-Bench, in the battery) as ``pbevan11___eq-bench``: the preflight
    looks where ``datasets`` itself reloads it offline (it looked for ``pbevan11___EQ-Bench`` and refused the run)."""
    import datasets

    from tests.support.battery_standins import write_cached
    from triangulation.suite.preflight import dataset_problem

    rows = [{"prompt": "Rate Anger", "reference_answer_fullscale": "{}"}]
    write_cached(tmp_path, "pbevan11/EQ-Bench", None, {"validation": rows})
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    assert datasets.load_dataset("pbevan11/EQ-Bench")["validation"][0]["prompt"] == "Rate Anger"  # datasets finds it there
    assert dataset_problem("pbevan11/EQ-Bench") is None
    assert "not in the Hugging Face cache" in (dataset_problem("pbevan11/Other-Bench") or "")


def test_a_local_runs_gpu_count_is_the_pools_not_the_slurm_blocks(tmp_path):
    """Run locally, a model runs on its ``gpus:`` (default 1), as the pool places it: the ``slurm:`` block's
    ``gpus_per_model`` is SLURM's alone, so it refuses no local run; a model whose own ``gpus:`` the node lacks gets the
    pool's one line, and the chance player has no weights to fit."""
    from triangulation.suite.gpu_fit import fit_problems
    from triangulation.suite.preflight import Findings, gpu_checks
    from triangulation.suite.spec import load_suite

    data = {
        "models": [
            {"name": "small", "model": "hf", "model_args": "pretrained=/nonexistent/small", "size": 1},
            {"name": "chance", "model": "random"},
        ],
        "tasks": [{"play": "lnt"}],
        "slurm": {"gpus_per_model": 4},
    }
    suite = load_suite(_write(tmp_path, data))
    local, slurm_side = Findings(), {name: job.gpus for name, job in suite.slurm.jobs.items()}
    gpu_checks(suite, "local", ["0", "1"], local)
    assert slurm_side["small"] == 4 and not any("GPUs" in p for p in local.problems), local.problems
    wide = load_suite(_write(tmp_path, {**data, "models": [{**data["models"][0], "gpus": 3}]}))
    found = Findings()
    gpu_checks(wide, "local", ["0", "1"], found)
    assert fit_problems({"small": 3}, ["0", "1"]) == ["model small needs 3 GPUs but this node has 2 (0,1); lower its `gpus:`"]
    assert [p for p in found.problems if "GPUs" in p] == fit_problems({"small": 3}, ["0", "1"])
