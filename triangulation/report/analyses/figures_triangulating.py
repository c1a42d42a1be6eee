"""Seed 003 (Triangulating) Figures 1 and 8 from the report's model x benchmark scores.

- **Figure 1** ("Accuracy across the different model sizes: IFEval, Static, and Interactive
  assessments", Sec. 3.2): per model, ordered by size, the IFEval score, the Static score and the
  Interactive score, each on 0-100 by its metric's known range
  (:func:`triangulation.report.discriminative.scale_scores`: fractions x 100, clemscores as they are).
  As the authors' task registry builds them (momentino/playpen_eval ``config/task_registry.yaml`` at
  bf980808, the last commit with their analysis code): Interactive is the single ``clembench`` task
  (category ``interactive``, backend ``clembench``: the clemscore over the seven games, never the games
  averaged with it), Static the single merged static task (``massive_merged``, category ``massive``:
  MMLU and BBH, Sec. 3.1). Both sides come from :func:`triangulation.report.abilities.assessment_members`
  and :func:`~triangulation.report.abilities.pooled` (the report's one pooling rule: a group stands for
  its members, so with ``clembench`` in the results its games are left out); where a side still holds
  several benchmarks (MMLU and BBH; games run without their group) it is their plain mean.
  IFEval is every benchmark whose name contains ``ifeval`` (its main metric is the mean of prompt-
  and instruction-level strict accuracy, App. E.2.1). Sizes: ``--sizes FILE.csv`` (``model,size_b``;
  ``triangulate suite`` writes one from the suite file and the models' files).
- **Figure 8** ("High (left) and low (right) correlation", App. I): scatter plots of two benchmarks
  over the models, "a game and a cognitive ability". By default the interactive benchmark x ability
  benchmark pair with the highest tau-b and the pair with the tau-b closest to 0, among pairs
  scored by at least three common models; ``--scatter A,B`` chooses pairs instead.

Figure 1's Interactive bar is seed 002's clemscore (the paper's rule); beside it, on published clembench
tables, the authors' code's episode-pooled score and the tau between the two (:mod:`.interactive_score`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from plumbing.csvio import unescape_cell, write_csv
from plumbing.errors import UserError
from triangulation.html import Image, Section, Table, Text
from triangulation.report import plots
from triangulation.report.abilities import Taxonomy, assessment_members, pooled
from triangulation.report.analyses import interactive_score
from triangulation.report.discriminative import scale_scores
from triangulation.report.external import External
from triangulation.report.kendall import keep_common, kendall_tables

MIN_MODELS = 3


def read_sizes(path: Path | None) -> dict[str, float]:
    """``model,size_b[,source]`` CSV -> {model: billions}; a missing file is an empty mapping."""
    if path is None or not Path(path).is_file():
        return {}
    out: dict[str, float] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            try:
                out[unescape_cell(str(row["model"]))] = float(row["size_b"])
            except (KeyError, TypeError, ValueError):
                raise UserError(f"{path}: every row needs model and a numeric size_b") from None
    return out


def size_accuracy_table(
    scores: pd.DataFrame, taxonomy: Taxonomy, sizes: dict[str, float], groups: Mapping[str, list[str]] | None = None
) -> pd.DataFrame:
    """Figure 1's data: index model (with a size), columns size_b, IFEval, Static, Interactive (0-100).

    ``groups`` (group -> subtasks) decides which benchmarks stand for which: with the ``clembench`` group
    in the scores, Interactive is its clemscore alone (the authors' registry), not its mean with the games."""
    scaled = scale_scores(scores)
    sides = assessment_members(scores, taxonomy, groups)
    members = {
        "IFEval": [b for b in scores.columns if "ifeval" in b.lower()],
        "Static": sides["static"],
        "Interactive": sides["interactive"],
    }
    models = [m for m in scores.index if m in sizes]
    table = pd.DataFrame(index=pd.Index(models, name="model"))
    table["size_b"] = [sizes[m] for m in models]
    for label, benchmarks in members.items():
        table[label] = pooled(scaled.loc[models], benchmarks, groups, how="mean") if benchmarks else np.nan
    table = table.dropna(how="all", subset=list(members))
    return table.sort_values(["size_b"], kind="stable")


def _fmt_size(b: float) -> str:
    return f"{b:.3g}B" if b >= 1 else f"{b * 1000:.3g}M"


def figure1(table: pd.DataFrame, out: Path) -> Path:
    """Grouped bars, models left to right by size, one bar per series (IFEval, Static, Interactive)."""
    series = [c for c in ("IFEval", "Static", "Interactive") if c in table and table[c].notna().any()]
    fig, ax = plots.plt.subplots(figsize=(max(7.0, 1.3 * len(table) + 2.5), 4.5))
    x = np.arange(len(table))
    width = 0.8 / max(1, len(series))
    for i, col in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, table[col].to_numpy(dtype=float), width=width, label=col)
    labels = [f"{plots._short(m, 26)}\n{_fmt_size(s)}" for m, s in zip(table.index, table["size_b"])]
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("score (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Accuracy by model size (seed 003 Fig. 1)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return plots._save(fig, out / "triangulating_fig1_size.png")


def figure8_benchmarks(scores: pd.DataFrame, taxonomy: Taxonomy) -> list[str]:
    """The games and the cognitive tests in ``scores``: the benchmarks Figure 8 chooses its pairs from."""
    return [b for b in scores.columns if taxonomy.assessment_of(b) == "interactive" or taxonomy.ability_of(b)]


def pick_scatter_pairs(tau: pd.DataFrame, n: pd.DataFrame, scores: pd.DataFrame, taxonomy: Taxonomy) -> list[tuple[str, str]]:
    """(interactive benchmark, ability benchmark) with the highest tau and the one with |tau| smallest."""
    games = [b for b in scores.columns if taxonomy.assessment_of(b) == "interactive"]
    tests = [b for b in scores.columns if taxonomy.ability_of(b)]
    candidates = [
        (g, t, float(tau.at[g, t])) for g in games for t in tests if g != t and n.at[g, t] >= MIN_MODELS and not math.isnan(tau.at[g, t])
    ]
    if not candidates:
        return []
    high = max(candidates, key=lambda c: c[2])
    rest = [c for c in candidates if c[:2] != high[:2]]
    low = min(rest, key=lambda c: abs(c[2])) if rest else None
    return [high[:2]] + ([low[:2]] if low else [])


def parse_scatter(specs: list[str], benchmarks: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for spec in specs:
        a, sep, b = spec.partition(",")
        if not sep or not a or not b:
            raise UserError(f"--scatter wants BENCHMARK_A,BENCHMARK_B, got {spec!r}")
        for x in (a, b):
            if x not in benchmarks:
                raise UserError(f"--scatter: unknown benchmark {x!r}; see scores.csv for the names")
        pairs.append((a, b))
    return pairs


def benchmark_scatter(scores: pd.DataFrame, a: str, b: str, tau: float, p: float, path: Path) -> Path:
    """Models at (score on a, score on b), each labelled; title gives tau-b and its p-value."""
    both = scores[[a, b]].apply(pd.to_numeric, errors="coerce").dropna()
    fig, ax = plots.plt.subplots(figsize=(6, 5))
    ax.scatter(both[a], both[b], s=30)
    for model, row in both.iterrows():
        ax.annotate(plots._short(model, 24), (row[a], row[b]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(plots._short(a, 50))
    ax.set_ylabel(plots._short(b, 50))
    ax.margins(0.15)
    ax.set_title(f"tau-b = {tau:.2f}{'*' if p < 0.05 else ''} (p = {p:.3g}, n = {len(both)})")
    return plots._save(fig, path)


def build(
    scores: pd.DataFrame,
    taxonomy: Taxonomy,
    tau: pd.DataFrame,
    p: pd.DataFrame,
    n: pd.DataFrame,
    out: Path,
    sizes: dict[str, float],
    scatter: list[str] | None = None,
    groups: Mapping[str, list[str]] | None = None,
    externals: Iterable[External] = (),
) -> list[Section]:
    """The report sections for Figures 1 and 8 (empty when the scores cannot draw them). Figure 1's section also
    shows, for published clembench tables in ``externals``, the Interactive score two ways (:mod:`.interactive_score`)."""
    sections = []
    fig1 = Section("Accuracy by model size (seed 003, Figure 1)")
    table = size_accuracy_table(scores, taxonomy, sizes, groups)
    if len(table):
        write_csv(table, out / "triangulating_fig1_size.csv")
        fig1.blocks += [
            Text(
                "IFEval = benchmarks named *ifeval*; as the authors' task registry builds them, Interactive = the clembench task (its clemscore, not averaged with its own games), Static = the static benchmarks (MMLU, BBH) as one merged score (0-100; their mean). A group always stands for its members. Models without a known size are left out.",
                note=True,
            ),
            Table(table),
            Image(figure1(table, out), "Figure 1"),
        ]
    else:
        fig1.blocks.append(Text("No model with a known size (suite `size:` / --sizes) has scores here.", note=True))
    fig1.blocks += interactive_score.blocks(externals, out)
    sections.append(fig1)
    plotted = scores
    if not scatter:  # the authors' keep_common over the figure's games and cognitive tests (kendall.keep_common)
        plotted = keep_common(scores, figure8_benchmarks(scores, taxonomy))
        tau, p, n = kendall_tables(plotted)
    pairs = parse_scatter(scatter or [], list(scores.columns)) or pick_scatter_pairs(tau, n, scores, taxonomy)
    fig8 = Section("Two benchmarks over the models (seed 003, Figure 8)")
    if pairs:
        rows = []
        for i, (a, b) in enumerate(pairs):
            fig8.blocks.append(
                Image(
                    benchmark_scatter(plotted, a, b, float(tau.at[a, b]), float(p.at[a, b]), out / f"triangulating_fig8_{i}.png"),
                    f"{b} vs {a}" + ("" if scatter else (" (highest tau-b)" if i == 0 else " (tau-b closest to 0)")),
                )
            )
            rows.append({"benchmark_a": a, "benchmark_b": b, "tau": tau.at[a, b], "p": p.at[a, b], "n": n.at[a, b]})
        write_csv(pd.DataFrame(rows), out / "triangulating_fig8_pairs.csv", index=False)
        if not scatter:
            fig8.blocks.insert(
                0,
                Text(
                    "Chosen automatically: the game x cognitive-test pair with the highest tau-b, then the one closest to 0 (at least three models), over the authors' keep_common models (those that scored every game and cognitive test here); pick others with --scatter A,B.",
                    note=True,
                ),
            )
    else:
        fig8.blocks.append(Text("No game x cognitive-test pair with three common models; pick a pair with --scatter A,B.", note=True))
    sections.append(fig8)
    return sections
