"""What stands behind each leaderboard cell: its n, the share of replies that parsed, the score on items
with a parsed reply, an interval for small (``--limit``) runs, and the odd/even halves for reliability.

Read from the item-level records a run wrote next to its results (``Run.records``, read once): the episodes of
``triangulate play`` (per-episode ``scores``) and the samples of lm-eval ``--log_samples`` (per-document
metric values). No family is named here: the parse share is the first
per-item metric named in :data:`PARSE_METRICS` that a task reports.

The papers report a score per model and benchmark; the parse share, the score on parsed items, the
intervals and the split-half reliability are our additions (FIDELITY.md, "beyond the papers").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from triangulation.runs.results_io import NO_SCORE, Run

#: per-item metrics that say which share of a model's replies the task could read (1 = every reply parsed):
#: the cognitive tests' ``parse_rate``, GlobalGroup's and Connections' ``parsed``, clembench's
#: ``request_success_ratio`` (parsed requests / requests)
PARSE_METRICS = ("parse_rate", "parsed", "request_success_ratio")
#: below this parse share a low score is a format failure more than a competence measurement
FORMAT_FAILURE_BELOW = 0.05
#: split-half reliability needs at least this many items per model
MIN_ITEMS_SPLIT_HALF = 10
Z95 = 1.959963984540054


@dataclass
class LeaderboardCell:
    """One model x benchmark cell of the leaderboard, from its item-level records."""

    scores: list[float] = field(default_factory=list)  # main metric per item (NaN where undefined)
    parsed: list[float] = field(default_factory=list)  # parse share per item (empty: the task reports none)
    n_total: int | None = None  # items of the full task (lm-eval ``n-samples`` original)

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def limited(self) -> bool:
        """A ``--limit`` run: fewer items scored than the task has."""
        return self.n_total is not None and 0 < self.n < self.n_total

    @property
    def parse_share(self) -> float:
        return float(np.mean(self.parsed)) if self.parsed else math.nan

    @property
    def on_parsed(self) -> float:
        """Our variant: the mean main score over the items where at least one reply parsed."""
        if not self.parsed:
            return math.nan
        kept = [s for s, p in zip(self.scores, self.parsed) if p > 0 and not math.isnan(s)]
        return float(np.mean(kept)) if kept else math.nan

    def interval(self) -> tuple[float, float]:
        """95% interval of the mean score: Wilson's score interval treating the mean of scores in [0, 1] as a
        proportion of n items (for bounded scores at least as wide as the normal one), else mean ± 1.96 SE."""
        values = np.array([s for s in self.scores if not math.isnan(s)], dtype=float)
        if not len(values):
            return math.nan, math.nan
        mean, n = float(values.mean()), len(values)
        if values.min() >= 0 and values.max() <= 1:
            centre = (mean + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
            half = Z95 * math.sqrt(mean * (1 - mean) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
            return max(0.0, centre - half), min(1.0, centre + half)
        half = Z95 * float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
        return mean - half, mean + half

    def halves(self) -> tuple[float, float]:
        """Mean score of the odd and of the even items (file order); NaN below :data:`MIN_ITEMS_SPLIT_HALF`."""
        values = [s for s in self.scores if not math.isnan(s)]
        if len(values) < MIN_ITEMS_SPLIT_HALF:
            return math.nan, math.nan
        return float(np.mean(values[0::2])), float(np.mean(values[1::2]))


def item_records(run: Run, task: str) -> list[Mapping[str, Any]]:
    """Per item, its metric values: an episode's ``scores`` (failed episodes left out; only the episodes the run's
    results name, when they do) or an lm-eval sample (filter ``none`` preferred, else the first filter in the file)."""
    return [record for _, record in keyed_item_records(run, task)]


def keyed_item_records(run: Run, task: str) -> list[tuple[str, Mapping[str, Any]]]:
    """:func:`item_records` with each item's key: an episode's ``id``, an lm-eval sample's ``doc_id``."""
    records = run.records.get(task, [])
    if records and "scores" in records[0] and "doc_id" not in records[0]:
        wanted = run.episode_ids.get(task)  # the episodes the run's score comes from (a smaller --limit rerun: fewer)
        return [
            (str(r.get("id")), r["scores"])
            for r in records
            if not r.get("failed") and isinstance(r.get("scores"), Mapping) and (wanted is None or str(r.get("id")) in wanted)
        ]
    filters = [r.get("filter") for r in records]
    keep = "none" if "none" in filters else (filters[0] if filters else None)
    return [(str(r.get("doc_id")), r) for r in records if r.get("filter") == keep]


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return math.nan


