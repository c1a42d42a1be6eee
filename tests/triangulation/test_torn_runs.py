"""A run killed mid-write: `triangulate view`, `report` and `score` still work and say what they skipped.

A real ``triangulate play --model random`` run is killed with SIGKILL while it plays. A kill lands
between two whole-line writes almost always, so the test then cuts the last record in half, which is
what a kill inside the write leaves behind. A corrupt line before the last one stays an error naming
file and line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plumbing import run_folder
from triangulation.cli.main import main

REPO = Path(__file__).resolve().parents[2]


def _play(out: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "triangulation", "play", "--model", "random", "--output_path", str(out), *args]
    return subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _kill_once_it_writes(proc: subprocess.Popen, path: Path, timeout: float = 300) -> None:
    """SIGKILL ``proc`` as soon as ``path`` holds two finished episodes (or let it end first)."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if path.is_file() and path.read_bytes().count(b"\n") >= 2:
            os.kill(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.01)
    proc.wait(timeout=60)


def _tear_last_line(path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])


@pytest.mark.slow  # two `triangulate play` processes and a report
def test_view_and_report_on_a_killed_run_say_how_many_lines_they_skipped(built_data, tmp_path, capsys):
    runs = tmp_path / "runs"
    finished = _play(runs, "--tasks", "nback_verbal_1", "--limit", "2")
    assert finished.wait(timeout=600) == 0, finished.stderr.read()[-2000:]
    model = run_folder.model_dir(runs, "random")
    torn = run_folder.episodes_path(model, "wcst")
    killed = _play(runs, "--tasks", "wcst", "--max_live", "1")
    _kill_once_it_writes(killed, torn)
    assert killed.returncode in (-signal.SIGKILL, 0)
    _tear_last_line(torn)
    whole = len(torn.read_bytes().splitlines()) - 1

    assert main(["view", str(runs), "--out", str(tmp_path / "view")]) == 0
    err = capsys.readouterr().err
    assert f"1 torn last line skipped (a run killed mid-write): {torn}" in err
    page = (tmp_path / "view" / "wcst.html").read_text(encoding="utf-8")
    assert f"{whole} episodes, 0 failed" in page

    assert main(["report", str(runs), "--out", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    assert f"report: 1 torn last line skipped (a run killed mid-write): {torn}" in err
    assert (tmp_path / "report" / "report.html").is_file()

    assert main(["score", str(runs)]) == 0  # the re-scorer reads the same files
    assert f"triangulate score: 1 torn last line skipped (a run killed mid-write): {torn}" in capsys.readouterr().err

    lines = torn.read_bytes().splitlines(keepends=True)
    torn.write_bytes(lines[0][:20] + b"\n" + b"".join(lines[1:]))  # now a bad line in the middle
    assert main(["view", str(runs), "--out", str(tmp_path / "view2")]) == 2
    assert f"{torn}:1: not valid JSON" in capsys.readouterr().err
