"""What a suite writes besides its cells: the status file, the model sizes and the report over its runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from models.default_model import default_model_args
from models.naming import model_id, unique_model_ids
from plumbing import run_folder
from plumbing.csvio import write_rows
from plumbing.errors import UserError
from triangulation.report.make import make_report
from triangulation.runs.model_size import model_size_b
from triangulation.suite.spec import ModelSpec, Suite


def write_sizes(root: Path, suite: Suite) -> Path:
    """``model,size_b,source`` for the report's Figure 1: the suite's ``size:``/``sizes:``, else the model's files."""
    rows: dict[str, tuple[float, str]] = {}
    for m, name in zip(suite.models, report_model_names(suite.models)):
        if m.size is not None:
            rows[name] = (m.size, "suite")
            continue
        size = model_size_b(_effective_model_args(m))
        if size is not None:
            rows[name] = (size, "model files")
    for name, size in suite.sizes.items():
        rows[name] = (size, "suite")
    return write_rows(
        root / "model_sizes.csv", ["model", "size_b", "source"], [[n, f"{s:.6g}", src] for n, (s, src) in sorted(rows.items())]
    )


def _effective_model_args(m: ModelSpec) -> Any:
    if m.model is None and m.model_args is None:
        return default_model_args(device=None)
    return dict(m.ref.args)


def report_model_name(m: ModelSpec) -> str:
    """The name the report gives this model's results (:func:`models.naming.model_id`)."""
    try:
        return model_id({"model_args": _effective_model_args(m), "model": m.model or "hf"})
    except UserError:
        return m.name


def report_model_names(models: list[ModelSpec]) -> list[str]:
    """The names the report gives these models' results, unique as the report makes them
    (:func:`models.naming.unique_model_ids`)."""
    try:
        configs = [{"model_args": _effective_model_args(m), "model": m.model or "hf"} for m in models]
        return unique_model_ids(configs, [m.name for m in models])[0]
    except UserError:
        return [report_model_name(m) for m in models]


def run_report(root: Path, suite: Suite) -> Path | None:
    """The report (:func:`triangulation.report.make.make_report`) over ``root/runs`` and the suite's external tables, into ``root/report``."""
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
        labels={runs / m.name: m.name for m in suite.models},
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
