"""`triangulate suite --gpus`: the node's GPUs, models placed largest first in waves on disjoint GPUs, a
model too big for the node refused before anything starts, and a wave's models really running at once
with their own ``CUDA_VISIBLE_DEVICES``."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import time
from collections import Counter

import pytest

from plumbing.errors import UserError
from tests.triangulation.test_suite import HELPER, ROOT, scripted, status, suite_env, write_suite
from triangulation.suite.placement import gpu_env, place, waves
from triangulation.suite.pool import gpu_inventory
from triangulation.suite.spec import ModelSpec, load_suite

EIGHT = [str(i) for i in range(8)]


def check_no_oversubscription(placements, gpus) -> None:
    for wave in waves(placements):
        used = Counter(g for p in wave for g in p.gpus)
        assert all(n == 1 for n in used.values()), f"a GPU shared inside wave {wave[0].wave}: {used}"
        assert set(used) <= set(gpus)
    for p in placements:
        assert len(p.gpus) == p.model.gpu_count


def test_triangulating_suite_on_a_fake_8_gpu_node():
    suite = load_suite(ROOT / "suites" / "triangulating.yaml")
    needs = {m.name: m.gpus for m in suite.models}
    assert needs["Qwen2.5-72B"] == needs["Llama-3.3-70B"] == 4 and needs["Qwen2.5-32B"] == 2
    placements = place(suite.models, EIGHT)
    check_no_oversubscription(placements, EIGHT)
    by_name = {p.model.name: p for p in placements}
    assert [p.model.name for p in placements] == [m.name for m in suite.models]  # in the suite's order
    # largest first: the two 70B-class models fill the node in wave 0, the other six run at once in wave 1
    assert {n for n, p in by_name.items() if p.wave == 0} == {"Qwen2.5-72B", "Llama-3.3-70B"}
    assert len(waves(placements)) == 2 and len(waves(placements)[1]) == 6
    assert by_name["Qwen2.5-72B"].gpus == ("0", "1", "2", "3") and by_name["Llama-3.3-70B"].gpus == ("4", "5", "6", "7")
    assert by_name["Qwen2.5-32B"].gpus == ("0", "1")  # contiguous GPUs for a sharded model
    assert gpu_env(by_name["Qwen2.5-32B"], {"PATH": "/bin"}) == {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "0,1"}


def test_random_needs_never_oversubscribe():
    rng = random.Random(7)
    for trial in range(300):
        gpus = EIGHT[: rng.randint(1, 8)]
        models = [
            ModelSpec(f"m{i}", "hf", gpus=rng.randint(0, len(gpus)), size=rng.choice([None, 7, 70])) for i in range(rng.randint(1, 9))
        ]
        placements = place(models, gpus)
        check_no_oversubscription(placements, gpus)
        # first fit: no later wave holds a model that would have fitted the GPUs left in an earlier wave
        for k, wave in enumerate(waves(placements)):
            left = [len(gpus) - sum(len(p.gpus) for p in w) for w in waves(placements)[:k]]
            assert all(p.model.gpu_count > free for p in wave for free in left), trial


def test_no_gpus_runs_one_model_after_another_and_too_big_is_refused():
    models = [ModelSpec("a", "hf"), ModelSpec("b", "hf", gpus=4)]
    cpu = place(models, [])
    assert [(p.gpus, p.wave) for p in cpu] == [(None, 0), (None, 1)] and "CUDA_VISIBLE_DEVICES" not in gpu_env(cpu[0], {})
    with pytest.raises(UserError, match=r"model b needs 4 GPUs but this node has 2 \(0,1\)"):
        place(models, ["0", "1"])
    hidden = place([ModelSpec("api", "random", gpus=0)], ["0"])[0]  # a model needing no GPU sees none
    assert gpu_env(hidden, {})["CUDA_VISIBLE_DEVICES"] == ""


def test_gpu_inventory_flag_then_env_then_nvidia_smi(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H100 (UUID: GPU-a)'\necho 'GPU 1: NVIDIA H100 (UUID: GPU-b)'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert gpu_inventory(None, {}) == ["0", "1"]
    assert gpu_inventory(None, {"CUDA_VISIBLE_DEVICES": "3,5"}) == ["3", "5"]
    assert gpu_inventory("2, 4", {"CUDA_VISIBLE_DEVICES": "3"}) == ["2", "4"]
    assert gpu_inventory(None, {"CUDA_VISIBLE_DEVICES": ""}) == []
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    assert gpu_inventory(None, {}) == []
    with pytest.raises(UserError, match="listed twice"):
        gpu_inventory("1,1", {})


def test_too_big_model_is_one_line_before_anything_starts(tmp_path):
    suite = write_suite(tmp_path, {"models": [{**scripted("big"), "gpus": 3}], "tasks": [{"play": "lnt"}]})
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "-o", str(out), "--gpus", "0,1"]
    result = subprocess.run(cmd, cwd=ROOT, env=suite_env(tmp_path / "w.log"), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "  model big needs 3 GPUs but this node has 2 (0,1); lower its `gpus:`" in result.stderr.splitlines()  # the preflight's line
    assert not out.exists()


def test_a_wave_runs_its_models_at_once_on_their_own_gpus(tmp_path):
    """Two scripted models on a fake 2-GPU node run concurrently, each cell with its own CUDA_VISIBLE_DEVICES."""
    trace = tmp_path / "trace.log"
    wrapper = tmp_path / "launch.sh"
    wrapper.write_text(
        f'#!/bin/sh\necho "start $CUDA_VISIBLE_DEVICES $(date +%s.%N)" >> {trace}\n'
        f'{sys.executable} {HELPER} "$@"; rc=$?\necho "end $CUDA_VISIBLE_DEVICES $(date +%s.%N)" >> {trace}\nexit $rc\n'
    )
    suite = write_suite(
        tmp_path,
        {
            "defaults": {"limit": 2, "seed": 1},
            "models": [scripted("alpha", delay=0.2), scripted("beta", delay=0.2)],
            "tasks": [{"play": "lnt"}],
        },
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "-o", str(out), "--gpus", "6,7", "--launcher", f"sh {wrapper}"]
    result = subprocess.run(cmd, cwd=ROOT, env=suite_env(tmp_path / "w.log"), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    events = [line.split() for line in trace.read_text().splitlines()]
    starts = {gpu: float(t) for kind, gpu, t in events if kind == "start"}
    ends = {gpu: float(t) for kind, gpu, t in events if kind == "end"}
    assert set(starts) == set(ends) == {"6", "7"}  # one cell per GPU
    assert max(starts.values()) < min(ends.values()), "the two models did not run at the same time"
    assert status(out) == {"alpha/lnt": "done", "beta/lnt": "done"}


def test_sigterm_stops_every_cell_of_a_wave(tmp_path):
    """SIGTERM to a sweep running two models at once ends both cell processes, not only the main thread's."""
    pids = tmp_path / "pids.log"
    wrapper = tmp_path / "launch.sh"
    wrapper.write_text(f'#!/bin/sh\necho "$$" >> {pids}\nexec {sys.executable} {HELPER} "$@"\n')
    suite = write_suite(
        tmp_path,
        {
            "defaults": {"limit": 3, "seed": 1},
            "models": [scripted("alpha", delay=2), scripted("beta", delay=2)],
            "tasks": [{"play": "lnt"}],
        },
    )
    cmd = [
        sys.executable,
        "-m",
        "triangulation",
        "suite",
        str(suite),
        "-o",
        str(tmp_path / "out"),
        "--gpus",
        "0,1",
        "--launcher",
        f"sh {wrapper}",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=suite_env(tmp_path / "w.log"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        while len(_read_lines(pids)) < 2 and time.time() < deadline:
            time.sleep(0.2)
        cells = [int(p) for p in _read_lines(pids)]
        assert len(cells) == 2, "the two cells never started together"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.5)
    alive = [pid for pid in cells if _alive(pid)]
    for pid in alive:  # clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"cell processes left running: {alive}"


def _read_lines(path) -> list[str]:
    return path.read_text().split() if path.is_file() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie (exited, not yet reaped by init) is not running
        return fh.read().split()[2] != "Z"
