"""One suite cell on disk and on the command line: its folder, its done-marker (read, and written for the sweep's one
recorder, :meth:`triangulation.suite.runner.Sweep._record`), the endpoint path it calls, the command it runs.

Everything the runner, the split group cells, the plan, the estimate and SLURM share about a cell, so none of
them imports the runner (:mod:`triangulation.suite.runner` runs the cells; its outcome: :mod:`triangulation.suite.status`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multiturn.api import PlayOptions, json_flag, model_flags, shared_flags
from plumbing import jsonio
from plumbing.secrets import scrub
from triangulation.suite.serve import Endpoint
from triangulation.suite.spec import Cell, TaskEntry
from triangulation.suite.task_stats import Counts
from triangulation.suite.throughput import hardware

MARKER = ".suite_done.json"
#: an eval cell's ``--first_request_file`` in its folder: when its work began (read into the marker, then removed)
FIRST_REQUEST = ".first_request"


USAGE_ERROR = 2  # `triangulate`'s exit status for a UserError (and argparse's for a usage mistake)


DEFAULT_LAUNCHER = (sys.executable, "-m", "triangulation")


#: client cells of one served model running at once (split group cells can be dozens: MMLU has 57)
CELLS_AT_ONCE = 16

#: lm-eval output types a chat endpoint cannot score (they need prompt logprobs: ``/v1/completions``)
LOGPROB_TYPES = {"loglikelihood", "loglikelihood_rolling", "multiple_choice"}


def cell_argv(
    cell: Cell,
    output_dir: Path,
    launcher: tuple[str, ...] | list[str] = DEFAULT_LAUNCHER,
    overwrite: bool = False,
    endpoint: Endpoint | None = None,
    completions: bool | None = None,
) -> list[str]:
    """The command line that runs one cell (``launcher`` is how ``triangulate`` is started); with ``endpoint``
    (a served model) the cell is a client of that server, with the client model made when it was opened
    (:class:`triangulation.suite.serve.ClientModels`), on ``/v1/completions`` when ``completions`` (as the sweep's
    plan decided it; None: :func:`calls_completions` decides now). The cell's options are made once (:func:`eval_options`, :func:`play_options`) and write their own flags."""
    m, t = cell.model, cell.task
    options = eval_options(cell, endpoint) if t.runner == "eval" else play_options(cell, overwrite, endpoint)
    flags = options.flags()
    if isinstance(options, EvalOptions):  # lm-eval's request cache and the first-request stamp live in the cell's folder
        flags += ["--use_cache", str(request_cache(output_dir, cell)), "--first_request_file", str(output_dir / FIRST_REQUEST)]
    argv = [*launcher, t.runner, "--tasks", ",".join(t.tasks), "--output_path", str(output_dir)]
    if endpoint is not None:
        completions = calls_completions(cell) if completions is None else completions
        clients = endpoint.clients
        argv += model_flags(*(clients.completions if completions else clients.chat))
    elif m.model is not None or m.ref.given is not None:  # without either, each command supplies the embedded SmolLM2
        argv += model_flags(m.model or "hf", m.ref.given)
    return argv + flags


def calls_completions(cell: Cell) -> bool:
    """Whether a client cell of a served model calls ``/v1/completions`` rather than ``/v1/chat/completions``: an eval
    cell without the chat template, or one whose tasks score loglikelihoods (:func:`needs_completions`); a play
    cell never (it chats)."""
    t = cell.task
    return t.runner == "eval" and (not eval_options(cell, None).apply_chat_template or needs_completions(t))


def needs_completions(task: TaskEntry) -> bool:
    """Whether an eval entry's lm-eval tasks need ``/v1/completions`` (a loglikelihood-type task among them, or one
    whose type cannot be told: completions serve generation too, chat cannot score loglikelihoods), as the one task
    index resolved them for the entry (:attr:`triangulation.suite.spec.TaskEntry.resolved`, its ``include_path:`` too)."""
    types: set[str] = set()
    for found in task.resolved.values():
        types |= found.output_types or {"unknown"}
    return bool(types & (LOGPROB_TYPES | {"unknown"}))


def shared_options(cell: Cell, local: bool) -> dict[str, Any]:
    """The options a play cell and an eval cell share (:func:`multiturn.api.shared_flags` writes them): the task
    entry's limit, seed and gen_kwargs, and, for a local model (not a client of a served one), the batch size and device."""
    m, o = cell.model, cell.task.options
    return {
        "limit": o.get("limit"),
        "seed": o.get("seed"),
        "gen_kwargs": o.get("gen_kwargs") or {},
        "batch_size": (o.get("batch_size") or m.batch_size) if local else None,
        "device": m.device if local else None,
    }


def play_options(cell: Cell, overwrite: bool = False, endpoint: Endpoint | None = None) -> PlayOptions:
    """A play cell's settings minus its model: the task entry's options, the model's batch size, device and roles
    (a client of a served model sends every live episode's turn at once: ``num_concurrent``, no batch or device)."""
    m, o = cell.model, cell.task.options
    local = endpoint is None
    return PlayOptions(
        **shared_options(cell, local),
        max_live=None if local else m.num_concurrent,
        task_args=o.get("task_args") or {},
        judge_gen_kwargs=o.get("judge_gen_kwargs") or {},
        judge=m.judge,
        player_b=m.player_b,
        overwrite=overwrite,
    )