def item_score(record: Mapping[str, Any], names: list[str]) -> float:
    """The main metric of one item (a ``+``-joined main metric is the mean of its parts)."""
    values = [_number(record.get(n)) for n in names]
    return float(np.mean(values)) if values and not any(math.isnan(v) for v in values) else math.nan


def run_cell(run: Run, task: str) -> LeaderboardCell | None:
    """The :class:`LeaderboardCell` of ``task`` in ``run``; None when the run wrote no item-level records for it."""
    metric, _ = run.main.get(task, NO_SCORE)
    records = item_records(run, task)
    if not metric or not records:
        return None
    names = metric.split("+")
    cell = LeaderboardCell(scores=[item_score(r, names) for r in records], n_total=run.n_total.get(task))
    parse_metric = next((m for m in PARSE_METRICS if any(m in r for r in records)), None)
    if parse_metric:
        cell.parsed = [v for v in (_number(r.get(parse_metric)) for r in records) if not math.isnan(v)]
    return cell


def cells(runs: list[Run], tasks: set[str]) -> dict[tuple[str, str], LeaderboardCell]:
    """(model, task) -> :class:`LeaderboardCell` for the given tasks; the latest run of a model and task wins (as in the scores)."""
    out: dict[tuple[str, str], LeaderboardCell] = {}
    for run in sorted(runs, key=lambda r: r.date):
        for task in run.results:
            if task in tasks:
                cell = run_cell(run, task) or group_cell(run, task)
                if cell is not None:
                    out[(run.model, task)] = cell
    return out


def group_cell(run: Run, group: str, depth: int = 0) -> LeaderboardCell | None:
    """A group's cell pools its members' items (recursively: lm_pragmatics -> its 7 tests -> 5 seeds each)."""
    members = run.group_subtasks.get(group, [])
    parts = [run_cell(run, m) or (group_cell(run, m, depth + 1) if depth < 4 else None) for m in members]
    parts = [c for c in parts if c is not None]
    if not parts:
        return None
    totals = [c.n_total for c in parts]
    return LeaderboardCell(
        scores=[s for c in parts for s in c.scores],
        parsed=[v for c in parts for v in c.parsed] if all(c.parsed for c in parts) else [],
        n_total=sum(totals) if all(t is not None for t in totals) else None,  # type: ignore[misc]
    )


def why_undefined(cell: LeaderboardCell | None) -> str:
    """Why a cell has no score: "0% parsed" when nothing parsed, else what is known ("no item scored")."""
    if cell is None:
        return ""
    if cell.parsed and cell.parse_share == 0:
        return "0% parsed"
    if cell.parsed:
        return f"{cell.parse_share:.0%} parsed, score undefined"
    return "no item scored" if cell.n and all(math.isnan(v) for v in cell.scores) else ""


def cell_note(cell: LeaderboardCell) -> str:
    """The second line of a leaderboard cell: ``n=3/438 (--limit) 95% [0.00, 0.56] · 33% parsed · 0.500 on parsed``."""
    parts = [f"n={cell.n}" + (f"/{cell.n_total} (--limit)" if cell.limited else "")]
    if cell.limited:
        lo, hi = cell.interval()
        if not math.isnan(lo):
            parts[0] += f" 95% [{lo:.2f}, {hi:.2f}]"
    if cell.parsed:
        parts.append(f"{cell.parse_share:.0%} parsed")
        on = cell.on_parsed
        if not math.isnan(on) and cell.parse_share < 1:
            parts.append(f"{on:.3f} on parsed")
    return " · ".join(parts)


def split_half(cells_of: Mapping[tuple[str, str], LeaderboardCell], task: str) -> tuple[float, int]:
    """Split-half reliability of ``task`` over the models: Pearson r between the models' odd-item and
    even-item means, Spearman-Brown corrected (2r / (1 + r)); (NaN, k) with fewer than 3 models of at least
    :data:`MIN_ITEMS_SPLIT_HALF` items or a constant half. k = the models used."""
    pairs = [c.halves() for (_, t), c in cells_of.items() if t == task]
    pairs = [(a, b) for a, b in pairs if not math.isnan(a)]
    if len(pairs) < 3:
        return math.nan, len(pairs)
    odd, even = np.array(pairs).T
    if odd.std() == 0 or even.std() == 0:
        return math.nan, len(pairs)
    r = float(np.corrcoef(odd, even)[0, 1])
    return 2 * r / (1 + r) if r > -1 else math.nan, len(pairs)
