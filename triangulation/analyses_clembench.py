"""clembench per game and model (seed 002): % played, quality and clemscore.

clemscore = % played / 100 x quality (seed 002 Sec. 2); runs written by ``triangulate play`` carry
each game's ``played``, ``quality`` and ``clemscore``; clembench-runs tables given with ``--external``
carry ``<game>/played`` and ``<game>/quality``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from triangulation import plots
from triangulation.external import External
from triangulation.html import Image, Section, Table
from triangulation.results_io import Run, metric_values

GAMES = ("taboo", "wordle", "wordle_withclue", "wordle_withcritic", "referencegame", "imagegame", "privateshared")
METRICS = ("played", "quality", "clemscore")


def is_game(task: str) -> bool:
    return task in GAMES or task.startswith("referencegame_")


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
            table.to_csv(outdir / f"clembench_{label}_{metric}.csv".replace("/", "_"))
            section.blocks.append(Table(table, f"{label}: {metric} per game"))
        if label == "runs":
            section.blocks.append(Image(plots.grouped_bars(tabs["clemscore"].T, outdir / "clembench_clemscore.png", "clemscore per game", "clemscore"), "clemscore"))
    return section