@dataclass(frozen=True)
class EvalOptions:
    """An eval cell's settings minus its model: what a suite's eval cell asks of ``triangulate eval``, written as its
    flags in one place (:meth:`flags`), as :class:`multiturn.api.PlayOptions` is for a play cell. Made once per
    cell by :func:`eval_options`; a client of a served model sends ``num_concurrent`` requests, so it has no batch or device."""

    limit: int | float | None = None
    seed: int | None = None
    gen_kwargs: Mapping[str, Any] = field(default_factory=dict)
    batch_size: int | str | None = None
    device: str | None = None
    include_path: tuple[str, ...] = ()
    num_fewshot: int | None = None
    apply_chat_template: bool = False
    fewshot_as_multiturn: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)
    log_samples: bool = False

    def flags(self) -> list[str]:
        """``triangulate eval``'s flags for these options (after the model's; unset ones left out: lm-eval's defaults)."""
        out = shared_flags(self.limit, self.seed, self.gen_kwargs, self.batch_size, self.device)
        # the suite's own task folders (`triangulate eval` adds ours before them)
        out += ["--include_path", os.pathsep.join(self.include_path)] if self.include_path else []
        out += [] if self.num_fewshot is None else ["--num_fewshot", str(self.num_fewshot)]
        out += ["--apply_chat_template"] if self.apply_chat_template else []
        out += ["--fewshot_as_multiturn"] if self.fewshot_as_multiturn else []
        out += ["--metadata", json_flag(self.metadata)] if self.metadata else []
        return out + (["--log_samples"] if self.log_samples else [])


def eval_options(cell: Cell, endpoint: Endpoint | None = None) -> EvalOptions:
    """An eval cell's options: its task entry's, the model's batch size, device and chat template (a client of a
    served model: no batch size or device); what its command line asks of lm-eval and what ``--dry_run`` counts."""
    m, o = cell.model, cell.task.options
    local = endpoint is None
    # the model's ``apply_chat_template`` (default true) unless the task entry sets ``apply_chat_template: false``
    # (``suites/triangulating.yaml`` does for seed 003's tasks outside the Open LLM Leaderboard)
    template = bool(m.apply_chat_template and o.get("apply_chat_template", True))
    return EvalOptions(
        **shared_options(cell, local),
        include_path=cell.task.include_path,
        num_fewshot=o.get("num_fewshot"),
        apply_chat_template=template,
        fewshot_as_multiturn=template and bool(o.get("fewshot_as_multiturn")),
        metadata=o.get("metadata") or {},
        log_samples=bool(o.get("log_samples")),
    )


def request_cache(output_dir: Path, cell: Cell) -> Path:
    """lm-eval's request cache of an eval cell (``--use_cache``; lm-eval adds ``_rank<N>.db``): each answered
    request is stored as it comes, so a killed, timed-out or requeued cell resumes at the request. Keyed by the
    cell's fingerprint: a changed model or entry never reads another configuration's answers."""
    return output_dir / ".request_cache" / cell.fingerprint


def cell_dir(root: Path, cell: Cell) -> Path:
    return root / "runs" / cell.model.name / cell.task.name


def read_marker(root: Path, cell: Cell) -> dict[str, Any] | None:
    path = cell_dir(root, cell) / MARKER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass(frozen=True)
class MarkerState:
    """What a cell's done-marker says, read once: ``done`` (finished with this very configuration, and its results
    files are still there; ``results``: those files, relative to its folder); ``stale`` (it finished another
    configuration of the entry: a play cell starts over)."""

    done: bool
    stale: bool
    results: tuple[str, ...] = ()


def marker_state(root: Path, cell: Cell) -> MarkerState:
    marker = read_marker(root, cell)
    if not marker or marker.get("fingerprint") != cell.fingerprint:
        return MarkerState(False, bool(marker))
    results = tuple(marker.get("results", []))
    done = all((cell_dir(root, cell) / f).is_file() for f in results) and bool(results)
    return MarkerState(done, False, results if done else ())


def is_done(root: Path, cell: Cell) -> bool:
    """Finished with this very configuration, and its results files are still there (:func:`marker_state`)."""
    return marker_state(root, cell).done


@dataclass(frozen=True)
class MarkerFacts:
    """What a cell's done-marker records besides its run, made once when the sweep is planned (:func:`marker_facts`):
    what calibration compares (:mod:`triangulation.suite.calibration`): the model's key, the requests in flight, the work."""

    model_key: str
    in_flight: int
    work: Counts


def marker_facts(cell: Cell, work: Counts) -> MarkerFacts:
    """``cell``'s :class:`MarkerFacts` (``work``: :func:`triangulation.suite.task_stats.cells_work`)."""
    return MarkerFacts(cell.model.key, in_flight(cell), work)


def write_marker(root: Path, cell: Cell, facts: MarkerFacts, results: list[str], seconds: float, attempts: int) -> None:
    """The done-marker: what :func:`is_done` checks, and what calibration reads (:mod:`triangulation.suite.calibration`):
    the wall time, when it started and when its first request went out, the machine, and the cell's ``facts``."""
    payload = {
        "cell": cell.label,
        "fingerprint": cell.fingerprint,
        "results": results,
        "seconds": round(seconds, 1),
        "attempts": attempts,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "started": round(time.time() - seconds, 1),
        "first_request": first_request(root, cell),
        "hardware": hardware(),
        "model": cell.model.name,
        "model_key": facts.model_key,
        "in_flight": facts.in_flight,
        "work": facts.work.as_json(),
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


def redacted_argv(argv: list[str]) -> list[str]:
    """``argv`` with credentials replaced (:func:`plumbing.secrets.scrub`), for log headers and ``--dry_run``."""
    return [scrub(a) for a in argv]
