"""Issue 23: what `triangulate play` guarantees a user, each shown on the ``random`` chance player:
one writer per run folder and task (items 2), resume only with the same settings (3), hostile replies (4),
an unwritable output path refused before any model call (6)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from triangulation.cli.main import main

HOLD = """
import sys, time
sys.path.insert(0, {repo!r})
from plumbing.locks import RunLock
with RunLock({path!r}):
    print("locked", flush=True)
    time.sleep(float(sys.argv[1]))
"""
REPO = Path(__file__).resolve().parents[2]


def play(out: Path, *extra: str, tasks: str = "wcst", seed: str = "1") -> list[str]:
    return ["play", "--model", "random", "--tasks", tasks, "--limit", "3", "--seed", seed, "--output_path", str(out), *extra]


def _hold_lock(path: Path, seconds: float) -> subprocess.Popen:
    code = HOLD.format(repo=str(REPO), path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", code, str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_writer_on_the_same_task_is_refused_naming_the_holder(tmp_path, capsys):
    holder = _hold_lock(tmp_path / "random" / "episodes_wcst.jsonl", 60)
    try:
        assert main(play(tmp_path)) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"PID {holder.pid}" in err and "--wait_lock" in err
        assert not list((tmp_path / "random").glob("results_*.json"))
        assert not (tmp_path / "random" / "episodes_wcst.jsonl").exists()  # nothing touched
    finally:
        holder.kill()
        holder.wait()


def test_wait_lock_waits_for_the_holder_then_runs(tmp_path):
    holder = _hold_lock(tmp_path / "random" / "episodes_wcst.jsonl", 2)
    started = time.time()
    try:
        assert main(play(tmp_path, "--wait_lock")) == 0
    finally:
        holder.wait()
    assert time.time() - started >= 1.5
    assert len(list((tmp_path / "random").glob("results_*.json"))) == 1


def test_the_lock_goes_with_a_killed_holder(tmp_path):
    holder = _hold_lock(tmp_path / "random" / "episodes_wcst.jsonl", 60)
    holder.kill()  # kill -9: the OS drops the flock, no stale lock
    holder.wait()
    assert main(play(tmp_path)) == 0


def _results(out: Path) -> dict:
    return json.loads(sorted((out / "random").glob("results_*.json"))[-1].read_text())
