"""One suite cell on disk and on the command line: its folder, its done-marker, its outcome, the command it runs.

Everything the runner, the split group cells, the plan, the estimate and SLURM share about a cell, so none of
them imports the runner (:mod:`triangulation.suite.runner` runs the cells).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from multiturn.api import PlayOptions, json_flag, model_flags
from plumbing import jsonio
from plumbing.secrets import scrub
from triangulation.suite.serve import Endpoint, needs_completions
from triangulation.suite.spec import Cell, ModelSpec, chat_template
from triangulation.suite.task_stats import Counts, read_plan_counts, table_counts
from triangulation.suite.throughput import hardware

MARKER = ".suite_done.json"
#: an eval cell's ``--first_request_file`` in its folder: when its work began (read into the marker, then removed)
FIRST_REQUEST = ".first_request"


USAGE_ERROR = 2  # `triangulate`'s exit status for a UserError (and argparse's for a usage mistake)


DEFAULT_LAUNCHER = (sys.executable, "-m", "triangulation")


#: client cells of one served model running at once (split group cells can be dozens: MMLU has 57)
CELLS_AT_ONCE = 16


@dataclass
class Outcome:
    cell: Cell
    status: str  # done | skipped-done | failed | skipped-model-failed
    attempts: int = 0
    seconds: float = 0.0
    detail: str = ""


def cell_argv(
    cell: Cell,
    output_dir: Path,
    launcher: tuple[str, ...] | list[str] = DEFAULT_LAUNCHER,
    overwrite: bool = False,
    endpoint: Endpoint | None = None,
) -> list[str]:
    """The command line that runs one cell (``launcher`` is how ``triangulate`` is started); with ``endpoint``
    (a served model) the cell is a client of that server (:meth:`Endpoint.client`)."""
    m, t = cell.model, cell.task
    argv = [*launcher, t.runner, "--tasks", ",".join(t.tasks), "--output_path", str(output_dir)]
    if endpoint is not None:
        completions = t.runner == "eval" and (not chat_template(m, t.options) or needs_completions(t.tasks, t.include_path))
        argv += model_flags(*endpoint.client(completions, m.num_concurrent))
    elif m.model is not None or m.ref.given is not None:  # without either, each command supplies the embedded SmolLM2
        argv += model_flags(m.model or "hf", m.ref.given)
    if t.runner == "eval":
        return argv + eval_flags(cell, output_dir, endpoint)
    return argv + play_options(cell, overwrite, endpoint).flags()


def play_options(cell: Cell, overwrite: bool = False, endpoint: Endpoint | None = None) -> PlayOptions:
    """A play cell's settings minus its model: the task entry's options, the model's batch size, device and roles
    (a client of a served model sends every live episode's turn at once: ``num_concurrent``, no batch or device)."""
    m, o = cell.model, cell.task.options
    local = endpoint is None
    return PlayOptions(
        limit=o.get("limit"),
        seed=o.get("seed"),
        gen_kwargs=o.get("gen_kwargs") or {},
        batch_size=(o.get("batch_size") or m.batch_size) if local else None,
        device=m.device if local else None,
        max_live=None if local else m.num_concurrent,
        task_args=o.get("task_args") or {},
        judge_gen_kwargs=o.get("judge_gen_kwargs") or {},
        judge=m.judge,
        player_b=m.player_b,
        overwrite=overwrite,
    )


def eval_flags(cell: Cell, output_dir: Path, endpoint: Endpoint | None = None) -> list[str]:
    """``triangulate eval``'s flags for an eval cell (after its model's)."""
    m, o = cell.model, cell.task.options
    argv: list[str] = []
    if o.get("limit") is not None:
        argv += ["--limit", str(o["limit"])]
    if "seed" in o:
        argv += ["--seed", str(o["seed"])]
    if o.get("gen_kwargs"):
        argv += ["--gen_kwargs", json_flag(o["gen_kwargs"])]
    batch = o.get("batch_size") or m.batch_size
    if batch is not None and endpoint is None:  # a client's concurrency is num_concurrent
        argv += ["--batch_size", str(batch)]
    if m.device and endpoint is None:
        argv += ["--device", m.device]
    if cell.task.include_path:  # the suite's own task folders (`triangulate eval` adds ours before them)
        argv += ["--include_path", os.pathsep.join(cell.task.include_path)]
    if "num_fewshot" in o:
        argv += ["--num_fewshot", str(o["num_fewshot"])]
    if chat_template(m, o):
        argv += ["--apply_chat_template"]
        if o.get("fewshot_as_multiturn"):
            argv += ["--fewshot_as_multiturn"]
    if o.get("metadata"):
        argv += ["--metadata", json_flag(o["metadata"])]
    if o.get("log_samples"):
        argv += ["--log_samples"]
    return argv + ["--use_cache", str(request_cache(output_dir, cell)), "--first_request_file", str(output_dir / FIRST_REQUEST)]


def request_cache(output_dir: Path, cell: Cell) -> Path:
    """lm-eval's request cache of an eval cell (``--use_cache``; lm-eval adds ``_rank<N>.db``): each answered
    request is stored as it comes, so a killed, timed-out or requeued cell resumes at the request. Keyed by the
    cell's fingerprint: a changed model or entry never reads another configuration's answers."""
    return output_dir / ".request_cache" / cell.fingerprint()


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


def write_marker(root: Path, cell: Cell, results: list[str], seconds: float, attempts: int) -> None:
    """The done-marker: what :func:`is_done` checks, and what calibration reads (:mod:`triangulation.suite.calibration`):
    the wall time, when it started, the machine, the model and the cell's work (:func:`cell_counts`)."""
    payload = {
        "cell": cell.label,
        "fingerprint": cell.fingerprint(),
        "results": results,
        "seconds": round(seconds, 1),
        "attempts": attempts,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "started": round(time.time() - seconds, 1),
        "first_request": first_request(root, cell),
        "hardware": hardware(),
        "model": cell.model.name,
        "model_key": model_key(cell.model),
        "in_flight": in_flight(cell),
        "work": cell_counts(root, cell).as_json(),
    }
    jsonio.write_json(cell_dir(root, cell) / MARKER, payload, indent=1)
    (cell_dir(root, cell) / FIRST_REQUEST).unlink(missing_ok=True)


def in_flight(cell: Cell) -> int:
    """The requests a cell keeps in flight: a served model's ``num_concurrent``, else its batch size (1: auto)."""
    if cell.model.served:
        return cell.model.num_concurrent
    batch = cell.task.options.get("batch_size") or cell.model.batch_size
    return batch if isinstance(batch, int) else 1


def first_request(root: Path, cell: Cell) -> float | None:
    """When the cell's last attempt sent its first model request (``--first_request_file``; None: not recorded)."""
    try:
        return round(float((cell_dir(root, cell) / FIRST_REQUEST).read_text(encoding="utf-8")), 1)
    except (OSError, ValueError):
        return None


def model_key(model: ModelSpec) -> str:
    """What makes two suite models the same for measured rates: engine, weights, arguments, GPUs."""
    return json.dumps([model.engine, model.model, model.ref.fingerprint(), model.gpu_count], sort_keys=True, default=str)


def cell_counts(root: Path, cell: Cell) -> Counts:
    """A cell's work: the plan's counts when a ``--dry_run`` into ``root`` counted it (``suite_plan.json``), else
    the per-task table (:mod:`triangulation.suite.task_stats`). A subtask cell (``entry/leaf``) takes its leaf's."""
    entry, _, leaf = cell.task.name.partition("/")
    counted = read_plan_counts(root).get(cell.model.name, {}).get(entry, {})
    parts = [counted[leaf]] if leaf and leaf in counted else (list(counted.values()) if not leaf else [])
    if not parts:
        parts = list(table_counts(entry, [leaf or entry], limit=cell.task.options.get("limit")).values())
    return sum_counts(parts)


def sum_counts(parts: list[Counts]) -> Counts:
    kinds = {p.kind for p in parts}
    kind = parts[0].kind if len(kinds) == 1 else "generate"
    return Counts(
        kind,
        sum(p.requests for p in parts),
        sum(p.prompt_tokens for p in parts),
        sum(p.gen_tokens for p in parts),
        sum(p.max_gen_tokens for p in parts),
        "; ".join(sorted({p.source for p in parts}))[:300],
    )


def replica_args(model: ModelSpec, replicas: int) -> list[str]:
    """``vllm serve`` flags for data-parallel replicas (the pool's choice), with the tensor-parallel size
    said too (a parallel flag in serve_args turns off the default one)."""
    if replicas <= 1:
        return []
    tp = ["--tensor-parallel-size", str(model.gpu_count)] if model.gpu_count > 1 else []
    return [*tp, "--data-parallel-size", str(replicas)]


def redacted_argv(argv: list[str]) -> list[str]:
    """``argv`` with credentials replaced (:func:`plumbing.secrets.scrub`), for log headers and ``--dry_run``."""
    return [scrub(a) for a in argv]


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
