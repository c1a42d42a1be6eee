"""Run a suite: every model x task cell as its own ``triangulate eval`` / ``triangulate play`` process.

Layout of ``--output_path DIR``::

    DIR/runs/<model>/<task>/...          the cell's --output_path (lm-eval / play results folders)
    DIR/runs/<model>/<task>/.suite_done.json   marker: the cell finished (its fingerprint, files, time)
    DIR/logs/<model>/<task>.log          the cell's stdout and stderr, every attempt
    DIR/model_sizes.csv                  model -> billions of parameters (seed 003 Figure 1)
    DIR/suite_status.json                every cell's status after the last run
    DIR/report/                          `triangulate report` over DIR/runs (+ the suite's external tables)

A cell runs in a subprocess so a crash (out of memory, a segfault in a backend) stays in that cell. The
models of one wave (:mod:`triangulation.suite.placement`) run at once, a thread each, their cells and
server seeing only their GPUs. A
cell whose marker holds the same fingerprint is skipped; a failed cell is retried ``retries`` times; a
model that fails ``max_consecutive_failures`` cells in a row has its remaining cells skipped. The
exit status is 1 when any cell failed or was skipped, else 0.
"""

from __future__ import annotations

import csv
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from plumbing import jsonio, run_folder
from plumbing.errors import UserError
from plumbing.secrets import scrub
from triangulation.suite.serve import Endpoint, ServerError, api_endpoint, last_line, needs_completions, start_vllm
from triangulation.suite.spec import Cell, ModelSpec, Suite, cells

MARKER = ".suite_done.json"
USAGE_ERROR = 2  # `triangulate`'s exit status for a UserError (and argparse's for a usage mistake)
DEFAULT_LAUNCHER = (sys.executable, "-m", "triangulation")


@dataclass
class Outcome:
    cell: Cell
    status: str  # done | skipped-done | failed | skipped-model-failed
    attempts: int = 0
    seconds: float = 0.0
    detail: str = ""


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


def _json_arg(value: Any) -> str:
    """A mapping as the JSON object lm-eval's MergeDictAction reads (``--gen_kwargs``, ``--metadata``, ...)."""
    return json.dumps(dict(value), ensure_ascii=False, sort_keys=True)


def _model_flags(model: str | None, model_args: Any, flag: str = "--model", args_flag: str = "--model_args") -> list[str]:
    out: list[str] = []
    if model:
        out += [flag, model]
    if model_args is not None:
        out += [args_flag, model_args if isinstance(model_args, str) else _json_arg(model_args)]
    return out


def cell_argv(
    cell: Cell,
    output_dir: Path,
    launcher: tuple[str, ...] | list[str] = DEFAULT_LAUNCHER,
    overwrite: bool = False,
    endpoint: Endpoint | None = None,
) -> list[str]:
    """The command line that runs one cell (``launcher`` is how ``triangulate`` is started); with ``endpoint``
    (a served model) the cell is a client of that server (:meth:`Endpoint.client`)."""
    m, t, o = cell.model, cell.task, cell.task.options
    argv = [*launcher, t.runner, "--tasks", ",".join(t.tasks), "--output_path", str(output_dir)]
    if endpoint is not None:
        completions = t.runner == "eval" and (not m.apply_chat_template or needs_completions(t.tasks))
        argv += _model_flags(*endpoint.client(completions, m.num_concurrent))
    elif m.model is None and m.model_args is None:
        # the embedded SmolLM2: each command supplies it (`eval` and `play` pick the same file)
        pass
    else:
        argv += _model_flags(m.model or "hf", m.model_args_given)
    if o.get("limit") is not None:
        argv += ["--limit", str(o["limit"])]
    if "seed" in o:
        argv += ["--seed", str(o["seed"])]
    if o.get("gen_kwargs"):
        argv += ["--gen_kwargs", _json_arg(o["gen_kwargs"])]
    batch = o.get("batch_size") or m.batch_size
    if batch is not None and endpoint is None:  # a client's concurrency is num_concurrent
        argv += ["--batch_size", str(batch)]
    if m.device and endpoint is None:
        argv += ["--device", m.device]
    if t.runner == "eval":
        if "num_fewshot" in o:
            argv += ["--num_fewshot", str(o["num_fewshot"])]
        if m.apply_chat_template:
            argv += ["--apply_chat_template"]
            if o.get("fewshot_as_multiturn"):
                argv += ["--fewshot_as_multiturn"]
        if o.get("metadata"):
            argv += ["--metadata", _json_arg(o["metadata"])]
        if o.get("log_samples"):
            argv += ["--log_samples"]
    else:
        if endpoint is not None:
            argv += ["--max_live", str(m.num_concurrent)]  # lockstep: every live episode's turn in flight
        if o.get("task_args"):
            argv += ["--task_args", _json_arg(o["task_args"])]
        if o.get("judge_gen_kwargs"):
            argv += ["--judge_gen_kwargs", _json_arg(o["judge_gen_kwargs"])]
        if m.judge:
            argv += _model_flags(m.judge.get("model"), m.judge.get("model_args"), "--judge_model", "--judge_model_args")
        if m.player_b:
            argv += _model_flags(m.player_b.get("model"), m.player_b.get("model_args"), "--model_b", "--model_args_b")
        if overwrite:
            argv += ["--overwrite"]
    return argv


