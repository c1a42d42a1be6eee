"""The top of the report: the leaderboard (with n, parse share and the score on parsed items per cell),
the sources and models with each benchmark's reliability, the Kendall section with bootstrap intervals,
the published leaderboards of ``--external`` tables (folded), and the sentence a section shows instead of
an empty figure when it has too few models.

:data:`triangulation.report.sections.SECTIONS` calls these; analyses further down the page live in
``triangulation/report/analyses/``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from triangulation.html import Leaderboard, Section, Table, Text
from triangulation.report.cells import MIN_ITEMS_SPLIT_HALF, LeaderboardCell, cell_note, item_records, run_cell, split_half, why_undefined
from triangulation.report.context import ReportContext, Skipped
from triangulation.report.leaderboard import CHANCE_MODELS, leaderboard, reference_levels, stderr_table
from triangulation.runs.results_io import NO_SCORE, Run, seed_replicas

#: what a leaderboard cell reads when none of the model's replies parsed (its score, 0 or undefined, says nothing)
UNPARSED = "unparsed"
#: a seed spread over replicas of fewer items than this reads "n too small"
MIN_ITEMS_SEED_SPREAD = 10
#: rows of the benchmark-pair table on the page (kendall_pairs.csv has all)
MAX_PAIRS_SHOWN = 60
#: a benchmark whose split-half reliability is below this marks its Kendall pairs "unreliable"
RELIABLE_FROM = 0.5


def needs_models(what: str, needed: int, has: int) -> Text:
    """The sentence shown instead of an empty table or figure: "<what> needs N models, has M"."""
    return Text(f"{what} needs {needed} models, has {has}: add results of more models or --external tables.", warn=True, skip=True)


def column_groups(columns: list[str], external_labels: list[str]) -> list[tuple[str, list[str]]]:
    """(caption, columns): the results' benchmarks first, then one group per --external table (``LABEL/...``),
    so each leaderboard holds the models that share its benchmarks instead of one sparse table."""
    external = {label: [c for c in columns if c.startswith(f"{label}/")] for label in external_labels}
    taken = {c for cols in external.values() for c in cols}
    groups = [("evaluated here: model x benchmark", [c for c in columns if c not in taken])]
    groups += [(f"--external {label}: model x benchmark", cols) for label, cols in external.items()]
    return [(caption, cols) for caption, cols in groups if cols]


def leaderboard_note(ctx: ReportContext, reference: list[str]) -> str:
    chance_hint = (
        "" if any(m in CHANCE_MODELS for m in ctx.table.index) else " (run `triangulate play/eval --model random` to add the chance player)"
    )
    levels = [label for label in reference_levels([str(c) for c in ctx.table.columns]) if label in reference]
    return (
        "Main metric of each benchmark (its metric is listed under Sources and models), ± the standard error lm-eval or "
        "triangulate play reported. Under it: n (items or episodes scored; `n/N (--limit)` and a 95% interval when the "
        "run scored part of the task), the share of replies that parsed, and the score on items with a parsed reply "
        "(our variant, shown when some replies did not parse). An undefined cell says why; a cell where none of the "
        "model's replies parsed reads 'unparsed', whatever its score. Click a header to sort; a "
        f"linked benchmark opens its episodes. Italic rows are reference points: {', '.join(reference) or 'none'}{chance_hint}; "
        "they are left out of the correlations."
        + (
            f" {', '.join(levels)}: a level the paper states for the task, not a model; an ideal learner errs once on "
            "every rule switch (Kennedy & Nowak 2024): close to the ceiling, not a chance level."
            if levels
            else ""
        )
    )


def board(ctx: ReportContext, columns: list[str], caption: str, links: dict[str, str]) -> Leaderboard | None:
    """One leaderboard over ``columns``: the rows with a value or a reason there, cell notes from the item records."""
    values, errors, reference = leaderboard(ctx.table, stderr_table(ctx.runs, ctx.table), set(ctx.run_models))
    label = {CHANCE_MODELS.get(m, m): m for m in ctx.table.index}
    notes, why = {}, {}
    values = values.copy()
    for shown in values.index:
        for col in columns:
            model = label.get(shown, shown)
            cell = ctx.cells.get((model, col))
            if cell is None:
                continue
            notes[(shown, col)] = with_clem_interval(ctx, model, col, cell, cell_note(cell))
            if cell.parsed and cell.parse_share == 0:  # nothing parsed: one reading, whatever the score says
                values.loc[shown, col] = math.nan
                why[(shown, col)] = UNPARSED
            elif reason := why_undefined(cell):
                why[(shown, col)] = f"undefined: {reason}"
    rows = [m for m in values.index if values.loc[m, columns].notna().any() or any(why.get((m, c)) for c in columns)]
    if not rows:
        return None
    return Leaderboard(
        values.loc[rows, columns],
        errors.loc[rows, columns],
        links=links,
        reference=reference,
        caption=caption,
        notes=notes,
        why=why,
        headers=scale_marked(ctx, columns, member_headers(ctx, columns)),
    )


def with_clem_interval(ctx: ReportContext, model: str, task: str, cell: LeaderboardCell, note: str) -> str:
    """A ``--limit`` clemscore cell's note with its 95% interval (0-100), from the episodes' shares of the
    clemscore (:func:`~triangulation.report.analyses.clembench.clemscore_items`); other notes unchanged."""
    from triangulation.report.analyses.clembench import clemscore_items

    if ctx.scores.metrics.get(task) != "clemscore" or not cell.limited or " 95% [" in note:
        return note
    run = next((r for r in sorted(ctx.runs, key=lambda r: r.date, reverse=True) if r.model == model and r.samples.get(task)), None)
    if run is None:
        return note
    lo, hi = LeaderboardCell(scores=clemscore_items(item_records(run, task))).interval()
    if math.isnan(lo):
        return note
    return note.replace("(--limit)", f"(--limit) 95% [{100 * lo:.0f}, {100 * hi:.0f}]", 1)


def scale_marked(ctx: ReportContext, columns: list[str], headers: dict[str, str]) -> dict[str, str]:
    """Headers of benchmarks scored on 0-100 (clembench's clemscore, % played, quality) marked "(0-100)", so
    they are not read on the 0-1 scale of the other columns."""
    from triangulation.report.analyses.clembench import SCALES

    out = dict(headers)
    for col in columns:
        if ctx.scores.metrics.get(col) in SCALES:
            out[col] = f"{headers.get(col, col)} (0-100)"
    return out


def member_headers(ctx: ReportContext, columns: list[str]) -> dict[str, str]:
    """A group member's header without the group's name when the group is a column too (``lm_pragmatics_irony``
    -> ``irony`` beside ``lm_pragmatics``), so 16 columns fit a 1,400 px screen; the full name is the title."""
    out = {}
    for run in ctx.runs:
        for group, members in run.group_subtasks.items():
            if group in columns:
                out.update({m: m[len(group) + 1 :] for m in members if m in columns and m.startswith(group + "_")})
    return out


def episode_links(ctx: ReportContext) -> dict[str, str]:
    """Benchmark -> its episodes: a task's page, a group's list of its task pages on the episodes index."""
    from triangulation.report.context import leaf_groups
    from triangulation.viewer.pages import group_anchor

    links = {task: str(Path("episodes") / page.name) for task, page in ctx.episode_pages.items()}
    for group, leaves in leaf_groups(ctx.runs).items():
        if group not in links and any(leaf in ctx.episode_pages for leaf in leaves):
            links[group] = f"episodes/index.html#{group_anchor(group)}"
    return links


def leaderboard_section(ctx: ReportContext) -> Section:
    """Models x the benchmarks evaluated here, main metric ± standard error and what stands behind each cell."""
    links = episode_links(ctx)
    sec = Section("Leaderboard")
    groups = column_groups(list(ctx.table.columns), ctx.external_labels)
    ours = [cols for caption, cols in groups if caption.startswith("evaluated here")]
    table = board(ctx, ours[0], "evaluated here: model x benchmark", links) if ours else None
    if table is None:
        sec.blocks.append(Text("No benchmark was evaluated here: the published leaderboards are at the end (folded).", skip=True))
        return sec
    sec.blocks += [Text(leaderboard_note(ctx, table.reference), note=True), table]
    judged_self = self_judged(ctx.runs)
    if judged_self:
        sec.blocks.append(
            Text(
                "Self-judged scores: the evaluated model was its own judge (played without --judge_model), so these "
                "scores measure agreement with itself, not success: " + ", ".join(f"{m} on {t}" for m, t in judged_self) + ".",
                warn=True,
            )
        )
    return sec


def self_judged(runs: list[Run]) -> list[tuple[str, str]]:
    """(model, task) of every result a player judged itself (``"judge": "self"`` in its results entry)."""
    return sorted(
        {(r.model, task) for r in runs for task, entry in r.results.items() if isinstance(entry, dict) and entry.get("judge") == "self"}
    )


def external_leaderboards(ctx: ReportContext) -> list[Section | Skipped]:
    """One folded section per --external table: the published leaderboard as read."""
    out: list[Section | Skipped] = []
    for caption, columns in column_groups(list(ctx.table.columns), ctx.external_labels):
        if caption.startswith("evaluated here"):
            continue
        table = board(ctx, columns, caption, {})
        if table is not None:
            out.append(Section(f"Published leaderboard: {caption.removesuffix(': model x benchmark')}", [table], folded=True))
    return out


def reliability_table(ctx: ReportContext) -> pd.DataFrame:
    """Per benchmark evaluated here: items per model (min-max), split-half reliability over the models with
    at least :data:`~triangulation.report.cells.MIN_ITEMS_SPLIT_HALF` items, and the spread over seeds."""
    rows = []
    replicated = {g for r in ctx.runs for g, subs in r.group_subtasks.items() if seed_replicas(g, subs) and g in ctx.table.columns}
    for task in sorted({t for _, t in ctx.cells} | replicated):
        ns = [c.n for (_, t), c in ctx.cells.items() if t == task]
        rel, k = split_half(ctx.cells, task)
        spread = seed_spread(ctx, task)
        rows.append(
            {
                "benchmark": task,
                "items per model": "" if not ns else f"{min(ns)}-{max(ns)}" if min(ns) != max(ns) else str(ns[0]),
                "split-half (Spearman-Brown)": rel,
                "models used": k,
                "seed spread (max - min)": spread,
            }
        )
    return pd.DataFrame(rows).set_index("benchmark") if rows else pd.DataFrame()


def seed_spread(ctx: ReportContext, task: str) -> float | str:
    """Largest max - min of the main metric over the seed replicas of ``task`` in one model's results
    (``<task>_seed_<k>`` members, or results files of ``task`` run with different seeds); NaN without repeats.
    "n too small" when a replica scored fewer than :data:`MIN_ITEMS_SEED_SPREAD` items (one item per prompt order
    scores 0 or 1: a spread of 1.000 would say nothing about the seeds)."""
    by_model: dict[str, dict[str, float]] = {}
    items: list[int] = []
    for run in ctx.runs:
        members = run.group_subtasks.get(task, [])
        replicas = members if seed_replicas(task, members) else [task] if task in run.results else []
        for member in (m for m in replicas if m in run.results):
            label = member if replicas == members else f"run {(run.configs.get(task) or {}).get('seed', run.date)}"
            by_model.setdefault(run.model, {})[label] = run.main.get(member, NO_SCORE)[1]
            cell = run_cell(run, member)
            if cell is not None:
                items.append(cell.n)
    spreads = [max(v.values()) - min(v.values()) for v in by_model.values() if len(v) > 1]
    if not spreads:
        return math.nan
    if items and min(items) < MIN_ITEMS_SEED_SPREAD:
        return f"n too small ({min(items)} item{'s' if min(items) != 1 else ''} per seed)"
    return max(spreads)


def benchmark_reliability(ctx: ReportContext) -> dict[str, float]:
    table = reliability_table(ctx)
    return {} if table.empty else table["split-half (Spearman-Brown)"].dropna().to_dict()


def overview_section(ctx: ReportContext) -> Section:
    """Inputs, benchmarks (metric, ability, models) and the reliability of the benchmarks evaluated here."""
    scores = ctx.scores
    sec = Section("Sources and models")
    runs = ctx.runs
    rows = [{"source": "results", "kind": "lm-eval / play", "models": len(ctx.run_models), "files": len(runs)}] if runs else []
    rows += [{"source": e.label, "kind": e.kind, "models": len(e.table), "files": 1} for e in ctx.externals]
    sec.blocks.append(Table(pd.DataFrame(rows).set_index("source"), "inputs", digits=0))
    external = {c for _, cols in column_groups(list(scores.table.columns), ctx.external_labels)[1:] for c in cols}
    ours = [b for b in scores.table.columns if b not in external]
    taxonomy = ctx.taxonomy
    bench = pd.DataFrame(
        {
            "metric": [scores.metrics.get(b, "") for b in ours],
            "ability": [taxonomy.ability_name(a) if (a := taxonomy.ability_of(b)) else "" for b in ours],
            "assessment": [taxonomy.assessment_of(b) or "" for b in ours],
            "models": [int(scores.table[b].notna().sum()) for b in ours],
        },
        index=pd.Index(ours, name="benchmark"),
    )
    sec.blocks.append(Table(bench, "benchmarks evaluated here", digits=0))
    if external:
        sec.blocks.append(Text(f"{len(external)} benchmarks of --external tables: see their folded leaderboards at the end.", note=True))
    reliability = reliability_table(ctx)
    known = reliability[["split-half (Spearman-Brown)", "seed spread (max - min)"]].notna().any().any() if not reliability.empty else False
    if not reliability.empty and not known:
        most = max((c.n for c in ctx.cells.values()), default=0)
        sec.blocks.append(
            Text(
                f"Reliability: split-half needs >= {MIN_ITEMS_SPLIT_HALF} items per model on 3 models and seed spread needs "
                f"repeated runs; these results have at most {most} items per model and benchmark and no repeats.",
                note=True,
            )
        )
    elif known:
        sec.blocks += [
            Text(
                "Reliability (beyond the papers): split-half = Pearson r between the models' mean scores on odd and on even "
                f"items, Spearman-Brown corrected (2r / (1 + r)), over the models with at least {MIN_ITEMS_SPLIT_HALF} items "
                "(needs 3 such models; blank otherwise); seed spread = max - min of a model's score over runs with different seeds.",
                note=True,
            ),
            Table(reliability, "reliability per benchmark"),
        ]
    for label, models in scores.single_source_models().items():
        sec.blocks.append(Text(f"Models found only in {label} ({len(models)}): {', '.join(models)}", note=True))
    return sec
