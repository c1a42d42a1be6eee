"""Published vs fresh: per model and benchmark, the score on the published items against the score on their
matched fresh twins (issue 33; ``<task>`` vs ``<task>_fresh``, :mod:`datasets_build.matched`).

Beyond the papers (docs/FIDELITY.md): a model that has seen the published items may score higher on them than
on new items of the same difficulty. Per model and benchmark the section shows both scores (the benchmark's
main metric, computed on the fresh side the same way), their difference published - fresh with a 95%
percentile bootstrap interval (each side's items resampled within the side, :func:`plumbing.stats.
bootstrap_difference`), n on both sides, and a flag when the interval lies above 0 (the published items
favoured). The chance player's rows are the reference: a delta there is difficulty mismatch or noise.
``leaderboard.csv`` gets a ``<benchmark> delta`` column per benchmark.

Item scores: an lm-eval sample's value of the main metric; a played episode's value, where the main metric
is clembench's ``clemscore`` its per-episode part, ``main_score`` with an aborted episode counted 0 (so the
episodes' mean is the clemscore: % played / 100 x quality, seed 002 §2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from datasets_build.matched import published_of
from plumbing.csvio import unescape_frame, write_csv
from plumbing.stats import bootstrap_difference
from triangulation.html import Section, Table, Text
from triangulation.report.cells import item_records
from triangulation.report.leaderboard import is_chance
from triangulation.runs.results_io import Run, main_metric

TITLE = "Published vs fresh (contamination check; ours)"
DELTA_SUFFIX = " delta"
N_BOOT = 2000

HOW_TO_READ = (
    "Each row compares a model's score on a benchmark's published items with its score on freshly generated items "
    "of matched difficulty (the task `<benchmark>_fresh`, one fresh item per published item, in the same order). "
    "delta = published - fresh, with a 95% bootstrap interval (items resampled within each side, "
    f"{N_BOOT} resamples); 'published favoured' marks an interval entirely above 0. The chance player's rows are "
    "the reference: its delta should straddle 0, and where it does not, the two sets differ in difficulty for "
    "reasons the matching missed. What a flag can mean: the model has seen the published items (contamination), "
    "or the fresh items are harder in a way the matching did not measure. What it cannot mean on its own: that the "
    "model was trained on the test set; and no flag is no proof of a clean model (small n gives wide intervals; a "
    "model may have memorised the material the fresh items are built from). Matching covers the measured features "
    "only: GlobalGroup on game size and culturally related groups per game, and on the ARI only where fastText "
    "vectors were present (the fresh set's dataset card says which); its fresh games reuse the published groupings "
    "in new combinations, so memorised groupings are not caught, only memorised games. Wordle and Taboo on the game's "
    "own word-frequency bands; Taboo's fresh words come from clembench's earlier (2023) instance files where v1.6 "
    "does not use them."
)


def episode_value(record: Mapping[str, Any], metric: str) -> float:
    """One item's value of ``metric`` (see the module docstring for clembench's clemscore)."""
    value = record.get(metric)
    if value is None and metric == "clemscore" and "main_score" in record:
        aborted = record.get("aborted")
        value = 0.0 if aborted else record.get("main_score")
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, (int, float)) else math.nan


def item_scores(run: Run, task: str, metric: str) -> list[float]:
    return [episode_value(r, metric) for r in item_records(run, task)]


def latest_runs(runs: list[Run]) -> dict[tuple[str, str], Run]:
    """(model, task) -> the latest run that holds the task's item records."""
    out: dict[tuple[str, str], Run] = {}
    for run in sorted(runs, key=lambda r: r.date):
        for task in run.results:
            if task in run.samples:
                out[(run.model, task)] = run
    return out


def delta_rows(runs: list[Run], overrides: Mapping[str, Any] | None = None, n_boot: int = N_BOOT) -> pd.DataFrame:
    """One row per model and benchmark that has both sides' item records (see the module docstring)."""
    by_cell = latest_runs(runs)
    rows = []
    for (model, task), fresh_run in sorted(by_cell.items()):
        bench = published_of(task)
        if bench is None or (model, bench) not in by_cell:
            continue
        pub_run = by_cell[(model, bench)]
        metric, _ = main_metric(bench, pub_run, overrides)
        pub, fresh = item_scores(pub_run, bench, metric), item_scores(fresh_run, task, metric)
        delta, low, high = bootstrap_difference(pub, fresh, n_boot=n_boot)
        rows.append(
            {
                "model": model,
                "benchmark": bench,
                "metric": metric,
                "published": _mean(pub),
                "n published": sum(not math.isnan(v) for v in pub),
                "fresh": _mean(fresh),
                "n fresh": sum(not math.isnan(v) for v in fresh),
                "delta": delta,
                "95% low": low,
                "95% high": high,
                "flag": "published favoured" if low > 0 else "",
                "reference": "chance" if is_chance(model) else "",
            }
        )
    return pd.DataFrame(rows)


def _mean(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def add_delta_columns(out: Path, rows: pd.DataFrame) -> None:
    """``<benchmark> delta`` columns in ``leaderboard.csv`` / ``.parquet`` (written before the sections run)."""
    csv = out / "leaderboard.csv"
    if rows.empty or not csv.is_file():
        return
    board = unescape_frame(pd.read_csv(csv))  # our CSV quotes formula-like cells: read them back as written
    for bench, part in rows.groupby("benchmark", sort=True):
        board[bench + DELTA_SUFFIX] = board["fullname"].map(dict(zip(part["model"], part["delta"])))
    write_csv(board, csv, index=False)
    board.to_parquet(out / "leaderboard.parquet", index=False)


def build(runs: list[Run], out: Path, overrides: Mapping[str, Any] | None = None) -> Section | None:
    """The section (None when no model has both a benchmark and its fresh twin); writes ``published_vs_fresh.csv``."""
    rows = delta_rows(runs, overrides)
    if rows.empty:
        return None
    write_csv(rows, out / "published_vs_fresh.csv", index=False)
    add_delta_columns(out, rows)
    flagged = rows[(rows["flag"] != "") & (rows["reference"] == "")]
    chance_off = rows[(rows["reference"] == "chance") & (rows["flag"] != "")]
    lines = [Text(HOW_TO_READ, note=True)]
    if not flagged.empty:
        pairs = ", ".join(f"{m} on {b}" for m, b in zip(flagged["model"], flagged["benchmark"]))
        lines.append(Text(f"Published items favoured (interval above 0): {pairs}."))
    if not chance_off.empty:
        lines.append(
            Text(
                f"The chance player's delta excludes 0 on {', '.join(chance_off['benchmark'])}: the sets differ in difficulty there.",
                warn=True,
            )
        )
    return Section(TITLE, [*lines, Table(rows.set_index(["model", "benchmark"]), "published vs fresh, delta = published - fresh")])


def section(ctx) -> list:
    """The report builder (:data:`triangulation.report.sections.SECTIONS`); listed as skipped, with the reason, when
    fresh twins were run but no model has both sides' item records."""
    from triangulation.report.context import Skipped

    built = build(ctx.runs, ctx.out, ctx.taxonomy.main_metrics)
    if built is not None:
        return [built]
    if any(published_of(task) for run in ctx.runs for task in run.results):
        return [Skipped(TITLE, "needs a model's item records of a task and its _fresh twin (lm-eval: --log_samples)")]
    return []
