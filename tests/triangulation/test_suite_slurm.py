"""`triangulate suite --executor slurm`: job resources from the `slurm:` block, and a real one-node SLURM
cluster (Debian's slurmctld/slurmd/munge, :mod:`tests.support.slurm_cluster`) running a suite of the chance
player and a scripted model x an eval task and two play tasks: `--no_wait`, a `scancel` mid-sweep,
`--status`, and the same command again completing every cell once, then the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plumbing.errors import UserError
from tests.support.slurm_cluster import missing_tools, slurm_cluster
from tests.triangulation.test_suite import LAUNCHER, ROOT, scripted, suite_env, write_suite
from triangulation.suite.runner import cell_dir, is_done
from triangulation.suite.slurm import executor_parameters, model_gpus, read_jobs, time_minutes
from triangulation.suite.spec import cells, load_suite


def test_job_resources_from_the_slurm_block(tmp_path):
    from submitit.slurm.slurm import _make_sbatch_string

    suite = load_suite(
        write_suite(
            tmp_path,
            {
                "models": [{"name": "big", "model": "hf", "gpus": 4}, {"name": "small", "model": "hf"}],
                "tasks": [{"play": "lnt"}],
                "slurm": {
                    "partition": "gpu",
                    "time": "1:30:00",
                    "gpus_per_model": 2,
                    "cpus": 16,
                    "mem": "200G",
                    "sbatch": {"account": "proj"},
                },
            },
        )
    )
    big, small = suite.models
    assert (model_gpus(suite, big), model_gpus(suite, small)) == (4, 2)  # a model's own gpus: wins
    script = _make_sbatch_string(command="true", folder=str(tmp_path / "%j"), **executor_parameters(suite, model_gpus(suite, big)))
    for line in ("--partition=gpu", "--time=90", "--gpus-per-node=4", "--cpus-per-task=16", "--mem=200G", "--account=proj"):
        assert f"#SBATCH {line}" in script, line
    assert "--gpus-per-node" not in _make_sbatch_string(command="true", folder=str(tmp_path), **executor_parameters(suite, 0))
    assert time_minutes(45) == 45 and time_minutes("2-00:00:00") == 2880 and time_minutes(None) == 1440
    with pytest.raises(UserError, match="neither minutes"):
        time_minutes("soon")
    with pytest.raises(UserError, match=r"slurm: unknown key 'gpu'"):
        load_suite(write_suite(tmp_path, {"models": [{"name": "a"}], "tasks": [{"play": "lnt"}], "slurm": {"gpu": 1}}, "bad.yaml"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if missing_tools():
        pytest.fail(f"SLURM/munge tools missing: {', '.join(missing_tools())} (apt-get install -y slurmctld slurmd slurm-client munge)")
    if os.geteuid() != 0:
        pytest.fail("the SLURM test cluster needs root (slurmd runs the jobs)")
    with slurm_cluster(tmp_path_factory.mktemp("slurm")) as env:
        yield env


def _suite_cli(suite: Path, out: Path, env: dict[str, str], *extra: str, timeout: int = 900) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "triangulation",
        "suite",
        str(suite),
        "--output_path",
        str(out),
        "--executor",
        "slurm",
        "--launcher",
        LAUNCHER,
        *extra,
    ]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def _squeue(env: dict[str, str]) -> set[str]:
    return set(subprocess.run(["squeue", "-h", "-r", "-o", "%i"], env=env, capture_output=True, text=True, check=True).stdout.split())


def _wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


@pytest.mark.slow
def test_sweep_on_a_real_slurm_cluster_survives_scancel(cluster, tmp_path):
    suite = write_suite(
        tmp_path,
        {
            "defaults": {"limit": 2, "seed": 3},
            "models": [{"name": "chance", "model": "random", "model_args": "seed=1", "gpus": 0}, scripted("scripted", delay=0.4)],
            "tasks": [{"eval": "connections", "limit": 1}, {"play": "nback_verbal_1"}, {"play": "lnt"}],
            "slurm": {"time": 30, "cpus": 1, "mem": "2G", "gpus_per_model": 0},
        },
    )
    out = tmp_path / "out"
    env = {**suite_env(tmp_path / "work1.log"), **{k: cluster[k] for k in ("SLURM_CONF",)}}
    plan = cells(load_suite(suite))
    t0 = time.time()
    first = _suite_cli(suite, out, env, "--no_wait")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "--status" in first.stdout
    jobs = read_jobs(out)
    assert set(jobs) == {"chance", "scripted"} and jobs["chance"]["job_id"] != jobs["scripted"]["job_id"]
    assert "_" in jobs["chance"]["job_id"]  # one job array of both models (the same resources)

    # scancel the scripted model's job once its eval cell is done and it is playing n-back
    ev, nb = (c for c in plan if c.model.name == "scripted" and c.task.name in ("connections", "nback_verbal_1"))
    work = tmp_path / "work1.log"
    _wait_for(lambda: is_done(out, ev), 600, "the scripted model's first cell")
    after_eval = len(work.read_text().splitlines())
    _wait_for(lambda: len(work.read_text().splitlines()) > after_eval + 2, 300, "n-back to start")
    subprocess.run(["scancel", jobs["scripted"]["job_id"]], env=env, check=True)
    _wait_for(lambda: not (_squeue(env) & {j["job_id"] for j in jobs.values()}), 600, "both jobs to end")
    assert not is_done(out, nb)
    done_before = {c.label: (cell_dir(out, c) / ".suite_done.json").read_text() for c in plan if is_done(out, c)}
    assert ev.label in done_before

    status = subprocess.run(
        [sys.executable, "-m", "triangulation", "suite", str(suite), "-o", str(out), "--status"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert status.returncode == 1, status.stderr[-2000:]  # nothing running, cells unfinished
    assert f"scripted: {sum(c.model.name == 'scripted' and c.label in done_before for c in plan)}/3 cells done" in status.stdout
    rows = {r["cell"]: r for r in json.loads((out / "suite_status.json").read_text())["cells"]}
    assert (
        rows["scripted/nback_verbal_1"]["status"] == "failed"
        and "ended before the cell finished" in rows["scripted/nback_verbal_1"]["detail"]
    )
    assert {r["executor"] for r in rows.values()} == {"slurm"} and rows["chance/lnt"]["job_id"] == jobs["chance"]["job_id"]

    env2 = {**env, "SUITE_WORK_LOG": str(tmp_path / "work2.log")}
    rerun = _suite_cli(suite, out, env2)
    elapsed = time.time() - t0
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    again = read_jobs(out)
    assert again["chance"] == jobs["chance"] and again["scripted"]["job_id"] != jobs["scripted"]["job_id"]  # only the unfinished model
    assert again["scripted"]["cells"] == [c.label for c in plan if c.model.name == "scripted" and c.label not in done_before]
    assert all(is_done(out, c) for c in plan)
    assert all(
        (cell_dir(out, c) / ".suite_done.json").read_text() == m for c in plan for label, m in done_before.items() if c.label == label
    )
    rows = {r["cell"]: r for r in json.loads((out / "suite_status.json").read_text())["cells"]}
    assert {r["status"] for r in rows.values()} <= {"done", "skipped-done"} and rows["scripted/lnt"]["job_id"] == again["scripted"][
        "job_id"
    ]
    assert (out / "report" / "report.html").is_file() and "report:" in rerun.stdout
    print(f"slurm sweep: 6 cells, scancel and rerun, {elapsed:.0f} s")