def cell_dir(root: Path, cell: Cell) -> Path:
    return root / "runs" / cell.model.name / cell.task.name


def read_marker(root: Path, cell: Cell) -> dict[str, Any] | None:
    path = cell_dir(root, cell) / MARKER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_done(root: Path, cell: Cell) -> bool:
    """Finished with this very configuration, and its results files are still there."""
    marker = read_marker(root, cell)
    if not marker or marker.get("fingerprint") != cell.fingerprint():
        return False
    return all((cell_dir(root, cell) / f).is_file() for f in marker.get("results", [])) and bool(marker.get("results"))


def _write_marker(root: Path, cell: Cell, results: list[str], seconds: float, attempts: int) -> None:
    payload = {
        "cell": cell.label,
        "fingerprint": cell.fingerprint(),
        "results": results,
        "seconds": round(seconds, 1),
        "attempts": attempts,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    jsonio.write_json(cell_dir(root, cell) / MARKER, payload, indent=1)


class Sweep:
    """One run over a suite's cells: :meth:`run_model` runs one model's cells (served once when its engine
    is vllm/api, one process after another when hf); :meth:`stop` ends every cell process and server it
    started (Ctrl-C, SIGTERM)."""

    def __init__(self, suite: Suite, root: Path, launcher: tuple[str, ...] | list[str] = DEFAULT_LAUNCHER, attempts: int = 2, bar=None):
        self.suite, self.root, self.launcher, self.attempts, self.bar = suite, root, tuple(launcher), attempts, bar
        self.stopping = False
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen] = set()
        self._endpoints: list[Endpoint] = []

    def run_model(self, model: ModelSpec, model_cells: list[Cell], gpus: list[str] | None = None) -> list[Outcome]:
        """Every cell of ``model`` (finished ones skipped); ``gpus``: the devices its server and cells see
        (``CUDA_VISIBLE_DEVICES``; None leaves the environment as it is)."""
        env = dict(os.environ)
        if gpus is not None:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpus)
        todo = [c for c in model_cells if not is_done(self.root, c)]
        done = [Outcome(c, "skipped-done") for c in model_cells if c not in todo]
        self._tick(len(done))
        if not todo:
            return done
        if not model.served:
            return done + self._run_serially(todo, env)
        try:
            endpoint = self._endpoint(model, env)
        except (ServerError, UserError) as exc:
            detail = f"server did not come up: {exc}"
            self._say(f"suite: {model.name}: {detail}")
            self._tick(len(todo))
            return done + [Outcome(c, "failed", detail=detail) for c in todo]
        try:
            return done + self._run_concurrently(todo, endpoint, endpoint.client_env(env))
        finally:
            if endpoint.server is not None:
                endpoint.server.stop()

    def _endpoint(self, model: ModelSpec, env: dict[str, str]) -> Endpoint:
        if model.engine == "api":
            endpoint = api_endpoint(model.base_url or "", model.model_args, model.api_key_env)
            self._endpoints.append(endpoint)
            return endpoint
        log = self.root / "logs" / model.name / "server.log"
        endpoint = start_vllm(model.model, model.model_args, log, gpus=model.gpu_count, serve_args=model.serve_args, env=env)
        self._endpoints.append(endpoint)
        started = time.monotonic()
        try:
            endpoint.server.wait_ready(model.serve_timeout)
        except BaseException:  # exited early (its workers may not have), timed out, or Ctrl-C
            endpoint.server.stop()
            raise
        self._say(f"suite: {model.name}: vllm serve answered on {endpoint.base_url} after {time.monotonic() - started:.0f} s")
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

    def _run_concurrently(self, todo: list[Cell], endpoint: Endpoint, env: dict[str, str]) -> list[Outcome]:
        """Each cell a client process of ``endpoint``, all at once; once the server is dead, cells not yet
        finished fail as such (a rerun resumes them: play cells resume inside their episodes files)."""
        from concurrent.futures import ThreadPoolExecutor

        def one(cell: Cell) -> Outcome:
            outcome = self.run_cell(cell, env=env, endpoint=endpoint)
            self._tick()
            return outcome

        for cell in todo:  # lm-eval's task index once, here, rather than in several threads at once
            if cell.task.runner == "eval":
                needs_completions(cell.task.tasks)
        with ThreadPoolExecutor(max_workers=len(todo), thread_name_prefix="cell") as pool:
            try:
                return list(pool.map(one, todo))
            except BaseException:  # Ctrl-C: end the cells before the pool waits for its threads
                self.stop()
                raise

    def run_cell(self, cell: Cell, env: Mapping[str, str] | None = None, endpoint: Endpoint | None = None) -> Outcome:
        """Run one cell (up to ``attempts`` times; a dead server is not retried); on success write its marker."""
        root, attempts = self.root, self.attempts
        folder = cell_dir(root, cell)
        folder.mkdir(parents=True, exist_ok=True)
        log = root / "logs" / cell.model.name / f"{cell.task.name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        old = read_marker(root, cell)
        overwrite = bool(old) and old.get("fingerprint") != cell.fingerprint()  # the entry changed: play starts over
        argv = cell_argv(cell, folder, self.launcher, overwrite=overwrite, endpoint=endpoint)
        started = time.time()
        detail = "stopped"
        limit = cell.task.options.get("timeout", self.suite.timeout)
        for attempt in range(1, attempts + 1):
            if self.stopping:
                break
            if endpoint is not None and not endpoint.alive():
                return Outcome(cell, "failed", attempt - 1, time.time() - started, self._server_died(endpoint))
            t0 = time.time()
            code = self._run_process(argv, log, attempt, env, limit)
            results = run_folder.results_since(folder, t0)
            if code == 0 and results:
                _write_marker(root, cell, results, time.time() - started, attempt)
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

    def _server_died(self, endpoint: Endpoint) -> str:
        return f"the server died (rerun to resume): {last_line(endpoint.server.log)} (log: {endpoint.server.log})"

    def _run_process(self, argv: list[str], log: Path, attempt: int, env: Mapping[str, str] | None, limit: float | None) -> int | None:
        """One attempt: the exit status, or None when it ran past ``limit`` seconds (it is killed)."""
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} attempt {attempt}/{self.attempts}: {shlex.join(redacted_argv(argv))}\n")
            fh.flush()
            proc = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=None if env is None else dict(env)
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

    def _tick(self, n: int = 1) -> None:
        if self.bar is not None and n:
            self.bar.update(n)

    def _say(self, line: str) -> None:
        (self.bar.write if self.bar is not None else print)(line)


