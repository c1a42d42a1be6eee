"""``make_report``: the one entry point to the report, called by ``triangulate report`` and by the suite."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from plumbing.errors import UserError
from plumbing.output_dirs import replacing_dir
from triangulation.runs.results_io import read_runs


def make_report(
    results: Sequence[Path],
    out: Path,
    *,
    externals: Sequence[str] = (),
    abilities: Path | None = None,
    pairs: Sequence[str] = (),
    scatter: Sequence[str] = (),
    sizes: Mapping[str, float] | None = None,
    subtasks: bool = False,
    title: str = "triangulate report",
    judge_model: str | None = None,
    judge_model_args: Any = None,
    labels: Mapping[Path, str] | None = None,
) -> Path:
    """Read every results file under ``results`` and the external tables, write the report into ``out``;
    returns the path of ``report.html``. Torn last lines of episode or sample files (a killed run) are
    left out and their count printed. ``sizes``: model -> billions of parameters (Figure 1; ``--sizes`` read at the edge,
    :func:`triangulation.report.analyses.figures_triangulating.read_sizes`). ``labels``: folder -> the suite label of
    the model whose runs it holds."""
    from triangulation.report.abilities import load_taxonomy
    from triangulation.report.build import build_report
    from triangulation.report.external import read_externals

    if not results and not externals:
        raise UserError("give at least one results folder or --external table")
    taxonomy = load_taxonomy(abilities)
    # a folder of the user's is refused before any work; no file of an earlier report stays beside the new one
    with replacing_dir(out, "--out", "report", is_old_report) as tmp:
        read = read_runs(results, taxonomy.main_metrics, labels)  # every file once: runs, their scores and item records
        path = build_report(
            read,
            read_externals(list(externals)),
            taxonomy,
            tmp,
            pairs=list(pairs),
            include_subtasks=subtasks,
            title=title,
            judge=connections_judge(judge_model, judge_model_args),
            sizes=dict(sizes or {}),
            scatter=list(scatter) or None,
        )
    path = Path(out) / path.relative_to(tmp)
    if torn := read.torn:  # the episode pages and the analyses left those lines out
        print(f"report: {torn.describe()}", file=sys.stderr)
    return path


def is_old_report(folder: Path) -> bool:
    """A report folder written before folders were marked: ``report.html`` beside ``scores.csv``."""
    return (folder / "report.html").is_file() and (folder / "scores.csv").is_file()


def connections_judge(model: str | None, model_args: Any):
    """The Connections reasoning judge: ``--judge_model`` (an LLM), else the fastText proxy, else None."""
    from triangulation.report.analyses.connections_judge import default_judge, load_llm_judge

    if model or model_args:
        return load_llm_judge(model, model_args)
    return default_judge()
