"""``triangulate suite --executor slurm``: one SLURM job per model, submitted through ``submitit``.

Models that need the same resources go out as one job array (submitit's ``batch``). A job runs its
model's cells inside the allocation exactly as the local executor does
(:meth:`triangulation.suite.runner.Sweep.run_model`: finished cells skipped, retries, served once with
``engine: vllm``, the model's GPUs as SLURM gives them), writing to the shared ``--output_path``. Resources come from the suite's ``slurm:``
block (``partition``, ``time`` in minutes or ``[D-]H:MM:SS``, ``gpus_per_model``, ``cpus``, ``mem``,
``sbatch`` extra options, ``setup`` shell lines) and each model's ``gpus:`` (which wins over
``gpus_per_model``).

State on disk, beside the runs::

    DIR/slurm/                 submitit's job folders (sbatch script, stdout/stderr, pickled result)
    DIR/slurm_jobs.json        model -> its last job: id, cells it was sent for, time
    DIR/status/<model>.json    the job's outcome per cell (written by the job when it ends)

Running the same command again submits jobs only for models with unfinished cells whose last job is no
longer queued or running (a ``scancel``-ed or timed-out job resumes; a play cell resumes its episodes).
It then waits with a progress bar, or returns at once with ``--no_wait``; ``--status`` prints where the
sweep stands. Whether a job is alive is asked of ``squeue`` (no accounting database needed).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import submitit

from plumbing import jsonio
from plumbing.errors import UserError
from triangulation.suite.cells import is_done
from triangulation.suite.runner import Sweep
from triangulation.suite.spec import Cell, ModelSpec, Suite, load_suite
from triangulation.suite.status import JOBS_FILE, Outcome, outcome_row, write_status

if TYPE_CHECKING:
    from triangulation.suite.outputs import SuiteOutputs

#: the statuses of a finished cell
DONE = ("done", "skipped-done")
#: seconds before its time limit that SLURM signals a job to checkpoint (submitit's default 90; a third of the
#: limit for jobs under 4.5 minutes)
SIGNAL_DELAY_S = 90
#: SLURM sends that signal at one of its periodic time-limit checks, so it may come up to 60 s earlier than asked
#: (sbatch(1), --signal; a one-minute job on the test cluster was signalled 30 s after it started). On a time-limit
#: signal the job keeps working until this many seconds before its end, then checkpoints and requeues.
REQUEUE_MARGIN_S = 10
SIGNAL_EARLY_S = 60


def executor_parameters(suite: Suite, gpus: int, minutes: int | None = None) -> dict[str, Any]:
    """submitit ``SlurmExecutor`` parameters of one model's job (``minutes``: its time limit, default the block's)."""
    block = suite.slurm
    minutes = block.time if minutes is None else minutes
    params: dict[str, Any] = {
        "job_name": f"suite-{suite.name}",
        "time": minutes,
        "signal_delay_s": min(SIGNAL_DELAY_S, max(10, minutes * 60 // 3)),
        "nodes": 1,
        "ntasks_per_node": 1,
        "stderr_to_stdout": True,
    }
    if gpus:
        params["gpus_per_node"] = gpus
    if block.partition:
        params["partition"] = block.partition
    if block.cpus:
        params["cpus_per_task"] = block.cpus
    if block.mem:
        params["mem"] = block.mem
    if block.sbatch:
        params["additional_parameters"] = dict(block.sbatch)
    if block.setup:
        params["setup"] = list(block.setup)
    return params


def job_main(suite_path: str, root: str, model_name: str, launcher: list[str], attempts: int) -> list[dict[str, Any]]:
    """Inside the SLURM job: the model's cells as locally; writes DIR/status/<model>.json. A requeued job
    (:class:`ModelJob`) runs this again: finished cells are skipped, eval cells answer their finished requests
    from lm-eval's cache, play cells resume inside their episodes files."""
    suite = load_suite(suite_path)
    model = next(m for m in suite.models if m.name == model_name)
    outcomes = Sweep(suite, Path(root), launcher, attempts).run_model(model, [Cell(model, t) for t in suite.tasks])
    job_id = submitit.JobEnvironment().job_id  # "123" or, in an array, "123_4"
    rows = [outcome_row(o, "slurm", job_id) for o in outcomes]
    folder = Path(root) / "status"
    folder.mkdir(parents=True, exist_ok=True)
    jsonio.write_json(folder / f"{model_name}.json", {"model": model_name, "cells": rows}, indent=1)
    return rows


