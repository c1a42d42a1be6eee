"""Run a suite: every model x task cell as its own ``triangulate eval`` / ``triangulate play`` process.

Layout of ``--output_path DIR``::

    DIR/runs/<model>/<task>/...          the cell's --output_path (lm-eval / play results folders)
    DIR/runs/<model>/<task>/.suite_done.json   marker: the cell finished (its fingerprint, files, time)
    DIR/logs/<model>/<task>.log          the cell's stdout and stderr, every attempt
    DIR/model_sizes.csv                  model -> billions of parameters (seed 003 Figure 1)
    DIR/suite_status.json                every cell's status after the last run
    DIR/report/                          `triangulate report` over DIR/runs (+ the suite's external tables)

The runner executes a sweep's plan, made once before anything runs (:mod:`triangulation.suite.sweep_plan`: which
cells are finished, each split group's subtask cells, each process's folder, log, time limit and endpoint path).
A cell runs in a subprocess so a crash (out of memory, a segfault in a backend) stays in that cell. On a
GPU node the models share a GPU pool (:mod:`triangulation.suite.pool`): each starts, a thread each, as
soon as its GPUs are free, longest expected work first, its cells and server seeing only its GPUs. A
cell whose marker holds the same fingerprint is skipped; a failed cell is retried ``retries`` times; a
model that fails ``max_consecutive_failures`` cells in a row has its remaining cells skipped. The
exit status is 1 when any cell failed or was skipped, else 0.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TextIO

from plumbing import run_folder
from plumbing.errors import UserError
from plumbing.locks import RunLock
from plumbing.secrets import hide_argv_secrets, scrub
from triangulation.suite import split
from triangulation.suite.cells import (
    CELLS_AT_ONCE,
    DEFAULT_LAUNCHER,
    FIRST_REQUEST,
    USAGE_ERROR,
    MarkerFacts,
    cell_argv,
    marker_state,
    redacted_argv,
    write_marker,
)
from triangulation.suite.healing import serve_and_run
from triangulation.suite.placement import Placement
from triangulation.suite.pool import run_pool
from triangulation.suite.serve import Endpoint, deaf_to_checkpoint, last_line
from triangulation.suite.spec import Cell, ModelSpec, Suite
from triangulation.suite.status import Outcome, SuiteResult, outcome_row, write_status
from triangulation.suite.sweep_plan import CellRun, ModelRun, SweepPlan, plan_models


class Sweep:
    """The executor of a sweep's plan (:mod:`triangulation.suite.sweep_plan`): :meth:`run` runs one model's part (served
    once when its engine is vllm/api, one process after another when hf); :meth:`stop` ends every cell process and
    server it started (Ctrl-C, SIGTERM)."""

    def __init__(self, suite: Suite, root: Path, launcher: tuple[str, ...] | list[str] = DEFAULT_LAUNCHER, attempts: int = 2, bar=None):
        self.suite, self.root, self.launcher, self.attempts, self.bar = suite, root, tuple(launcher), attempts, bar
        self.stopping = False
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen] = set()
        self.servers: list[Endpoint] = []  # every endpoint started (:func:`triangulation.suite.serve.open_endpoint`)

    def run_model(self, model: ModelSpec, model_cells: list[Cell], gpus: list[str] | None = None, replicas: int = 1) -> list[Outcome]:
        """Every cell of ``model`` (finished ones skipped), planned now (:func:`plan_models`) and run (:meth:`run`);
        ``replicas``: vLLM data-parallel replicas over ``gpus``. A SLURM job's sweep."""
        placement = Placement(model, None if gpus is None else tuple(str(g) for g in gpus), 0, replicas)
        [run] = plan_models(self.root, [placement], {model.name: model_cells}, self.suite.timeout)
        return self.run(run, gpus)

    def run(self, run: ModelRun, gpus: Sequence[str] | None = None) -> list[Outcome]:
        """One model's part of the plan, an outcome per suite cell (a split group merged once its subtasks are all
        done), each failure said on its own line; ``gpus``: the devices its server and cells see
        (``CUDA_VISIBLE_DEVICES``; None leaves the environment as it is)."""
        env = dict(os.environ)
        if gpus is not None:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpus)
        self.tick(run.counted)
        for folder in run.stale_merges:
            shutil.rmtree(folder, ignore_errors=True)
        ran = self._execute(run, env) if run.work else []
        outcomes = [Outcome(c, "skipped-done", results=run.finished[c.label]) for c in run.cells if c.label in run.finished]
        outcomes += split.merge_outcomes(self.root, run.todo, run.groups, ran, run.finished)
        merged = {o.cell.label: o for o in outcomes if o.status == "done" and o.cell.label in run.groups}
        for label, o in merged.items():  # a split group merged now: its marker, as every finished cell's
            self._record(o, run.group_facts[label])
        for o in outcomes:
            if o.status == "failed":
                self.say(f"suite: {o.cell.label} failed after {o.attempts} attempt(s): {o.detail}")
        return outcomes

    def _execute(self, run: ModelRun, env: dict[str, str]) -> list[Outcome]:
        model = run.model
        if model.weightless:  # the chance player: its cells side by side, one per CPU core
            return self.run_concurrently(run.work, env, workers=os.cpu_count() or 1)
        if not model.served:
            return self._run_serially(run.work, env)
        return serve_and_run(self, run, env)

    def _run_serially(self, todo: Sequence[CellRun], env: dict[str, str]) -> list[Outcome]:
        out: list[Outcome] = []
        streak = 0
        for run in todo:
            if streak >= self.suite.max_consecutive_failures:
                out.append(Outcome(run.cell, "skipped-model-failed", detail=f"{run.cell.model.name} failed {streak} cells in a row"))
            else:
                out.append(self.run_cell(run, env=env))
                streak = 0 if out[-1].status == "done" else streak + 1
            self.tick()
        return out

    def run_concurrently(
        self, todo: Sequence[CellRun], env: Mapping[str, str], endpoint: Endpoint | None = None, workers: int = CELLS_AT_ONCE
    ) -> list[Outcome]:
        """``workers`` cells at a time, each its own process (a client of ``endpoint`` when served); once the
        server is dead, cells not yet finished fail as such (a rerun resumes them: play cells resume inside their
        episodes files)."""

        def one(run: CellRun) -> Outcome:
            outcome = self.run_cell(run, env=env, endpoint=endpoint)
            self.tick()
            return outcome

        with ThreadPoolExecutor(max_workers=max(1, min(len(todo), workers)), thread_name_prefix="cell") as pool:
            try:
                return list(pool.map(one, todo))
            except BaseException:  # Ctrl-C: end the cells before the pool waits for its threads
                self.stop()
                raise

    def run_cell(self, run: CellRun, env: Mapping[str, str] | None = None, endpoint: Endpoint | None = None) -> Outcome:
        """Run one cell under its lock (:meth:`_cell_lock`): a cell another suite on the same folder holds is
        waited for, and skipped when that suite finished it, so two suites never run one cell twice."""
        lock = self._cell_lock(run)
        try:
            marker = marker_state(self.root, run.cell)
            if marker.done:
                return Outcome(run.cell, "skipped-done", results=marker.results)
            # marker.stale: the entry changed, a play cell starts over
            argv = cell_argv(run.cell, run.folder, self.launcher, marker.stale, endpoint, run.completions)
            return self._attempt_cell(run, argv, env, endpoint)
        finally:
            lock.release()

    def _cell_lock(self, run: CellRun) -> RunLock:
        """The OS lock of one cell (``runs/<model>/<task>.lock``, :class:`plumbing.locks.RunLock`), waited for (and
        said so) while another process holds it."""
        try:
            return RunLock(run.folder, what=f"suite cell {run.cell.label}").acquire()
        except UserError:
            self.say(f"suite: {run.cell.label} is being run by another suite on {self.root}; waiting for it (lock {run.folder}.lock)")
            return RunLock(run.folder, wait=True).acquire()

    def _attempt_cell(self, run: CellRun, argv: list[str], env: Mapping[str, str] | None, endpoint: Endpoint | None) -> Outcome:
        """Run one cell's command ``argv`` (up to ``attempts`` times; a dead server is not retried); on success write its marker."""
        attempts, cell, folder, log, limit = self.attempts, run.cell, run.folder, run.log, run.timeout
        folder.mkdir(parents=True, exist_ok=True)
        log.parent.mkdir(parents=True, exist_ok=True)
        started = time.time()
        detail = "stopped"
        for attempt in range(1, attempts + 1):
            if attempt > 1:
                self._backoff(attempt)
            if self.stopping:
                break
            if endpoint is not None and not endpoint.alive():
                return Outcome(cell, "failed", attempt - 1, time.time() - started, self._server_died(endpoint))
            t0 = time.time()
            (folder / FIRST_REQUEST).unlink(missing_ok=True)  # this attempt's start-up ends at its own first request
            code = self._run_process(argv, log, attempt, env, limit)
            results = run_folder.results_since(folder, t0) or (finished_results(folder, cell) if code == 0 else [])
            if code == 0 and results:
                return self._record(Outcome(cell, "done", attempt, time.time() - started, results=tuple(results)), run.facts)
            if code is None:
                detail = f"timed out after {limit:g} s"
            elif code == 0:
                detail = f"exited 0 but wrote no {run_folder.RESULTS_GLOB}"
            else:
                detail = f"exit {code}: {last_line(log)}"
            if endpoint is not None and not endpoint.alive():
                return Outcome(cell, "failed", attempt, time.time() - started, f"{detail}; {self._server_died(endpoint)}")
            if code == USAGE_ERROR:  # a one-line user error (unknown task, bad argument): the same again
                return Outcome(cell, "failed", attempt, time.time() - started, f"{detail} (not retried; log: {log})")
        return Outcome(cell, "failed", attempts, time.time() - started, f"{detail} (log: {log})")

    def _record(self, outcome: Outcome, facts: MarkerFacts) -> Outcome:
        """A finished cell's done-marker (a split group's once merged): its results files, time and attempts, and ``facts``."""
        write_marker(self.root, outcome.cell, facts, list(outcome.results), outcome.seconds, outcome.attempts)
        return outcome

    def _backoff(self, attempt: int) -> None:
        """Before attempt ``attempt`` (>= 2): ``retry_wait`` x 2^(attempt - 2) seconds (a transient backend
        fault: refused connection, 5xx, timeout), cut short by :meth:`stop`."""
        self._stopped.wait(self.suite.retry_wait * 2 ** (attempt - 2))

    def _server_died(self, endpoint: Endpoint) -> str:
        return f"the server died (rerun to resume): {last_line(endpoint.server.log)} (log: {endpoint.server.log})"

    def _run_process(self, argv: list[str], log: Path, attempt: int, env: Mapping[str, str] | None, limit: float | None) -> int | None:
        """One attempt: the exit status, or None when it ran past ``limit`` seconds (it is killed)."""
        hidden, secrets = hide_argv_secrets(argv)  # credentials reach the cell through its environment, never its argv
        env = {**(os.environ if env is None else env), **secrets}
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} attempt {attempt}/{self.attempts}: {shlex.join(redacted_argv(argv))}\n")
            fh.flush()
            proc = subprocess.Popen(
                deaf_to_checkpoint(hidden), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=dict(env)
            )
            reader = scrub_output(proc, fh)  # every line the cell prints goes through the secret scrubber
            with self._lock:
                self._procs.add(proc)
            try:
                return proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                return None
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            finally:
                reader.join(timeout=10)
                with self._lock:
                    self._procs.discard(proc)

    def stop(self) -> None:
        """End every cell process (SIGTERM, then SIGKILL after 10 s) and server this sweep started."""
        self.stopping = True
        self._stopped.set()
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        for endpoint in self.servers:
            if endpoint.server is not None:
                endpoint.server.stop()

    def tick(self, n: int = 1) -> None:
        if self.bar is not None and n:
            self.bar.update(n)

    def say(self, line: str) -> None:
        (self.bar.write if self.bar is not None else print)(line)


