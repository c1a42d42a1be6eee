"""A sweep's outcome: each cell's :class:`Outcome`, ``suite_status.json`` that records them (its one writer, for the local
sweep and the SLURM jobs alike, which also records a SLURM sweep's jobs as they are submitted), the run's :class:`SuiteResult` and its summary lines, and how a finished sweep ends (:class:`Ended`)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from plumbing import atomic, jsonio
from triangulation.suite.spec import Cell, Suite

if TYPE_CHECKING:
    from triangulation.suite.outputs import SuiteOutputs


@dataclass
class Outcome:
    cell: Cell
    status: str  # done | skipped-done | failed | skipped-model-failed
    attempts: int = 0
    seconds: float = 0.0
    detail: str = ""
    results: tuple[str, ...] = ()  # done: the results files its marker names (relative to its folder)


STATUS_FILE = "suite_status.json"
#: a SLURM sweep's jobs: model -> its last job (:func:`triangulation.suite.slurm.submit` makes them, ``slurm.read_jobs`` reads them)
JOBS_FILE = "slurm_jobs.json"


def write_status(
    root: Path, suite: Suite, rows: list[dict[str, Any]], executor: str = "local", jobs: Mapping[str, Any] | None = None
) -> Path:
    """``root/suite_status.json``: every cell's row (:func:`outcome_row`), as the local sweep or the SLURM jobs left it;
    with ``jobs`` (just submitted) also ``root/slurm_jobs.json``, written first, in the same call: the one writer of both
    files."""
    path = root / STATUS_FILE
    status = {"suite": str(suite.path), "executor": executor, "cells": rows}
    jobs_file = [] if jobs is None else [(root / JOBS_FILE, jsonio.dumps(jobs, indent=1))]
    atomic.write_files([*jobs_file, (path, jsonio.dumps(status, indent=1))])
    return path


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


class Ended(Protocol):
    """A sweep whose cells have all ended, the local one (:class:`SuiteResult`) or a SLURM one
    (:class:`triangulation.suite.slurm.SweepState`): the command writes its outputs once, for either
    (:func:`triangulation.suite.outputs.write_outputs`), then :meth:`close` says how it ended and gives the exit status."""

    def close(self, outputs: SuiteOutputs) -> int: ...


@dataclass
class SuiteResult:
    """A local sweep's outcome per cell, then (:meth:`close`) its report's page or why the report failed."""

    outcomes: list[Outcome] = field(default_factory=list)
    report: Path | None = None
    report_error: str = ""

    def close(self, outputs: SuiteOutputs) -> int:
        """The summary (stdout, stderr when a cell or the report failed: the cells' outcomes are summarised whatever
        became of the report), then the report's page; the exit status."""
        self.report, self.report_error = outputs.report, outputs.error
        print(summary(self), file=sys.stderr if self.exit_code else sys.stdout)
        if self.report is not None:
            print(f"report: {self.report}")
        return self.exit_code

    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in ("failed", "skipped-model-failed")]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed() or self.report_error else 0


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