class ModelJob(submitit.helpers.Checkpointable):
    """:func:`job_main` as a checkpointable job: on its time limit or a preemption submitit requeues the same
    call (``checkpoint`` resubmits it unchanged: the state lives in the run folder), up to ``max_requeues``
    time limits (``slurm:`` block, default 3). The work runs in a thread, so the model's cells go on while the
    main thread, where submitit's signal handler runs, waits for the job's end (:meth:`checkpoint`)."""

    def __call__(self, *args: Any) -> list[dict[str, Any]]:
        self._done = threading.Event()
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["rows"] = job_main(*args)
            except BaseException as exc:  # re-raised in the main thread
                outcome["error"] = exc
            finally:
                self._done.set()

        threading.Thread(target=work, name="suite-job", daemon=True).start()
        try:
            while not self._done.wait(1.0):
                pass
        except _WorkDone:  # the work ended while the checkpoint waited: no requeue
            pass
        if "error" in outcome:
            raise outcome["error"]
        return outcome["rows"]

    def checkpoint(self, *args: Any) -> submitit.helpers.DelayedSubmission:
        """Requeue the same call; on a time-limit signal first use the time SLURM's early signal leaves (the cells
        ignore the signal and keep working) up to :data:`REQUEUE_MARGIN_S` before the job's end, or until the
        work ends (then the job ends as done, not requeued). A signal further from the end than SLURM's lead (a
        preemption) checkpoints at once."""
        left = seconds_left(os.environ.get("SLURM_JOB_ID", ""))
        if left is not None and left <= SIGNAL_DELAY_S + SIGNAL_EARLY_S:
            deadline = time.monotonic() + left - REQUEUE_MARGIN_S
            done = getattr(self, "_done", None)
            while time.monotonic() < deadline:
                if done is not None and done.is_set():
                    raise _WorkDone
                time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
        return super().checkpoint(*args)

    def __getstate__(self) -> dict[str, Any]:
        return {}  # nothing of a running job travels with the requeued one (its state is the run folder)


class _WorkDone(Exception):
    """Raised by the checkpoint (in the main thread) when the job's work ended while it waited."""


def seconds_left(job_id: str, env: dict[str, str] | None = None) -> float | None:
    """Seconds until the job's end (``squeue``'s EndTime, the limit SLURM enforces), None when not known."""
    if not job_id or shutil.which("squeue") is None:
        return None
    proc = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%e"], capture_output=True, text=True, env=env, check=False)
    try:
        end = time.mktime(time.strptime(proc.stdout.split()[0], "%Y-%m-%dT%H:%M:%S"))
    except (IndexError, ValueError):
        return None
    return end - time.time()


