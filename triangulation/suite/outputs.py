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


@dataclass(frozen=True)
class ModelSize:
    """One row of ``model_sizes.csv``: a model's report name, its billions of parameters (to the 6 significant digits the
    file records, so the report made now and one made later from the file agree) and where the size came from."""

    model: str
    size_b: float
    source: str  # "suite" (its ``size:``/``sizes:``) or "model files"

    @classmethod
    def of(cls, model: str, size_b: float, source: str) -> ModelSize:
        return cls(model, float(f"{size_b:.6g}"), source)

    def row(self) -> list[str]:
        return [self.model, f"{self.size_b:.6g}", self.source]


def model_sizes(suite: Suite) -> list[ModelSize]:
    """Each model's size for the report's Figure 1, by name: the suite's ``size:``/``sizes:``, else the model's files."""
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
    return [ModelSize.of(n, s, src) for n, (s, src) in sorted(rows.items())]


def write_outputs(root: Path, suite: Suite, report: bool = True) -> SuiteOutputs:
    """``root/model_sizes.csv`` (:func:`model_sizes`), then, with ``report``, the report
    (:func:`triangulation.report.make.make_report`) over ``root/runs`` and the suite's external tables, into
    ``root/report``; a report that fails (a ``UserError``) is said in :attr:`SuiteOutputs.error`."""
    sizes = model_sizes(suite)
    write_rows(root / "model_sizes.csv", SIZES_HEADER, [s.row() for s in sizes])
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
            sizes={s.model: s.size_b for s in sizes},
            subtasks=block.subtasks,
            title=block.title,
            labels={runs / m.name: m.name for m in suite.models},
        )
    except UserError as exc:
        return SuiteOutputs(error=" ".join(str(exc).split()))
    return SuiteOutputs(path)