def redacted_argv(argv: list[str]) -> list[str]:
    """``argv`` with credentials replaced (:func:`plumbing.secrets.scrub`), for log headers and ``--dry_run``."""
    return [scrub(a) for a in argv]


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
) -> SuiteResult:
    """Every cell (finished ones skipped), the models of one wave at once on their GPUs
    (:mod:`triangulation.suite.placement`), then the report over ``root``; returns each cell's outcome.
    Ctrl-C or SIGTERM stops every cell and server started, then re-raises."""
    from tqdm.auto import tqdm

    from triangulation.suite.placement import place, waves

    placements = place(suite.models, gpus or [])  # a model too big for the node: an error before anything runs
    root.mkdir(parents=True, exist_ok=True)
    attempts = 1 + (suite.retries if retries is None else retries)
    result = SuiteResult()
    plan = cells(suite)
    names = [_report_model_name(m) for m in suite.models]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        print(
            f"suite: warning: several models are named {dup!r} in results (same model_args name key); the report keeps the latest run of each task",
            file=sys.stderr,
        )
    bar = tqdm(total=len(plan), desc=f"suite {suite.name}", unit="cell", dynamic_ncols=True)
    sweep = Sweep(suite, root, launcher, attempts, bar=bar)
    previous = _terminate_on_sigterm()
    by_model: dict[str, list[Outcome]] = {}
    try:
        for wave in waves(placements):
            by_model.update(_run_wave(sweep, wave, plan))
    except BaseException:
        sweep.stop()
        raise
    finally:
        bar.close()
        result.outcomes = [o for m in suite.models for o in by_model.get(m.name, [])]
        write_status(root, suite, result)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    write_sizes(root, suite)
    if report:
        try:
            result.report = run_report(root, suite)
        except UserError as exc:  # the cells' outcomes still get summarised
            result.report_error = " ".join(str(exc).split())
    return result


