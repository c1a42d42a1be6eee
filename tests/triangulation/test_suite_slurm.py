"""`triangulate suite --executor slurm`: job resources from the `slurm:` block, and a real one-node SLURM
cluster (Debian's slurmctld/slurmd/munge, :mod:`tests.support.slurm_cluster`) running a suite of the chance
player and a scripted model x an eval task and two play tasks: `--no_wait`, a `scancel` mid-sweep,
`--status`, and the same command again completing every cell once, then the report."""

from __future__ import annotations

import json
import os
import pickle
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from plumbing.errors import UserError
from tests.support.slurm_cluster import missing_tools, slurm_cluster
from tests.triangulation.test_suite import LAUNCHER, ROOT, scripted, suite_env, write_suite
from triangulation.suite.cells import cell_dir, is_done
from triangulation.suite.slurm import executor_parameters, read_jobs
from triangulation.suite.spec import cells, load_suite, time_minutes

#: seconds of model work per request in the time-limit test: 8 requests, more than one leg of a one-minute job can hold
DELAY_S = 8


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
    assert (suite.slurm.jobs[big.name].gpus, suite.slurm.jobs[small.name].gpus) == (4, 2)  # a model's own gpus: wins
    script = _make_sbatch_string(command="true", folder=str(tmp_path / "%j"), **executor_parameters(suite, suite.slurm.jobs[big.name].gpus))
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
    # recorded with the jobs, the status says at once what they run (before this, nothing until a --status)
    rows = {r["cell"]: r for r in json.loads((out / "suite_status.json").read_text())["cells"]}
    assert set(rows) == {c.label for c in plan} and {r["status"] for r in rows.values()} <= {"running", "done"}
    assert all(r["job_id"] == jobs[r["model"]]["job_id"] for r in rows.values())

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


def test_models_that_need_no_gpu_request_none_and_each_model_has_its_own_time(tmp_path):
    from submitit.slurm.slurm import _make_sbatch_string

    suite = load_suite(
        write_suite(
            tmp_path,
            {
                "models": [
                    {"name": "chance", "model": "random"},
                    {"name": "remote", "engine": "api", "base_url": "http://h:1/v1", "model_args": {"model": "m"}},
                    {"name": "cpu", "model": "hf", "model_args": "pretrained=x", "gpus": 0},
                    {"name": "big", "model": "hf", "model_args": "pretrained=x", "gpus": 4, "time": "2-00:00:00"},
                    {"name": "small", "model": "hf", "model_args": "pretrained=x", "time": 90},
                ],
                "tasks": [{"play": "lnt"}],
                "slurm": {"time": "1:00:00", "max_requeues": 5},
            },
        )
    )
    chance, remote, cpu, big, small = suite.models
    assert [suite.slurm.jobs[m.name].gpus for m in suite.models] == [0, 0, 0, 4, 1]
    assert [suite.slurm.jobs[m.name].minutes for m in suite.models] == [60, 60, 60, 2880, 90]
    for m in (chance, remote, cpu):
        script = _make_sbatch_string(
            command="true", folder=str(tmp_path / "%j"), **executor_parameters(suite, suite.slurm.jobs[m.name].gpus)
        )
        assert "gpus" not in script and "gres" not in script, m.name
    script = _make_sbatch_string(command="true", folder=str(tmp_path), **executor_parameters(suite, 4, suite.slurm.jobs[big.name].minutes))
    assert "#SBATCH --time=2880" in script and "#SBATCH --gpus-per-node=4" in script
    assert "#SBATCH --signal=USR2@90" in script  # submitit's checkpoint signal, 90 s before the limit
    short = _make_sbatch_string(command="true", folder=str(tmp_path), **executor_parameters(suite, 0, 1))
    assert "#SBATCH --signal=USR2@20" in short  # a one-minute job is signalled 20 s before its limit
    assert cells(suite)[0].fingerprint == cells(load_suite(write_suite(tmp_path, {"models": [{"name": "chance", "model": "random"}], "tasks": [{"play": "lnt"}]}, "b.yaml")))[0].fingerprint  # fmt: skip
    with pytest.raises(UserError, match=r"models\[0\]: time: 'soon' is neither minutes"):
        load_suite(write_suite(tmp_path, {"models": [{"name": "a", "time": "soon"}], "tasks": [{"play": "lnt"}]}, "c.yaml"))


