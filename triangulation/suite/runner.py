"""Run a suite: every model x task cell as its own ``triangulate eval`` / ``triangulate play`` process.

Layout of ``--output_path DIR``::

    DIR/runs/<model>/<task>/...          the cell's --output_path (lm-eval / play results folders)
    DIR/runs/<model>/<task>/.suite_done.json   marker: the cell finished (its fingerprint, files, time)
    DIR/logs/<model>/<task>.log          the cell's stdout and stderr, every attempt
    DIR/model_sizes.csv                  model -> billions of parameters (seed 003 Figure 1)
    DIR/suite_status.json                every cell's status after the last run
    DIR/report/                          `triangulate report` over DIR/runs (+ the suite's external tables)

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
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
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
    Outcome,
    cell_argv,
    cell_dir,
    is_done,
    marker_state,
    outcome_row,
    redacted_argv,
    write_marker,
    write_status,
)
from triangulation.suite.healing import serve_and_run
from triangulation.suite.outputs import report_model_names, run_report, write_sizes
from triangulation.suite.placement import Placement, pool_placements, waves
from triangulation.suite.pool import run_pool
from triangulation.suite.serve import Endpoint, api_endpoint, deaf_to_checkpoint, last_line, needs_completions, start_vllm
from triangulation.suite.spec import Cell, ModelSpec, Suite, cells


@dataclass
class SuiteResult:
    outcomes: list[Outcome] = field(default_factory=list)
    report: Path | None = None
    report_error: str = ""

    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in ("failed", "skipped-model-failed")]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed() or self.report_error else 0


class Sweep:
    """One run over a suite's cells: :meth:`run_model` runs one model's cells (served once when its engine
    is vllm/api, one process after another when hf); :meth:`stop` ends every cell process and server it
    started (Ctrl-C, SIGTERM)."""

    def __init__(self, suite: Suite, root: Path, launcher: tuple[str, ...] | list[str] = DEFAULT_LAUNCHER, attempts: int = 2, bar=None):
        self.suite, self.root, self.launcher, self.attempts, self.bar = suite, root, tuple(launcher), attempts, bar
        self.stopping = False
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen] = set()
        self._endpoints: list[Endpoint] = []

    def run_model(self, model: ModelSpec, model_cells: list[Cell], gpus: list[str] | None = None, replicas: int = 1) -> list[Outcome]:
        """Every cell of ``model`` (finished ones skipped); ``gpus``: the devices its server and cells see
        (``CUDA_VISIBLE_DEVICES``; None leaves the environment as it is); ``replicas``: vLLM data-parallel
        replicas over them (``--data-parallel-size``, each on ``gpus:`` of them)."""
        env = dict(os.environ)
        if gpus is not None:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpus)
        todo = [c for c in model_cells if not is_done(self.root, c)]
        done = [Outcome(c, "skipped-done") for c in model_cells if c not in todo]
        self._tick(len(done))
        if not todo:
            return done
        work, groups = split.expand(self.root, todo)  # `split: true` group cells: one cell per subtask
        self._regroup(groups, work)
        if not work:  # every subtask cell finished earlier: only the merge is left
            return done + split.merge_outcomes(self.root, todo, groups, [])
        if model.weightless:  # the chance player: its cells side by side, one per CPU core
            return done + split.merge_outcomes(self.root, todo, groups, self._run_concurrently(work, env, workers=os.cpu_count() or 1))
        if not model.served:
            return done + split.merge_outcomes(self.root, todo, groups, self._run_serially(work, env))
        return done + split.merge_outcomes(self.root, todo, groups, serve_and_run(self, model, work, env, replicas=replicas))

    def run_placed(self, placement: Placement, plan: list[Cell], gpus: list[str] | None) -> list[Outcome]:
        """The cells of ``plan`` that are the placed model's (:meth:`run_model`, on ``gpus`` with the placement's
        replicas), each failure said on its own line."""
        model = placement.model
        outcomes = self.run_model(model, [c for c in plan if c.model is model], gpus, placement.replicas)
        for o in outcomes:
            if o.status == "failed":
                self._say(f"suite: {o.cell.label} failed after {o.attempts} attempt(s): {o.detail}")
        return outcomes

    def _endpoint(self, model: ModelSpec, env: dict[str, str], replicas: int = 1) -> Endpoint:
        if model.engine == "api":
            endpoint = api_endpoint(model.base_url or "", model.ref.args, model.api_key_env)
            endpoint.read_max_length()  # None when the endpoint does not say: lm-eval's default then
            self._endpoints.append(endpoint)
            return endpoint
        log = self.root / "logs" / model.name / "server.log"
        endpoint = start_vllm(model.ref, log, gpus=model.gpu_count, serve_args=model.serve_args, env=env, replicas=replicas)
        self._endpoints.append(endpoint)
        started = time.monotonic()
        try:
            endpoint.server.wait_ready(model.serve_timeout)
        except BaseException:  # exited early (its workers may not have), timed out, or Ctrl-C
            endpoint.server.stop()
            raise
        endpoint.read_max_length()
        self._say(
            f"suite: {model.name}: vllm serve answered on {endpoint.base_url} after {time.monotonic() - started:.0f} s"
            f" (max_model_len {endpoint.max_length or 'not given'})"
        )
        return endpoint

    def _run_serially(self, todo: list[Cell], env: dict[str, str]) -> list[Outcome]:
        out: list[Outcome] = []
        streak = 0
        for cell in todo:
            if streak >= self.suite.max_consecutive_failures:
                out.append(Outcome(cell, "skipped-model-failed", detail=f"{cell.model.name} failed {streak} cells in a row"))
            else:
                out.append(self.run_cell(cell, env=env))
                streak = 0 if out[-1].status == "done" else streak + 1
            self._tick()
        return out

    def _run_concurrently(
        self, todo: list[Cell], env: dict[str, str], endpoint: Endpoint | None = None, workers: int = CELLS_AT_ONCE
    ) -> list[Outcome]:
        """``workers`` cells at a time, each its own process (a client of ``endpoint`` when served); once the
        server is dead, cells not yet finished fail as such (a rerun resumes them: play cells resume inside their
        episodes files)."""

        def one(cell: Cell) -> Outcome:
            outcome = self.run_cell(cell, env=env, endpoint=endpoint)
            self._tick()
            return outcome

        for cell in todo if endpoint is not None else []:  # lm-eval's task index once, not in several threads at once
            if cell.task.runner == "eval":
                needs_completions(cell.task.tasks, cell.task.include_path)
        with ThreadPoolExecutor(max_workers=max(1, min(len(todo), workers)), thread_name_prefix="cell") as pool:
            try:
                return list(pool.map(one, todo))
            except BaseException:  # Ctrl-C: end the cells before the pool waits for its threads
                self.stop()
                raise

    def run_cell(self, cell: Cell, env: Mapping[str, str] | None = None, endpoint: Endpoint | None = None) -> Outcome:
        """Run one cell under its lock (:meth:`_cell_lock`): a cell another suite on the same folder holds is
        waited for, and skipped when that suite finished it, so two suites never run one cell twice."""
        lock = self._cell_lock(cell)
        try:
            marker = marker_state(self.root, cell)
            if marker.done:
                return Outcome(cell, "skipped-done")
            return self._attempt_cell(cell, env, endpoint, overwrite=marker.stale)  # the entry changed: play starts over
        finally:
            lock.release()

    def _cell_lock(self, cell: Cell) -> RunLock:
        """The OS lock of one cell (``runs/<model>/<task>.lock``, :class:`plumbing.locks.RunLock`), waited for (and
        said so) while another process holds it."""
        folder = cell_dir(self.root, cell)
        try:
            return RunLock(folder, what=f"suite cell {cell.label}").acquire()
        except UserError:
            self._say(f"suite: {cell.label} is being run by another suite on {self.root}; waiting for it (lock {folder}.lock)")
            return RunLock(folder, wait=True).acquire()

    def _attempt_cell(self, cell: Cell, env: Mapping[str, str] | None, endpoint: Endpoint | None, overwrite: bool = False) -> Outcome:
        """Run one cell (up to ``attempts`` times; a dead server is not retried); on success write its marker;
        ``overwrite``: its stored results are of another configuration."""
        root, attempts = self.root, self.attempts
        folder = cell_dir(root, cell)
        folder.mkdir(parents=True, exist_ok=True)
        log = root / "logs" / cell.model.name / f"{cell.task.name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        argv = cell_argv(cell, folder, self.launcher, overwrite=overwrite, endpoint=endpoint)
        started = time.time()
        detail = "stopped"
        limit = cell.task.options.get("timeout", self.suite.timeout)
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
                write_marker(root, cell, results, time.time() - started, attempt)
                return Outcome(cell, "done", attempt, time.time() - started)
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
        for endpoint in self._endpoints:
            if endpoint.server is not None:
                endpoint.server.stop()

    def _regroup(self, groups: dict[str, list[Cell]], work: list[Cell]) -> None:
        """The progress bar counts subtask cells: a split group cell is as many cells as its subtasks
        (the finished ones, those :func:`split.expand` left out of ``work``, ticked at once)."""
        if self.bar is None or not groups:
            return
        self.bar.total += sum(len(subs) - 1 for subs in groups.values())
        left = {c.label for c in work}
        self.bar.update(sum(1 for subs in groups.values() for s in subs if s.label not in left))

    def _tick(self, n: int = 1) -> None:
        if self.bar is not None and n:
            self.bar.update(n)

    def _say(self, line: str) -> None:
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
    suite: Suite,
    root: Path,
    launcher: tuple[str, ...] | list[str] = DEFAULT_LAUNCHER,
    retries: int | None = None,
    report: bool = True,
    gpus: list[str] | None = None,
    placements: list[Placement] | None = None,
) -> SuiteResult:
    """Every cell (finished ones skipped), the models of one wave at once on their GPUs (``placements``, as the
    command placed them; else placed here: :mod:`triangulation.suite.placement`), then the report over ``root``;
    returns each cell's outcome. Ctrl-C or SIGTERM stops every cell and server started, then re-raises."""
    from tqdm.auto import tqdm

    if placements is None:  # a model too big for the node: an error before anything runs
        placements = pool_placements(suite, gpus or [], root=root)
    root.mkdir(parents=True, exist_ok=True)
    attempts = 1 + (suite.retries if retries is None else retries)
    result = SuiteResult()
    plan = cells(suite)
    names = report_model_names(suite.models)  # models whose paths only end alike get unique names
    for dup in sorted({n for n in names if names.count(n) > 1}):
        print(
            f"suite: warning: several models are named {dup!r} in results (the same model_args name); the report keeps the latest run of each task",
            file=sys.stderr,
        )
    bar = tqdm(total=len(plan), desc=f"suite {suite.name}", unit="cell", dynamic_ncols=True)
    sweep = Sweep(suite, root, launcher, attempts, bar=bar)
    previous = _terminate_on_sigterm()
    by_model: dict[str, list[Outcome]] = {}
    try:
        if gpus:
            by_model.update(_run_pool(sweep, placements, plan, list(gpus)))
        else:
            for wave in waves(placements):
                by_model.update(_run_wave(sweep, wave, plan))
    except BaseException:
        sweep.stop()
        raise
    finally:
        bar.close()
        result.outcomes = [o for m in suite.models for o in by_model.get(m.name, [])]
        write_status(root, suite, [outcome_row(o) for o in result.outcomes])
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    write_sizes(root, suite)
    if report:
        try:
            result.report = run_report(root, suite)
        except UserError as exc:  # the cells' outcomes still get summarised
            result.report_error = " ".join(str(exc).split())
    return result


