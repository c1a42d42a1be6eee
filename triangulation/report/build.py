"""Assemble the report: model x benchmark scores, Kendall tables, figures and the HTML page."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from plumbing.errors import UserError
from plumbing.jsonio import write_text
from triangulation.html import Image, Section, Table, Text, render_page
from triangulation.report import plots
from triangulation.report.abilities import Taxonomy, apply_subtask_exclusions, assessment_members, group_members, static_vs_interactive
from triangulation.report.analyses import clembench as analyses_clembench
from triangulation.report.analyses import connections as analyses_connections
from triangulation.report.analyses import figures_triangulating
from triangulation.report.analyses import globalgroup as analyses_globalgroup
from triangulation.report.discriminative import default_pairs, pair_table, ratio_table
from triangulation.report.external import External
from triangulation.report.kendall import kendall_tables
from triangulation.report.leaderboard import without_chance
from triangulation.report.top import kendall_section, leaderboard_section, needs_models
from triangulation.runs.results_io import Run, main_metric
from triangulation.viewer.pages import write_viewer


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


def run_scores(runs: list[Run], overrides: dict[str, Any], include_subtasks: bool = False) -> tuple[pd.DataFrame, dict[str, str]]:
    """Model x task main-metric table from results files; a later run (by date) of a model/task wins."""
    cells: dict[str, dict[str, float]] = {}
    metrics: dict[str, str] = {}
    for run in sorted(runs, key=lambda r: r.date):
        for task in run.results if include_subtasks else run.top_level_tasks():
            name, value = main_metric(task, run, overrides)
            if not name:
                continue
            cells.setdefault(run.model, {})[task] = value
            metrics.setdefault(task, name)
    frame = pd.DataFrame.from_dict(cells, orient="index")
    return frame, metrics


def collect_scores(runs: list[Run], externals: list[External], taxonomy: Taxonomy, include_subtasks: bool = False) -> Scores:
    table, metrics = run_scores(runs, taxonomy.main_metrics, include_subtasks)
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
    return Scores(table=table.sort_index(), metrics=metrics, sources=sources)


def parse_pairs(specs: list[str], models: list[str]) -> list[tuple[str, str]]:
    """``A,B`` -> (A, B); unknown models raise a UserError listing the known ones."""
    pairs = []
    for spec in specs:
        a, sep, b = spec.partition(",")
        if not sep or not a or not b:
            raise UserError(f"--pair wants MODEL_A,MODEL_B, got {spec!r}")
        for m in (a, b):
            if m not in models:
                raise UserError(f"--pair: unknown model {m!r}; known: {', '.join(models)}")
        pairs.append((a, b))
    return pairs


def build_report(
    runs: list[Run],
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
    """Write every table, figure and ``report.html`` into ``out``; returns the HTML path."""
    out.mkdir(parents=True, exist_ok=True)
    steps = tqdm(total=6, desc="report", unit="step")
    scores = collect_scores(runs, externals, taxonomy, include_subtasks)
    table = scores.table
    table.to_csv(out / "scores.csv")
    steps.update()

    episode_pages = write_viewer(sorted({r.path.parent for r in runs}), out / "episodes") if runs else {}
    sections = [
        leaderboard_section(table, runs, taxonomy.main_metrics, episode_pages, [e.label for e in externals]),
        overview_section(scores, runs, externals, taxonomy),
        kendall_section(table, out),
    ]
    steps.update(2)

    models = without_chance(table)  # chance rows are reference points, not models
    if len(models) >= 2:
        sections += abilities_sections(models, taxonomy, group_members(runs), out)
    else:
        need = needs_models("Min-max normalising a benchmark across models", 2, len(models))
        sections.append(Section("Abilities: static versus interactive (seed 003, Figure 3)", [need]))
    tau, p, n = kendall_tables(models)
    sections += figures_triangulating.build(models, taxonomy, tau, p, n, out, sizes or {}, scatter)
    steps.update()

    run_models = sorted({r.model for r in runs})
    chosen = parse_pairs(pairs or [], list(table.index)) or default_pairs(run_models)
    if chosen:
        disc = Section("Discriminative power (seed 003, Figure 2)")
        ratios = ratio_table(table, chosen)
        ratios.to_csv(out / "discriminative_ratios.csv")
        disc.blocks.append(Table(ratios, "ratio B / A per benchmark (blank = undefined, A scored 0)"))
        for i, (a, b) in enumerate(chosen):
            pt = pair_table(table, a, b)
            if len(pt) >= 2:
                disc.blocks.append(Image(plots.pair_scatter(pt, a, b, out / f"discriminative_{i}.png"), f"{b} vs {a}"))
            else:
                disc.blocks.append(Text(f"{b} vs {a}: a scatter needs 2 benchmarks both scored, has {len(pt)}.", warn=True))
        sections.append(disc)
    else:
        sections.append(
            Section(
                "Discriminative power (seed 003, Figure 2)",
                [needs_models("A discriminative-power plot (a pair of models)", 2, len(run_models))],
            )
        )
    steps.update()

    for section in (
        analyses_globalgroup.build(runs, out),
        analyses_connections.build(runs, out, overrides=taxonomy.main_metrics, judge=judge),
        analyses_clembench.build(runs, externals, out),
    ):
        if section is not None:
            sections.append(section)
    steps.update()
    steps.close()
    path = out / "report.html"
    write_text(path, render_page(title, sections))
    return path


def abilities_sections(table: pd.DataFrame, taxonomy: Taxonomy, groups: dict[str, list[str]], out: Path) -> list[Section]:
    """Seed 003 Figure 3 with the paper's sides (``abilities_static_vs_interactive.*``), then the labelled
    extended view that adds our tasks (``abilities_static_vs_interactive_extended.*``)."""
    sections = []
    views = (
        (taxonomy, "", "Abilities: static versus interactive (seed 003, Figure 3)"),
        (
            taxonomy.extended(),
            "_extended",
            "Abilities: static versus interactive, extended view (our variant: the paper's sides plus our tasks)",
        ),
    )
    for tax, suffix, title in views:
        abil = static_vs_interactive(table, tax, groups)
        members = assessment_members(table, tax, groups)
        sec = Section(title)
        sec.blocks.append(
            Text(
                f"Static: {', '.join(members['static']) or 'none'}. Interactive: {', '.join(members['interactive']) or 'none'}. A group stands for its members (never both); each side and ability pools its benchmarks as the mean of min-max normalised scores per model.",
                note=True,
            )
        )
        if not abil.empty:
            abil.to_csv(out / f"abilities_static_vs_interactive{suffix}.csv", index=False)
            sec.blocks += [
                Table(abil.set_index("ability")),
                Image(plots.ability_bars(abil, out / f"abilities_static_vs_interactive{suffix}.png"), "abilities"),
            ]
        else:
            sec.blocks.append(Text("No benchmark in the scores maps to an ability of the taxonomy.", note=True))
        sections.append(sec)
    return sections


def overview_section(scores: Scores, runs: list[Run], externals: list[External], taxonomy: Taxonomy) -> Section:
    sec = Section("Sources and models")
    rows = [{"source": "results", "kind": "lm-eval / play", "models": len({r.model for r in runs}), "files": len(runs)}] if runs else []
    rows += [{"source": e.label, "kind": e.kind, "models": len(e.table), "files": 1} for e in externals]
    sec.blocks.append(Table(pd.DataFrame(rows).set_index("source"), "inputs", digits=0))
    bench = pd.DataFrame(
        {
            "metric": [scores.metrics.get(b, "") for b in scores.table.columns],
            "ability": [taxonomy.ability_name(a) if (a := taxonomy.ability_of(b)) else "" for b in scores.table.columns],
            "assessment": [taxonomy.assessment_of(b) or "" for b in scores.table.columns],
            "models": [int(scores.table[b].notna().sum()) for b in scores.table.columns],
        },
        index=pd.Index(scores.table.columns, name="benchmark"),
    )
    sec.blocks.append(Table(bench, "benchmarks", digits=0))
    only = scores.single_source_models()
    for label, models in only.items():
        sec.blocks.append(Text(f"Models found only in {label} ({len(models)}): {', '.join(models)}"))
    return sec
