"""Assemble the report: the model x benchmark scores, the context every section reads, and the HTML page."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from datasets_build.fresh_names import published_of
from plumbing.atomic import write_files
from plumbing.csvio import csv_text
from plumbing.errors import UserError
from triangulation.html import render_page
from triangulation.report.abilities import Taxonomy, apply_subtask_exclusions
from triangulation.report.chance import analytic_chance
from triangulation.report.context import ReportContext, leaf_groups
from triangulation.report.external import External
from triangulation.report.leaderboard_file import leaderboard_files
from triangulation.runs.results_io import NO_SCORE, Run, RunSet
from triangulation.viewer.episodes import episodes_by_task
from triangulation.viewer.pages import viewer_pages


@dataclass
class Scores:
    table: pd.DataFrame  # model x benchmark
    metrics: dict[str, str]  # benchmark -> metric used ("" for external columns)
    sources: dict[str, set[str]] = field(default_factory=dict)  # source label -> models

    def single_source_models(self) -> dict[str, list[str]]:
        """Source -> models no other source has (only meaningful with two or more sources)."""
        if len(self.sources) < 2:
            return {}
        out = {}
        for label, models in self.sources.items():
            others = set().union(*(m for lab, m in self.sources.items() if lab != label))
            only = sorted(models - others)
            if only:
                out[label] = only
        return out


def run_scores(runs: list[Run], include_subtasks: bool = False) -> tuple[pd.DataFrame, dict[str, str]]:
    """Model x task main-metric table (each run's main scores, ``Run.main``); a later run (by date) of a model/task wins. A fresh twin
    (``<task>_fresh``) is no benchmark of its own: it is the contamination check's other side (issue 42)."""
    cells: dict[str, dict[str, float]] = {}
    metrics: dict[str, str] = {}
    for run in sorted(runs, key=lambda r: r.date):
        for task in run.results if include_subtasks else run.top_level_tasks():
            if published_of(task) is not None:
                continue
            name, value = run.main.get(task, NO_SCORE)
            if not name:
                continue
            cells.setdefault(run.model, {})[task] = value
            metrics.setdefault(task, name)
    frame = pd.DataFrame.from_dict(cells, orient="index")
    return frame, metrics


def collect_scores(runs: list[Run], externals: list[External], taxonomy: Taxonomy, include_subtasks: bool = False) -> Scores:
    table, metrics = run_scores(runs, include_subtasks)
    table, trimmed = apply_subtask_exclusions(table, runs, taxonomy)  # seed 003 App. E.2.1 (BBH)
    metrics.update(trimmed)
    sources: dict[str, set[str]] = {}
    if runs:
        sources["results"] = {r.model for r in runs}
    for ext in externals:
        table = ext.table if table.empty else table.join(ext.table, how="outer")
        metrics.update({c: "" for c in ext.table.columns})
        sources[ext.label] = set(map(str, ext.table.index))
    if table.empty:
        raise UserError("no scores found: give results folders and/or --external tables")
    table = table.dropna(axis=1, how="all")  # e.g. a game no model of a release played
    table.index = table.index.map(str)
    table.index.name = "model"
    table = table.sort_index()
    table.attrs["metrics"] = dict(metrics)  # read by discriminative.scale_scores (each metric's known range)
    return Scores(table=table, metrics=metrics, sources=sources)


def build_report(
    read: RunSet,
    externals: list[External],
    taxonomy: Taxonomy,
    out: Path,
    pairs: list[str] | None = None,
    include_subtasks: bool = False,
    title: str = "triangulate report",
    judge: Any = None,
    sizes: dict[str, float] | None = None,
    scatter: list[str] | None = None,
) -> Path:
    """Write every table, figure and ``report.html`` into ``out``; returns the HTML path. The sections are
    :data:`triangulation.report.sections.SECTIONS`, in order."""
    from triangulation.report.cells import cells
    from triangulation.report.sections import SECTIONS, finish

    runs = read.runs
    out.mkdir(parents=True, exist_ok=True)
    scores = collect_scores(runs, externals, taxonomy, include_subtasks)
    analytic = analytic_chance(runs, scores.metrics)
    tables = leaderboard_files(scores.table, scores.metrics, {r.model for r in runs}, out, analytic)  # Open LLM Leaderboard shape
    tables[out / "scores.csv"] = csv_text(scores.table)
    episodes = episodes_by_task(read.record_files)  # the per-sample files as read, no file read again
    pages = viewer_pages(episodes, out / "episodes", report="../report.html", groups=leaf_groups(runs))
    ctx = ReportContext(
        runs=runs,
        externals=externals,
        taxonomy=taxonomy,
        out=out,
        scores=scores,
        pairs=list(pairs or []),
        include_subtasks=include_subtasks,
        judge=judge,
        sizes=sizes or {},
        scatter=scatter,
        episode_pages=pages.pages,
        cells=cells(runs, set(scores.table.columns)),
    )
    built = []
    for builder in tqdm(SECTIONS, desc="report", unit="section"):
        built += builder(ctx)
    path = out / "report.html"
    html = render_page(title, finish(built))
    # the report's own files written by one call (the sections write their tables and figures as they build)
    write_files(chain(tables.items(), pages.files, [(path, html)]))
    return path