def _run_wave(sweep: Sweep, wave: list[Placement], plan: list[Cell]) -> dict[str, list[Outcome]]:
    """The models of one wave at once, a thread each with its GPUs (the main thread waits, so Ctrl-C and
    SIGTERM reach it and :meth:`Sweep.stop` ends every model's cells and servers)."""
    done: dict[str, list[Outcome]] = {}
    errors: list[BaseException] = []

    def work(p: Placement) -> None:
        try:
            done[p.model.name] = sweep.run_placed(p, plan, None if p.gpus is None else list(p.gpus))
        except BaseException as exc:  # noqa: BLE001  (re-raised in the main thread)
            errors.append(exc)

    if len(wave) == 1:  # in the main thread, as one model at a time always ran
        work(wave[0])
    else:
        threads = [threading.Thread(target=work, args=(p,), name=f"suite-{p.model.name}", daemon=True) for p in wave]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(timeout=0.5)
    if errors:
        raise errors[0]
    return done


def _run_pool(sweep: Sweep, placements: list[Placement], plan: list[Cell], gpus: list[str]) -> dict[str, list[Outcome]]:
    """The models in the GPU pool (:func:`triangulation.suite.pool.run_pool`), in the expected start order of
    the plan: each on as many GPUs as its placement holds (replicas included) as soon as they are free."""
    by_name = {p.model.name: p for p in placements}
    order = [(p.model.name, len(p.gpus or ())) for p in sorted(placements, key=lambda p: (p.start or 0.0, -(p.end or 0.0)))]

    return run_pool(order, gpus, lambda name, ids: sweep.run_placed(by_name[name], plan, ids))


def _terminate_on_sigterm():
    """SIGTERM -> SystemExit, so the sweep stops the running cells and servers instead of orphaning them."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, handler)


def summary(result: SuiteResult) -> str:
    """Counts per status, then one line per failed or skipped cell."""
    counts: dict[str, int] = {}
    for o in result.outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    lines = ["suite: " + ", ".join(f"{n} {s}" for s, n in counts.items())]
    by_model: dict[str, list[Outcome]] = {}
    for o in result.failed():
        by_model.setdefault(o.cell.model.name, []).append(o)
    for model, outs in by_model.items():
        lines.append(f"  {model}: {len(outs)} cell(s) not finished")
        lines += [f"    {o.cell.task.name}: {o.status}: {o.detail}" for o in outs]
    if result.report_error:
        lines.append(f"  report failed: {result.report_error}")
    return "\n".join(lines)


def as_mapping(result: SuiteResult) -> Mapping[str, str]:
    return {o.cell.label: o.status for o in result.outcomes}
