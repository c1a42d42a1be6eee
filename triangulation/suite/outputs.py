"""What a suite writes besides its cells and their status (:func:`triangulation.suite.cells.write_status`): the model
sizes and the report over its runs."""

from __future__ import annotations

import sys
from pathlib import Path

from plumbing import run_folder
from plumbing.csvio import write_rows
from triangulation.report.make import make_report
from triangulation.runs.model_size import model_size_b
from triangulation.suite.spec import Suite


def write_sizes(root: Path, suite: Suite) -> Path:
    """``model,size_b,source`` for the report's Figure 1: the suite's ``size:``/``sizes:``, else the model's files."""
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
    return write_rows(
        root / "model_sizes.csv", ["model", "size_b", "source"], [[n, f"{s:.6g}", src] for n, (s, src) in sorted(rows.items())]
    )


def run_report(root: Path, suite: Suite) -> Path | None:
    """The report (:func:`triangulation.report.make.make_report`) over ``root/runs`` and the suite's external tables, into ``root/report``."""
    runs, block = root / "runs", suite.report
    has_results = run_folder.has_results(runs)
    if not has_results and not block.external:
        print("suite: no results to report on", file=sys.stderr)
        return None
    return make_report(
        [runs] if has_results else [],
        root / "report",
        externals=list(block.external),
        abilities=block.abilities,
        pairs=list(block.pairs),
        scatter=list(block.scatter),
        sizes=root / "model_sizes.csv",
        subtasks=block.subtasks,
        title=block.title,
        labels={runs / m.name: m.name for m in suite.models},
    )
