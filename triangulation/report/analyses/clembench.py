"""clembench per game and model (seed 002): % played, quality and clemscore; Table 2 (multilingual).

clemscore = % played / 100 x quality (seed 002 Sec. 2); runs written by ``triangulate play`` carry
each game's ``played``, ``quality`` and ``clemscore``; clembench-runs tables given with ``--external``
carry ``<game>/played`` and ``<game>/quality``. Table 2 (seed 002 Sec. 7) comes from the
``referencegame_<lang>`` play results (:func:`multilingual_table`).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from multiturn.api import clembench_games
from plumbing.csvio import write_csv
from triangulation.html import Image, Section, Table, Text
from triangulation.report import plots
from triangulation.report.external import External
from triangulation.runs.results_io import Run, metric_values

MULTILINGUAL_PREFIX = "referencegame_"
MULTILINGUAL_METRICS = ("played", "quality")
METRICS = ("played", "quality", "clemscore")
#: each metric's scale, said wherever it is shown (seed 002: % played, quality and clemscore on 0-100)
SCALES = {"played": "% of episodes played, 0-100", "quality": "0-100", "clemscore": "played / 100 x quality, 0-100"}


def clemscore_items(records: list) -> list[float]:
    """Each episode's share of the clemscore, on 0-1: 0 for an aborted episode, else its Main Score / 100.

    clemscore = % played / 100 x quality, quality the mean Main Score of the played episodes (seed 002 Sec. 2),
    so clemscore / 100 = (played episodes / all) x (their Main Score sum / played / 100) = the mean of these values:
    a mean of per-episode values in [0, 1], which gives a ``--limit`` cell its 95% interval
    (:meth:`~triangulation.report.cells.LeaderboardCell.interval`). NaN where an episode has neither."""
    out = []
    for record in records:
        aborted, score = record.get("aborted"), record.get("main_score")
        if aborted:
            out.append(0.0)
        elif isinstance(score, (int, float)) and not math.isnan(float(score)):
            out.append(float(score) / 100)
        else:
            out.append(math.nan)
    return out


def is_game(task: str) -> bool:
    """A clembench game's task: one of the ``clembench`` group (the tasks that declare it) or a multilingual
    reference game."""
    return task in clembench_games() or task.startswith(MULTILINGUAL_PREFIX)


def run_tables(runs: list[Run]) -> dict[str, pd.DataFrame]:
    """metric -> model x game, from play results."""
    rows = []
    for run in runs:
        for task, res in run.results.items():
            if is_game(task):
                values = metric_values(res)
                rows.append({"model": run.model, "game": task, **{m: values.get(m) for m in METRICS}})
    if not rows:
        return {}
    frame = pd.DataFrame(rows)
    return {m: frame.pivot_table(index="model", columns="game", values=m, aggfunc="last") for m in METRICS}


def multilingual_table(runs: list[Run]) -> dict[str, pd.DataFrame]:
    """Seed 002 Table 2, the reference game in different languages, from ``referencegame_<lang>`` play results.

    The paper (Sec. 7, Table 2): top "% played", measuring formatting rule following, bottom "quality
    score", measuring quality of the well-formed games; "In brackets the delta compared to the
    original English version". Per metric (``played``, ``quality``) a model x language table of
    values and one of deltas, language - English (``referencegame_en``, the multilingual English
    instances, not the v1.6 ``referencegame`` task, as the paper's English column differs from its
    Table 1). NaN where a model has no English run or no played episode (the paper's "nan (nan)").
    Returns ``{"played": values, "played_delta": deltas, "quality": ..., "quality_delta": ...}``,
    empty when no run has a ``referencegame_<lang>`` task.
    """
    rows = []
    for run in runs:
        for task, res in run.results.items():
            if task.startswith(MULTILINGUAL_PREFIX):
                values = metric_values(res)
                rows.append(
                    {
                        "model": run.model,
                        "lang": task.removeprefix(MULTILINGUAL_PREFIX),
                        **{m: values.get(m, math.nan) for m in MULTILINGUAL_METRICS},
                    }
                )
    if not rows:
        return {}
    frame = pd.DataFrame(rows)
    out: dict[str, pd.DataFrame] = {}
    for metric in MULTILINGUAL_METRICS:
        table = frame.pivot_table(index="model", columns="lang", values=metric, aggfunc="last", dropna=False)
        table = table.reindex(columns=sorted(table.columns))
        english = table["en"] if "en" in table.columns else pd.Series(math.nan, index=table.index)
        out[metric] = table
        out[f"{metric}_delta"] = table.sub(english, axis=0)
    return out


def paper_cells(values: pd.DataFrame, deltas: pd.DataFrame) -> pd.DataFrame:
    """Table 2's cells, ``value (delta)`` with two decimals (``nan (nan)`` where undefined)."""
    return pd.DataFrame({c: [f"{v:.2f} ({d:.2f})" for v, d in zip(values[c], deltas[c])] for c in values.columns}, index=values.index)


def external_tables(ext: External) -> dict[str, pd.DataFrame]:
    """metric -> model x game from a clembench-runs table (clemscore per game computed from the two)."""
    prefix = f"{ext.label}/"
    out: dict[str, pd.DataFrame] = {}
    for metric in ("played", "quality"):
        cols = [c for c in ext.table.columns if c.startswith(prefix) and c.endswith(f"/{metric}") and c.count("/") == 2]
        out[metric] = ext.table[cols].rename(columns=lambda c: c.split("/")[1])
    out["clemscore"] = out["played"] / 100 * out["quality"]
    return out


def build(runs: list[Run], externals: list[External], outdir: Path) -> Section | None:
    sources = []
    tables = run_tables(runs)
    if tables:
        sources.append(("runs", tables))
    sources += [(e.label, external_tables(e)) for e in externals if e.kind == "clembench"]
    if not sources:
        return None
    section = Section("clembench games (seed 002)")
    for label, tabs in sources:
        for metric, table in tabs.items():
            table.index.name = "model"
            write_csv(table, outdir / f"clembench_{label}_{metric}.csv".replace("/", "_"))
            section.blocks.append(Table(table, f"{label}: {metric} per game ({SCALES[metric]})"))
        if label == "runs" and (tabs["clemscore"].fillna(0) != 0).to_numpy().any():
            section.blocks.append(
                Image(
                    plots.grouped_bars(tabs["clemscore"].T, outdir / "clembench_clemscore.png", "clemscore per game", "clemscore (0-100)"),
                    "clemscore",
                )
            )
        elif label == "runs":  # a chart of zero-height bars says nothing
            section.blocks.append(
                Text("clemscore per game: no chart, every clemscore here is 0 or undefined (no game played to a score).", note=True)
            )
    multilingual = multilingual_table(runs)
    for metric in MULTILINGUAL_METRICS if multilingual else ():
        for name in (metric, f"{metric}_delta"):
            write_csv(multilingual[name], outdir / f"clembench_multilingual_{name}.csv")
        cells = paper_cells(multilingual[metric], multilingual[f"{metric}_delta"])
        cells.index.name = "model"
        section.blocks.append(Table(cells, f"seed 002 Table 2, reference game per language: {metric} (delta to English)"))
    return section