def read_jobs(root: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads((root / JOBS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def job_ids(jobs: dict[str, dict[str, Any]]) -> set[str]:
    """The job ids of this sweep's models (:data:`JOBS_FILE`)."""
    return {str(j.get("job_id")) for j in jobs.values()}


def active_jobs(ids: Iterable[str], env: dict[str, str] | None = None) -> set[str]:
    """Which of ``ids`` (``123`` or ``123_4``: this sweep's jobs) are queued or running now; ``squeue`` is asked
    about these jobs only (``-j``), not about every user's."""
    ids = sorted({str(i) for i in ids if i and str(i) != "None"})
    if not ids:
        return set()
    if shutil.which("squeue") is None:
        raise UserError("--executor slurm: `squeue` not found (install slurm-client, or run on a SLURM login node)")
    argv = ["squeue", "-h", "-r", "-o", "%i", "-j", ",".join(ids)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        if "invalid job id" in proc.stderr.lower():  # every one of them has left the queue
            return set()
        raise UserError(f"squeue failed: {' '.join(proc.stderr.split())[:300]}")
    listed = set(proc.stdout.split())
    return {i for i in ids if i in listed or any(x.startswith(f"{i}_") for x in listed)}


def unfinished(suite: Suite, root: Path, model: ModelSpec) -> list[Cell]:
    return [c for c in (Cell(model, t) for t in suite.tasks) if not is_done(root, c)]


def sbatch_refusal(exc: BaseException) -> str:
    """sbatch's own message out of submitit's error (its ``sbatch: error: ...`` lines), as one line."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if "error" in ln.lower() and ln.strip()]
    ours = [ln for ln in lines if ln.startswith("sbatch:")] or lines[-1:] or [text.strip()]
    return " ".join(" ".join(ours).split())[:400]


def submit(suite: Suite, root: Path, launcher: Sequence[str], attempts: int) -> dict[str, str]:
    """Submit one job per model with unfinished cells and no live job (models with equal resources as one
    array); returns model -> new job id. An ``sbatch`` refusal is a one-line UserError quoting sbatch, raised once
    every other array is submitted."""
    jobs = read_jobs(root)
    alive = active_jobs(job_ids(jobs))
    todo = {m.name: unfinished(suite, root, m) for m in suite.models}  # each cell's marker read once
    groups: dict[tuple[int, int], list[ModelSpec]] = {}
    for m in suite.models:
        if todo[m.name] and str(jobs.get(m.name, {}).get("job_id")) not in alive:
            job = suite.slurm.jobs[m.name]
            groups.setdefault((job.gpus, job.minutes), []).append(m)
    submitted: dict[str, str] = {}
    refused: list[str] = []
    requeues = suite.slurm.max_requeues
    for (gpus, minutes), models in groups.items():
        executor = submitit.SlurmExecutor(folder=root / "slurm" / "%j", max_num_timeout=requeues)
        executor.update_parameters(**executor_parameters(suite, gpus, minutes), array_parallelism=len(models))
        args = (str(suite.path.resolve()), str(root.resolve()))
        try:  # submitit prints sbatch's stderr too: kept out of the terminal, quoted in the one line below
            with contextlib.redirect_stderr(io.StringIO()), executor.batch():
                handles = [executor.submit(ModelJob(), *args, m.name, list(launcher), attempts) for m in models]
        except (submitit.core.utils.FailedJobError, subprocess.SubprocessError, OSError) as exc:
            refused.append(f"sbatch refused the job of {', '.join(m.name for m in models)}: {sbatch_refusal(exc)}")
            continue
        for m, job in zip(models, handles):
            submitted[m.name] = str(job.job_id)
            jobs[m.name] = {
                "job_id": str(job.job_id),
                "cells": [c.label for c in todo[m.name]],
                "gpus": gpus,
                "time": minutes,
                "submitted": time.strftime("%Y-%m-%dT%H:%M:%S"),
            }
    root.mkdir(parents=True, exist_ok=True)
    sweep_state(suite, root, jobs, submitted=True)  # the jobs recorded, and the status says at once what they run
    if refused:  # the other models' jobs went out (and are recorded): one line for what did not
        raise UserError("; ".join(refused))
    return submitted


def cell_rows(suite: Suite, root: Path, jobs: dict[str, dict[str, Any]], alive: set[str]) -> list[dict[str, Any]]:
    """Every cell's status: done (its marker), running (its job, of ``jobs``, is queued or running), what its job
    reported, or failed when its job ended without finishing it (scancel, time limit, node failure)."""
    rows = []
    for m in suite.models:
        job = jobs.get(m.name, {})
        job_id = None if job.get("job_id") is None else str(job["job_id"])
        reported = {k: r for k, r in _job_report(root, m.name).items() if str(r.get("job_id")) == job_id}
        for t in suite.tasks:
            cell = Cell(m, t)
            row = {**outcome_row(Outcome(cell, "not-run"), "slurm", job_id), **reported.get(cell.label, {})}
            if is_done(root, cell):
                row["status"] = row["status"] if row["status"] in DONE else "done"
            elif job_id is not None and job_id in alive and cell.label in job.get("cells", []):
                row["status"] = "running"
            elif job_id is not None and cell.label not in reported:
                row["status"] = "failed"
                row["detail"] = (
                    f"job {job_id} ended before the cell finished (scancel, time limit, node failure); run the same command again to resume"
                )
            rows.append(row)
    return rows


def _job_report(root: Path, model: str) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads((root / "status" / f"{model}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {r["cell"]: r for r in data.get("cells", []) if isinstance(r, dict) and "cell" in r}


@dataclass(frozen=True)
class SweepState:
    """Where a SLURM sweep stands, read once (:func:`sweep_state`): which of its jobs (:data:`JOBS_FILE`) are queued
    or running, and every cell's row (:func:`cell_rows`)."""

    alive: set[str]
    rows: list[dict[str, Any]]

    @property
    def done(self) -> bool:
        return all(r["status"] in DONE for r in self.rows)

    def close(self, outputs: SuiteOutputs) -> int:
        """With every job ended and the outputs written (:func:`triangulation.suite.outputs.write_outputs`, as the
        local executor writes them): the report's page or why it failed; 1 when a cell is unfinished or the report failed."""
        if outputs.error:
            print(f"suite: report failed: {outputs.error}", file=sys.stderr)
            return 1
        if outputs.report is not None:
            print(f"report: {outputs.report}")
        return 0 if self.done else 1


def sweep_state(suite: Suite, root: Path, jobs: dict[str, dict[str, Any]] | None = None, submitted: bool = False) -> SweepState:
    """The sweep's :class:`SweepState` (``jobs``: as read before, else read now), recorded in ``suite_status.json``;
    ``submitted``: ``jobs`` were just submitted (:func:`submit`), so :data:`JOBS_FILE` is written with the status, in one
    call (:func:`triangulation.suite.status.write_status`)."""
    jobs = read_jobs(root) if jobs is None else jobs
    alive = active_jobs(job_ids(jobs))
    rows = cell_rows(suite, root, jobs, alive)
    write_status(root, suite, rows, "slurm", jobs if submitted else None)
    return SweepState(alive, rows)


def wait(suite: Suite, root: Path, poll: float = 5.0) -> SweepState:
    """Until none of the sweep's jobs is queued or running (its last state); a progress bar of finished cells."""
    from tqdm.auto import tqdm

    jobs = read_jobs(root)
    total = len(suite.models) * len(suite.tasks)
    bar = tqdm(total=total, desc=f"suite {suite.name} (slurm)", unit="cell", dynamic_ncols=True)
    try:
        while True:
            state = sweep_state(suite, root, jobs)
            bar.update(sum(r["status"] in DONE for r in state.rows) - bar.n)
            bar.set_postfix_str(f"{len(state.alive)} job(s) queued or running", refresh=True)
            if not state.alive:
                return state
            time.sleep(poll)
    finally:
        bar.close()


def status_lines(suite: Suite, state: SweepState) -> list[str]:
    """One line per model (job, state, cells done), then one per unfinished cell."""
    lines = []
    for m in suite.models:
        mine = [r for r in state.rows if r["model"] == m.name]
        done = sum(r["status"] in DONE for r in mine)
        job = mine[0]["job_id"] if mine else None
        where = "no job" if job is None else ("queued or running" if str(job) in state.alive else "ended")
        lines.append(f"{m.name}: {done}/{len(mine)} cells done; job {job or '-'}: {where}")
        lines += [f"  {r['task']}: {r['status']}{': ' + r['detail'] if r['detail'] else ''}" for r in mine if r["status"] not in DONE]
    return lines


def run_slurm(suite: Suite, root: Path, launcher: Sequence[str], attempts: int, no_wait: bool = False) -> int | SweepState:
    """Submit the unfinished models' jobs and wait for them: once every job has ended, its :func:`ended` state (the
    command writes the outputs and closes it); an exit status when it returns earlier (``no_wait``, Ctrl-C)."""
    root.mkdir(parents=True, exist_ok=True)
    submitted = submit(suite, root, launcher, attempts)
    jobs = ", ".join(f"{m} {j}" for m, j in submitted.items()) or "none (every cell is done or its job is still queued or running)"
    print(f"suite: submitted to SLURM: {jobs}", file=sys.stderr)
    if no_wait:
        print(f"suite: not waiting; where it stands: triangulate suite {suite.path} --output_path {root} --status")
        return 0
    try:
        state = wait(suite, root)
    except KeyboardInterrupt:  # the jobs are the cluster's now: they go on
        print(
            f"suite: stopped waiting; the jobs go on (scancel them to stop): triangulate suite {suite.path} --output_path {root} --status"
        )
        return 130
    return ended(suite, state)


def ended(suite: Suite, state: SweepState) -> SweepState:
    """Every job has ended: where each model stands said (stderr) before the outputs are written."""
    print("\n".join(status_lines(suite, state)), file=sys.stderr)
    return state


def status_command(suite: Suite, root: Path) -> int | SweepState:
    """``--status``: where the sweep stands (an exit status while a job is queued or running or a cell is unfinished);
    once no job is left and every cell is done, its :func:`ended` state (the command writes the outputs)."""
    if not (root / JOBS_FILE).is_file():
        raise UserError(f"{root} has no SLURM sweep ({JOBS_FILE} missing): start one with --executor slurm")
    state = sweep_state(suite, root)
    if state.alive or not state.done:
        print("\n".join(status_lines(suite, state)))
        return 0 if state.alive else 1
    return ended(suite, state)