def finished_results(folder: Path, cell: Cell) -> list[str]:
    """For a play cell whose child exited 0 and wrote no results file (it found every episode played, by a run whose
    marker a kill kept from being written): the newest results file under ``folder`` that reports every task of the
    cell, relative to ``folder`` (play exits 0 so only when that file covers the stored episodes); [] for eval."""
    if cell.task.runner != "play":
        return []
    for found in run_folder.newest_first(folder.rglob(run_folder.RESULTS_GLOB)):
        if all(t in found.results or t in (found.data.get("groups") or {}) for t in cell.task.tasks):
            return [str(found.path.relative_to(folder))]
    return []


def scrub_output(proc: subprocess.Popen, log: TextIO) -> threading.Thread:
    """A thread writing ``proc``'s stdout (stderr merged) to ``log`` line by line through the secret scrubber."""

    def pump() -> None:
        with proc.stdout:
            for raw in iter(proc.stdout.readline, b""):
                log.write(scrub(raw.decode("utf-8", errors="replace")))
                log.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    return reader


def run_suite(
    plan: SweepPlan,
    launcher: tuple[str, ...] | list[str] = DEFAULT_LAUNCHER,
    retries: int | None = None,
    gpus: list[str] | None = None,
) -> SuiteResult:
    """Every process of ``plan`` (:func:`triangulation.suite.sweep_plan.plan_sweep`): on ``gpus`` the models in the GPU
    pool, each as its placement has it, else one after another; then ``suite_status.json``; returns each cell's
    outcome (the command then writes the sizes and the report: :func:`triangulation.suite.outputs.write_outputs`). Ctrl-C or SIGTERM stops every cell and server started, then re-raises."""
    from tqdm.auto import tqdm

    suite, root = plan.suite, plan.root
    root.mkdir(parents=True, exist_ok=True)
    attempts = 1 + (suite.retries if retries is None else retries)
    result = SuiteResult()
    for dup in plan.duplicate_names:
        print(
            f"suite: warning: several models are named {dup!r} in results (the same model_args name); the report keeps the latest run of each task",
            file=sys.stderr,
        )
    bar = tqdm(total=plan.size, desc=f"suite {suite.name}", unit="cell", dynamic_ncols=True)
    sweep = Sweep(suite, root, launcher, attempts, bar=bar)
    previous = _terminate_on_sigterm()
    by_model: dict[str, list[Outcome]] = {}
    try:
        if gpus:
            by_model.update(_run_pool(sweep, plan.models, list(gpus)))
        else:  # no GPU inventory: one model after another, in the main thread
            for run in plan.models:
                by_model[run.placement.model.name] = sweep.run(run, run.placement.gpus)
    except BaseException:
        sweep.stop()
        raise
    finally:
        bar.close()
        result.outcomes = [o for m in suite.models for o in by_model.get(m.name, [])]
        rows = [outcome_row(o) for o in result.outcomes]
        write_status(root, suite, rows)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return result


def _run_pool(sweep: Sweep, runs: Sequence[ModelRun], gpus: list[str]) -> dict[str, list[Outcome]]:
    """The models in the GPU pool (:func:`triangulation.suite.pool.run_pool`), in the expected start order of
    the plan: each on as many GPUs as its placement holds (replicas included) as soon as they are free."""
    by_name = {r.placement.model.name: r for r in runs}
    placed = sorted((r.placement for r in runs), key=lambda p: (p.start or 0.0, -(p.end or 0.0)))
    return run_pool([(p.model.name, len(p.gpus or ())) for p in placed], gpus, lambda name, ids: sweep.run(by_name[name], ids))


def _terminate_on_sigterm():
    """SIGTERM -> SystemExit, so the sweep stops the running cells and servers instead of orphaning them."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, handler)