def test_squeue_is_asked_about_this_sweeps_jobs_only(monkeypatch):
    from triangulation.suite import slurm

    calls = []

    def fake_run(argv, **kwargs):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, stdout="101\n102_3\n999\n", stderr="")

    monkeypatch.setattr(slurm.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(slurm.subprocess, "run", fake_run)
    assert slurm.active_jobs(["101", "102", "103"]) == {"101", "102"}  # an array's tasks count for it; 999 is not ours
    assert calls[-1][-2:] == ["-j", "101,102,103"]
    assert slurm.active_jobs([]) == set() and len(calls) == 1  # nothing of ours: squeue is not asked at all
    gone = subprocess.CompletedProcess([], 1, stdout="", stderr="slurm_load_jobs error: Invalid job id specified\n")
    monkeypatch.setattr(slurm.subprocess, "run", lambda argv, **kw: gone)
    assert slurm.active_jobs(["5"]) == set()  # every job has left the queue


def test_a_time_limit_signal_is_used_to_the_end_and_cells_ignore_it(monkeypatch):
    """SLURM signals a job up to 60 s before the asked delay: the job keeps working (its cells ignore the signal)
    until REQUEUE_MARGIN_S before its end, then requeues; a signal far from the end (a preemption) requeues at once."""
    from triangulation.suite import slurm
    from triangulation.suite.serve import deaf_to_checkpoint

    suicide = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGUSR2); print('alive')"]
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert subprocess.run(deaf_to_checkpoint(suicide), capture_output=True).returncode == -signal.SIGUSR2  # outside SLURM: as is
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    shielded = subprocess.run(deaf_to_checkpoint(suicide), capture_output=True, text=True)
    assert shielded.returncode == 0 and shielded.stdout.strip() == "alive"
    clock = [0.0]
    monkeypatch.setattr(slurm.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(slurm.time, "sleep", lambda s: clock.__setitem__(0, clock[0] + s))
    for left, waited in ((40.0, 40.0 - slurm.REQUEUE_MARGIN_S), (5.0, 0.0), (3600.0, 0.0), (None, 0.0)):
        clock[0] = 0.0
        monkeypatch.setattr(slurm, "seconds_left", lambda job_id, env=None, left=left: left)
        assert slurm.ModelJob().checkpoint("suite.yaml", "root", "m", ["t"], 2) is not None  # the same call again
        assert clock[0] == pytest.approx(waited), (left, clock)
    monkeypatch.setattr(slurm, "seconds_left", lambda job_id, env=None: 40.0)
    job = slurm.ModelJob()
    monkeypatch.setattr(slurm, "job_main", lambda *args: [{"args": list(args)}])
    assert job("s", "r") == [{"args": ["s", "r"]}]  # the work runs in a thread; its rows are the job's result
    with pytest.raises(slurm._WorkDone):  # the work ended while the checkpoint waited: the job ends, not requeued
        job.checkpoint("s", "r")
    assert isinstance(pickle.loads(pickle.dumps(job)), slurm.ModelJob)  # a requeued call pickles without its thread state
    monkeypatch.setattr(slurm, "job_main", lambda *args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        slurm.ModelJob()("s")


@pytest.mark.slow
def test_on_a_cpu_cluster_a_gpu_model_is_refused_by_the_preflight_and_sbatch_in_one_line(cluster, tmp_path):
    suite = write_suite(
        tmp_path,
        {
            "models": [{**scripted("gpu-model"), "gpus": 1}, {"name": "chance", "model": "random"}],
            "tasks": [{"play": "lnt", "limit": 1}],
            "slurm": {"time": 5, "cpus": 1, "mem": "1G"},
        },
    )
    out = tmp_path / "out"
    env = {**suite_env(tmp_path / "w.log"), "SLURM_CONF": cluster["SLURM_CONF"]}
    check = _suite_cli(suite, out, env, "--check")
    assert check.returncode == 2, check.stderr[-2000:]
    lines = [ln.strip() for ln in check.stderr.splitlines()]
    assert "model gpu-model needs 1 GPUs, more than one node of partition (default) has (0): a job runs on one node" in lines
    assert not any(ln.startswith("model chance") for ln in lines if "GPUs" in ln)  # the chance player asks for none
    refused = _suite_cli(suite, out, env, "--no_check", "--no_wait")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr[-3000:]
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("triangulate: error: sbatch refused the job of gpu-model: sbatch: error: ") and "gres" in last.lower(), last
    assert sum("sbatch: error" in ln for ln in refused.stderr.splitlines()) == 1  # quoted once, not printed again by submitit
    assert read_jobs(out)["chance"]["job_id"]  # the chance player's array went out before (no GPU asked)
    subprocess.run(["scancel", read_jobs(out)["chance"]["job_id"].split("_")[0]], env=env, check=False)


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("TRIANGULATE_EXTENDED_TESTS") != "1",
    reason="opt-in (TRIANGULATE_EXTENDED_TESTS=1): the one-minute eval sweep (~100 s): CI keeps the lockstep two-minute sweep, which requeues through a time limit too",
)
def test_a_sweep_with_a_one_minute_limit_completes_through_requeues_computing_each_request_once(cluster, tmp_path):
    """`time: 1` (SLURM's minimum) on a cell needing more model work than a one-minute leg holds: the job is signalled 20 s
    before its limit, submitit requeues it (same job id), and each leg resumes the eval cell from lm-eval's
    request cache. Per leg: the cache hits lm-eval reports equal the requests computed in the earlier legs, and
    the work log (request digest, leg) holds every request exactly once."""
    requests_n = 8
    suite = write_suite(
        tmp_path,
        {
            "models": [{**scripted("slow", delay=DELAY_S, log_args=1), "gpus": 0}],
            "tasks": [{"eval": "connections", "limit": requests_n, "seed": 1}],
            "slurm": {"time": 1, "cpus": 1, "mem": "2G", "max_requeues": 8},
            "retry_wait": 1,
        },
    )
    out = tmp_path / "out"
    work = tmp_path / "work.log"
    env = {**suite_env(work), "SLURM_CONF": cluster["SLURM_CONF"]}
    t0 = time.time()
    result = _suite_cli(suite, out, env, "--no_check", timeout=900)  # (the preflight has its own test above)
    elapsed = time.time() - t0
    assert result.returncode == 0, result.stderr[-3000:]
    [cell] = cells(load_suite(suite))
    assert is_done(out, cell)
    job_id = read_jobs(out)["slow"]["job_id"]
    shown = subprocess.run(["scontrol", "show", "job", job_id], env=env, capture_output=True, text=True).stdout
    restarts = int(re.search(r"Restarts=(\d+)", shown).group(1))
    assert restarts >= 1, shown  # the job reached its limit and was requeued under the same id: >= 2 legs
    computed = [ln.split() for ln in work.read_text().splitlines()]  # "slow generate DIGEST leg=N"
    digests = [d for _, _, d, _ in computed]
    assert len(digests) == requests_n and len(set(digests)) == requests_n, computed  # every request computed once
    per_leg = Counter(int(leg.removeprefix("leg=")) for *_, leg in computed)
    assert len(per_leg) >= 2, per_leg  # the work itself spans legs: no leg could have done it all
    log = (out / "logs" / "slow" / "connections.log").read_text()
    hits = [(int(c), int(r)) for c, r in re.findall(r"Cached requests: (\d+), Requests remaining: (\d+)", log)]
    assert hits and hits[0] == (0, requests_n), hits
    for cached, remaining in hits:  # a run's cache hits are exactly the requests finished before it, none again
        assert cached + remaining == requests_n, hits
    assert sorted(c for c, _ in hits) == [c for c, _ in hits] and hits[-1][0] > 0, hits
    for leg in sorted(per_leg):  # the cache at a leg's last start holds what the earlier legs computed
        before = sum(n for k, n in per_leg.items() if k < leg)
        assert before in [c for c, _ in hits], (leg, per_leg, hits)
    print(f"slurm time: 1 sweep: job {job_id}, {restarts} requeue(s), {elapsed:.0f} s; computed per leg {dict(per_leg)}; {hits}")


@pytest.mark.slow
def test_a_lockstep_play_cell_with_a_two_minute_limit_completes_through_requeues_computing_each_turn_once(cluster, tmp_path):
    """`time: 2` on a play cell of 24 n-back episodes in lockstep (24 turns each, a batch of 24 requests a step) whose
    model work (576 requests x 0.25 s) is more than one leg holds: every leg ends with the batch in flight killed, and
    the next leg resumes mid-episode from the task's turn log (issue 37 item 5; before it, no episode of such a batch
    ever finished). The sweep completes with no rerun command; the work log (request digest, leg) holds exactly the
    turns of the stored episodes, each computed once, over two legs or more."""
    episodes_n, turns_n = 24, 24
    suite = write_suite(
        tmp_path,
        {
            "models": [{**scripted("slow", delay=0.25, log_args=1), "gpus": 0}],
            "tasks": [{"play": "nback_verbal_1", "limit": episodes_n, "seed": 1}],
            "slurm": {"time": 2, "cpus": 1, "mem": "2G", "max_requeues": 8},
            "retry_wait": 1,
        },
    )
    out = tmp_path / "out"
    work = tmp_path / "work.log"
    env = {**suite_env(work), "SLURM_CONF": cluster["SLURM_CONF"]}
    t0 = time.time()
    result = _suite_cli(suite, out, env, "--no_check", timeout=1200)
    elapsed = time.time() - t0
    assert result.returncode == 0, result.stderr[-3000:]
    [cell] = cells(load_suite(suite))
    assert is_done(out, cell)
    job_id = read_jobs(out)["slow"]["job_id"]
    shown = subprocess.run(["scontrol", "show", "job", job_id], env=env, capture_output=True, text=True).stdout
    restarts = int(re.search(r"Restarts=(\d+)", shown).group(1))
    assert restarts >= 1, shown
    [episodes_file] = cell_dir(out, cell).rglob("episodes_nback_verbal_1.jsonl")
    records = [json.loads(line) for line in episodes_file.read_text().splitlines()]
    assert sorted(r["id"] for r in records) == sorted({r["id"] for r in records}) and len(records) == episodes_n  # each episode once
    assert all(len(r["calls"]) == turns_n and not r["failed"] for r in records)
    computed = [ln.split() for ln in work.read_text().splitlines()]  # "slow generate DIGEST leg=N"
    assert len(computed) == episodes_n * turns_n, len(computed)  # every turn of every stored episode, each computed once
    per_leg = Counter(int(leg.removeprefix("leg=")) for *_, leg in computed)
    assert len(per_leg) >= 2, per_leg  # the work spans legs: no leg could have done it all
    assert not list(cell_dir(out, cell).rglob("*.turns*.jsonl"))  # the turn log went with the last episode
    print(f"slurm time: 2 play sweep: job {job_id}, {restarts} requeue(s), {elapsed:.0f} s; turns computed per leg {dict(per_leg)}")