def _run_wave(sweep: Sweep, wave: list, plan: list[Cell]) -> dict[str, list[Outcome]]:
    """The models of one wave at once, a thread each with its GPUs (the main thread waits, so Ctrl-C and
    SIGTERM reach it and :meth:`Sweep.stop` ends every model's cells and servers)."""
    done: dict[str, list[Outcome]] = {}
    errors: list[BaseException] = []

    def work(p) -> None:
        try:
            outcomes = sweep.run_model(p.model, [c for c in plan if c.model is p.model], None if p.gpus is None else list(p.gpus))
        except BaseException as exc:  # noqa: BLE001  (re-raised in the main thread)
            errors.append(exc)
            return
        done[p.model.name] = outcomes
        for o in outcomes:
            if o.status == "failed":
                sweep._say(f"suite: {o.cell.label} failed after {o.attempts} attempt(s): {o.detail}")

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


def _terminate_on_sigterm():
    """SIGTERM -> SystemExit, so the sweep stops the running cells and servers instead of orphaning them."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, handler)


def outcome_row(o: Outcome, executor: str = "local", job_id: str | None = None) -> dict[str, Any]:
    """A cell's row in ``suite_status.json``."""
    return {
        "cell": o.cell.label,
        "model": o.cell.model.name,
        "task": o.cell.task.name,
        "status": o.status,
        "attempts": o.attempts,
        "seconds": round(o.seconds, 1),
        "detail": o.detail,
        "executor": executor,
        "job_id": job_id,
    }


def write_status(root: Path, suite: Suite, result: SuiteResult) -> Path:
    path = root / "suite_status.json"
    rows = [outcome_row(o) for o in result.outcomes]
    path.write_text(json.dumps({"suite": str(suite.path), "executor": "local", "cells": rows}, indent=1), encoding="utf-8")
    return path


def write_sizes(root: Path, suite: Suite) -> Path:
    """``model,size_b,source`` for the report's Figure 1: the suite's ``size:``/``sizes:``, else the model's files."""
    from triangulation.runs.model_size import model_size_b

    rows: dict[str, tuple[float, str]] = {}
    for m in suite.models:
        name = _report_model_name(m)
        if m.size is not None:
            rows[name] = (m.size, "suite")
            continue
        size = model_size_b(_effective_model_args(m))
        if size is not None:
            rows[name] = (size, "model files")
    for name, size in suite.sizes.items():
        rows[name] = (size, "suite")
    path = root / "model_sizes.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "size_b", "source"])
        for name, (size, source) in sorted(rows.items()):
            w.writerow([name, f"{size:.6g}", source])
    return path


def _effective_model_args(m: ModelSpec) -> Any:
    if m.model is None and m.model_args is None:
        from models.default_model import default_model_args

        return default_model_args(device=None)
    return m.model_args


def _report_model_name(m: ModelSpec) -> str:
    """The name the report gives this model's results (:func:`models.naming.model_id`)."""
    from models.naming import model_id

    try:
        return model_id({"model_args": _effective_model_args(m), "model": m.model or "hf"})
    except UserError:
        return m.name


def run_report(root: Path, suite: Suite) -> Path | None:
    """The report (:func:`triangulation.report.make.make_report`) over ``root/runs`` and the suite's external tables, into ``root/report``."""
    from triangulation.report.make import make_report

    runs = root / "runs"
    has_results = run_folder.has_results(runs)
    externals = [_resolve(suite, e) for e in suite.report.get("external", [])]
    if not has_results and not externals:
        print("suite: no results to report on", file=sys.stderr)
        return None
    return make_report(
        [runs] if has_results else [],
        root / "report",
        externals=externals,
        abilities=_resolve_path(suite, suite.report.get("abilities")),
        pairs=list(suite.report.get("pairs", [])),
        scatter=list(suite.report.get("scatter", [])),
        sizes=root / "model_sizes.csv",
        subtasks=bool(suite.report.get("subtasks", False)),
        title=str(suite.report.get("title") or f"suite {suite.name}"),
    )


def _resolve_path(suite: Suite, value: str | None) -> Path | None:
    if not value:
        return None
    path = Path(os.path.expandvars(os.path.expanduser(value)))
    return path if path.is_absolute() else suite.path.parent / path


def _resolve(suite: Suite, spec: str) -> str:
    """``[LABEL=]FILE`` with ``$VARS`` expanded and FILE relative to the suite file."""
    label, sep, file = spec.rpartition("=") if "=" in spec else ("", "", spec)
    path = _resolve_path(suite, file)
    return f"{label}={path}" if sep else str(path)


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
