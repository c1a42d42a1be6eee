"""``ReportContext``: everything a report section may read, computed once; and ``Skipped``, what a section
builder returns when it cannot be computed from these results."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from triangulation.report.abilities import Taxonomy
from triangulation.report.cells import LeaderboardCell
from triangulation.report.external import External
from triangulation.runs.results_io import Run


@dataclass
class Skipped:
    """A section that cannot be computed here: listed once under "Skipped" with its reason
    ("needs >= 3 models, has 2"), never drawn as an empty table or an n/a chart."""

    title: str
    reason: str


@dataclass
class ReportContext:
    """The inputs and the shared intermediate results of one report."""

    runs: list[Run]
    externals: list[External]
    taxonomy: Taxonomy
    out: Path
    scores: Any  # triangulation.report.build.Scores (model x benchmark, metrics, sources)
    pairs: list[str] = field(default_factory=list)
    include_subtasks: bool = False
    judge: Any = None
    sizes: dict[str, float] = field(default_factory=dict)
    scatter: list[str] | None = None
    episode_pages: dict[str, Path] = field(default_factory=dict)
    cells: dict[tuple[str, str], LeaderboardCell] = field(default_factory=dict)  # (model, benchmark) -> item-level facts

    @property
    def table(self) -> pd.DataFrame:
        """Model x benchmark main metric (results and --external tables; published reference rows are not in it)."""
        return self.scores.table

    @cached_property
    def models(self) -> pd.DataFrame:
        """The score table without chance rows: what correlations are computed over."""
        from triangulation.report.leaderboard import without_chance

        return without_chance(self.table)

    @cached_property
    def run_models(self) -> list[str]:
        return sorted({r.model for r in self.runs})

    @cached_property
    def kendall(self) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """(tau, p, n): Kendall tau-b, its p-value and the common models of every benchmark pair."""
        from triangulation.report.kendall import kendall_tables

        return kendall_tables(self.models)

    @cached_property
    def groups(self) -> dict[str, list[str]]:
        """Group -> its subtasks over all runs: what :func:`~triangulation.report.abilities.pooled` needs to
        keep a group and its members apart (the report's one pooling rule)."""
        from triangulation.report.abilities import group_members

        return group_members(self.runs)

    @property
    def external_labels(self) -> list[str]:
        return [e.label for e in self.externals]


def leaf_groups(runs: list[Run]) -> dict[str, list[str]]:
    """Every lm-eval group of the runs -> its leaf tasks (``lm_pragmatics`` -> its 35 test x prompt-order tasks)."""
    subtasks: dict[str, list[str]] = {}
    for run in runs:
        for group, members in run.group_subtasks.items():
            subtasks.setdefault(group, list(members))

    def leaves(task: str, depth: int = 0) -> list[str]:
        if task not in subtasks or depth > 4:
            return [task]
        return [leaf for m in subtasks[task] if m != task for leaf in leaves(m, depth + 1)]

    return {group: leaves(group) for group in subtasks}
