"""What a finished sweep writes besides its cells and their status (:func:`triangulation.suite.status.write_status`),
the local executor's and SLURM's alike, in one call (:func:`write_outputs`): the model sizes and the report over its
runs."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from plumbing import run_folder
from plumbing.csvio import write_rows
from plumbing.errors import UserError
from triangulation.report.make import make_report
from triangulation.runs.model_size import model_size_b
from triangulation.suite.spec import Suite

SIZES_HEADER = ("model", "size_b", "source")


@dataclass(frozen=True)
class SuiteOutputs:
    """What :func:`write_outputs` made: the report's page (None: no report asked for, or nothing to report on) or why
    the report failed (one line; the cells' outcomes still get summarised)."""

    report: Path | None = None
    error: str = ""


def size_rows(suite: Suite) -> list[list[str]]:
    """``model,size_b,source`` rows for the report's Figure 1: the suite's ``size:``/``sizes:``, else the model's files."""
    rows: dict[str, tuple[float, str]] = {}
    for m, name in zip(suite.models, suite.report_names):
        if m.size is not None:
            rows[name] = (m.size, "suite")
            continue
        size = model_size_b(m.backend.args)
        if size is not None:
            rows[name] = (size, "model files")
    for name, size in suite.sizes.items():
        rows[name] = (size, "suite")
    return [[n, f"{s:.6g}", src] for n, (s, src) in sorted(rows.items())]


def write_outputs(root: Path, suite: Suite, report: bool = True) -> SuiteOutputs:
    """``root/model_sizes.csv`` (:func:`size_rows`), then, with ``report``, the report
    (:func:`triangulation.report.make.make_report`) over ``root/runs`` and the suite's external tables, into
    ``root/report``; a report that fails (a ``UserError``) is said in :attr:`SuiteOutputs.error`."""
    rows = size_rows(suite)
    sizes = write_rows(root / "model_sizes.csv", SIZES_HEADER, rows)
    if not report:
        return SuiteOutputs()
    runs, block = root / "runs", suite.report
    has_results = run_folder.has_results(runs)
    if not has_results and not block.external:
        print("suite: no results to report on", file=sys.stderr)
        return SuiteOutputs()
    try:
        path = make_report(
            [runs] if has_results else [],
            root / "report",
            externals=list(block.external),
            abilities=block.abilities,
            pairs=list(block.pairs),
            scatter=list(block.scatter),
            sizes=sizes,
            subtasks=block.subtasks,
            title=block.title,
            labels={runs / m.name: m.name for m in suite.models},
        )
    except UserError as exc:
        return SuiteOutputs(error=" ".join(str(exc).split()))
    return SuiteOutputs(path)
