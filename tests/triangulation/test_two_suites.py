"""Issue 30 item 18: two suites started on one output folder at once do each cell once: a cell one suite holds
(its lock, ``runs/<model>/<task>.lock``) is waited for by the other, which then finds it done and skips it, so
no model work is done twice and no cell log holds two runs."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.triangulation.test_suite import LAUNCHER, ROOT, scripted, write_suite


def test_two_suites_on_one_folder_do_each_cell_once(tmp_path):
    suite = write_suite(
        tmp_path,
        {
            "defaults": {"limit": 2, "seed": 3},
            "models": [scripted("alpha", delay=0.2), scripted("beta", delay=0.2)],
            "tasks": [{"play": "wcst"}, {"play": "lnt", "limit": 1}],
        },
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "--output_path", str(out), "--launcher", LAUNCHER, "--no_report"]
    procs = []
    for i in (1, 2):
        env = {**os.environ, "SUITE_WORK_LOG": str(tmp_path / f"work{i}.log"), "PYTHONPATH": str(ROOT)}
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = [p.communicate(timeout=900) for p in procs]
    assert all(p.returncode == 0 for p in procs), [r[1][-2000:] for r in results]
    logs = sorted((out / "logs").rglob("*.log"))
    assert len(logs) == 4
    for log in logs:  # each cell was attempted once, by one suite: one attempt header, one results line
        text = log.read_text(encoding="utf-8", errors="replace")
        assert text.count("\n=== ") == 1, f"{log} holds {text.count(chr(10) + '=== ')} runs"
    waited = "".join(r[0] + r[1] for r in results)
    assert "is being run by another suite" in waited  # the second suite said why it waited
    episodes = list((out / "runs").rglob("episodes_wcst.jsonl"))
    assert len(episodes) == 2 and all(len(p.read_text().splitlines()) == 2 for p in episodes)
