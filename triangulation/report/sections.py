"""The report's sections in page order: :data:`SECTIONS`, one builder per entry.

A builder takes the :class:`~triangulation.report.context.ReportContext` and returns a list of
``Section`` and ``Skipped`` (a section that cannot be computed here, with its reason). **A new analysis
is one module with a builder and one line in** :data:`SECTIONS`. After the builders ran,
:func:`collapse` drops empty tables and turns a section that is left with nothing to show into one
line of the "Skipped" list, so the page never shows an empty table or a chart of n/a bars.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from plumbing.csvio import write_csv
from triangulation.html import Image, Items, Leaderboard, Section, Table, Text
from triangulation.report import plots
from triangulation.report import summary as summary_module
from triangulation.report.abilities import ability_matrix, assessment_members, static_vs_interactive
from triangulation.report.analyses import clembench as analyses_clembench
from triangulation.report.analyses import cognitive_spectrum as analyses_cognitive_spectrum
from triangulation.report.analyses import connections as analyses_connections
from triangulation.report.analyses import connections_published as analyses_connections_published
from triangulation.report.analyses import contamination as analyses_contamination
from triangulation.report.analyses import figures_triangulating
from triangulation.report.analyses import globalgroup as analyses_globalgroup
from triangulation.report.analyses import interactive_score as analyses_interactive_score
from triangulation.report.analyses.published import references_section
from triangulation.report.context import ReportContext, Skipped
from triangulation.report.discriminative import default_pairs, pair_table, parse_pairs, ratio_table
from triangulation.report.kendall_section import kendall_section
from triangulation.report.leaderboard import is_chance
from triangulation.report.top import external_leaderboards, leaderboard_section, overview_section

Built = list[Section | Skipped]
#: how the seed 003 figures choose their models (triangulation.report.kendall.keep_common)
MODEL_SET_NOTE = (
    "Models: the authors' keep_common (only the models that scored every benchmark of the figure; n per cell shown); "
    "our pairwise variant (each pair over the models that scored both) is in the *_pairwise.csv files."
)
SectionBuilder = Callable[[ReportContext], Built]


def summary(ctx: ReportContext) -> Built:
    return [summary_module.summary_section(ctx)]


def leaderboard(ctx: ReportContext) -> Built:
    return [leaderboard_section(ctx)]


def references(ctx: ReportContext) -> Built:
    return [references_section(ctx)]


def overview(ctx: ReportContext) -> Built:
    return [overview_section(ctx)]


def kendall(ctx: ReportContext) -> Built:
    return [kendall_section(ctx)]


def abilities(ctx: ReportContext) -> Built:
    """Seed 003 Figure 3 with the paper's sides, then the labelled extended view that adds our tasks."""
    title = "Abilities: static versus interactive (seed 003, Figure 3)"
    models = ctx.models
    # the Interactive side's two scores (paper's rule, authors' code) on published clembench tables: shown even
    # where the abilities themselves cannot be computed
    two_ways = analyses_interactive_score.blocks(ctx.externals)
    if len(models) < 3:
        reason = f"needs >= 3 models (a Kendall tau per ability), has {len(models)}"
        if two_ways:
            return [Section(title, [Text(f"Abilities not computed: {reason}.", note=True), *two_ways])]
        return [Skipped(title + " and its extended view", reason)]
    groups = ctx.groups
    views = (
        (ctx.taxonomy, "", title),
        (ctx.taxonomy.extended(), "_extended", "Abilities, extended view (our variant: the paper's sides plus our tasks)"),
    )
    out: Built = []
    for tax, suffix, heading in views:
        abil = static_vs_interactive(models, tax, groups)
        taus = abil[[c for c in abil.columns if c.startswith("tau_")]] if not abil.empty else pd.DataFrame()
        if abil.empty or taus.isna().all().all():
            reason = "no ability has a Kendall tau: needs >= 3 models scored on an ability's benchmarks and on a side"
            if not suffix and two_ways:
                out.append(Section(heading, [Text(f"Abilities not computed: {reason}.", note=True), *two_ways]))
            else:
                out.append(Skipped(heading, reason))
            continue
        members = assessment_members(models, tax, groups)
        write_csv(abil, ctx.out / f"abilities_static_vs_interactive{suffix}.csv", index=False)
        pairwise = static_vs_interactive(models, tax, groups, models="pairwise")
        write_csv(pairwise, ctx.out / f"abilities_static_vs_interactive{suffix}_pairwise.csv", index=False)
        note = (
            f"Static: {', '.join(members['static']) or 'none'}. Interactive: {', '.join(members['interactive']) or 'none'}. "
            "A group stands for its members (never both); each side and ability pools its benchmarks as the mean of "
            "min-max normalised scores per model. " + MODEL_SET_NOTE
        )
        path = ctx.out / f"abilities_static_vs_interactive{suffix}.png"
        blocks = [Text(note, note=True), Table(abil.set_index("ability")), Image(plots.ability_bars(abil, path), "abilities")]
        if not suffix:
            blocks += two_ways
        out.append(Section(heading, blocks))
    return out


def abilities_by_benchmark(ctx: ReportContext) -> Built:
    """Seed 003 Figure 7: abilities x each large QA benchmark and game, without Wordle and Image Game."""
    title = "Abilities x benchmarks and games (seed 003, Figure 7)"
    if len(ctx.models) < 3:
        return [Skipped(title, f"needs >= 3 models (a Kendall tau per cell), has {len(ctx.models)}")]
    tau, p, n = ability_matrix(ctx.models, ctx.taxonomy, ctx.groups)
    if tau.empty or tau.columns.empty or tau.isna().all().all():
        return [Skipped(title, "no ability and no static or interactive benchmark scored by >= 3 common models")]
    write_csv(tau, ctx.out / "triangulating_fig7_tau.csv")
    write_csv(n, ctx.out / "triangulating_fig7_n.csv")
    write_csv(ability_matrix(ctx.models, ctx.taxonomy, ctx.groups, models="pairwise")[0], ctx.out / "triangulating_fig7_tau_pairwise.csv")
    note = (
        "As the paper's Figure 7 (App. I): \"The correlation matrix does not include results on Wordle and Image Game "
        "as model performances' were too low\": Wordle and Image Game are left out here (only here: the other figures keep them)."
    )
    heat = plots.heatmap(tau, p, ctx.out / "triangulating_fig7.png", "Abilities x benchmarks, Kendall tau-b (* p < 0.05)")
    blocks = [Text(note + " " + MODEL_SET_NOTE, note=True), Table(tau, "Kendall tau-b, ability x benchmark")]
    blocks += [Table(n.astype("Int64"), "n: models per cell"), Image(heat, "Figure 7")]
    return [Section(title, blocks)]


def triangulating_figures(ctx: ReportContext) -> Built:
    tau, p, n = ctx.kendall
    return list(
        figures_triangulating.build(ctx.models, ctx.taxonomy, tau, p, n, ctx.out, ctx.sizes, ctx.scatter, ctx.groups, ctx.externals)
    )


def discriminative(ctx: ReportContext) -> Built:
    """Seed 003 Figure 2 for the chosen model pairs."""
    title = "Discriminative power (seed 003, Figure 2)"
    evaluated = [m for m in ctx.run_models if not is_chance(m)]  # the chance player is a reference, never model A or B
    chosen = parse_pairs(ctx.pairs, list(ctx.table.index)) or default_pairs(evaluated)
    if not chosen:
        return [Skipped(title, f"needs >= 2 evaluated models (a pair; the chance player is none), has {len(evaluated)}")]
    sec = Section(title)
    ratios = ratio_table(ctx.table, chosen)
    write_csv(ratios, ctx.out / "discriminative_ratios.csv")
    sec.blocks.append(Table(ratios, "ratio B / A per benchmark (blank = undefined, A scored 0)"))
    for i, (a, b) in enumerate(chosen):
        pt = pair_table(ctx.table, a, b)
        if len(pt) >= 2:
            sec.blocks.append(Image(plots.pair_scatter(pt, a, b, ctx.out / f"discriminative_{i}.png"), f"{b} vs {a}"))
        else:
            sec.blocks.append(Text(f"{b} vs {a}: a scatter needs 2 benchmarks both scored, has {len(pt)}.", skip=True))
    return [sec]


def globalgroup(ctx: ReportContext) -> Built:
    return [s for s in [analyses_globalgroup.build(ctx.runs, ctx.out)] if s is not None]


def connections(ctx: ReportContext) -> Built:
    section = analyses_connections.build(ctx.runs, ctx.out, judge=ctx.judge)
    return [section] if section is not None else []


def clembench(ctx: ReportContext) -> Built:
    """Our runs' clembench games; the published tables of --external clembench-runs results come folded."""
    out: Built = []
    ours = analyses_clembench.build(ctx.runs, [], ctx.out)
    if ours is not None:
        out.append(ours)
    published = analyses_clembench.build([], ctx.externals, ctx.out)
    if published is not None:
        published.title = "clembench games: the published tables (seed 002, --external)"
        published.folded = True
        out.append(published)
    return out


def published_leaderboards(ctx: ReportContext) -> Built:
    return external_leaderboards(ctx)


#: the report, top to bottom: summary and leaderboard first, published tables folded at the end
SECTIONS: list[SectionBuilder] = [
    summary,
    leaderboard,
    references,
    overview,
    kendall,
    abilities,
    abilities_by_benchmark,
    analyses_cognitive_spectrum.build,
    triangulating_figures,
    discriminative,
    globalgroup,
    connections,
    analyses_connections_published.build,
    clembench,
    analyses_contamination.section,
    published_leaderboards,
]


def has_content(block: object) -> bool:
    """A block worth showing: a table with a value, a figure, a leaderboard, a line that is no skip reason."""
    if isinstance(block, Table):
        frame = block.frame
        if frame.empty:
            return False
        numeric = frame.select_dtypes("number")
        return numeric.shape[1] < frame.shape[1] or bool(numeric.notna().to_numpy().any())
    if isinstance(block, Leaderboard):
        return not block.values.empty
    if isinstance(block, Text):
        return not block.skip and not block.note
    return isinstance(block, (Image, Items))


def blank(value: object) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def prune(table: Table) -> Table:
    """The table without rows and columns that are blank throughout (they say nothing); the caption names what
    was left out, so a column blank for every benchmark (split-half with too few items) is one phrase, not a column."""
    frame = table.frame
    if frame.empty:
        return table
    empty = frame.map(blank)
    cols = [c for c in frame.columns if empty[c].all()]
    rows = [r for r, is_blank in empty.all(axis=1).items() if is_blank]
    if not cols and not rows:
        return table
    left_out = []
    if cols:
        left_out.append(f"column{'s' if len(cols) > 1 else ''} {', '.join(map(str, cols))} (blank throughout)")
    if rows:
        left_out.append(
            f"{len(rows)} blank row{'s' if len(rows) > 1 else ''} ({', '.join(map(str, rows[:8]))}{', ...' if len(rows) > 8 else ''})"
        )
    kept = frame.loc[~empty.all(axis=1).to_numpy(), [c not in cols for c in frame.columns]]
    caption = f"{table.caption}; left out: {'; '.join(left_out)}" if table.caption else f"left out: {'; '.join(left_out)}"
    return Table(kept, caption, table.digits)


def collapse(built: Built) -> tuple[list[Section], list[Skipped]]:
    """Sections with content (empty and all-blank tables dropped), and the skipped ones with their reasons."""
    sections: list[Section] = []
    skipped: list[Skipped] = []
    for item in built:
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        blocks = [prune(b) if isinstance(b, Table) else b for b in item.blocks]
        blocks = [b for b in blocks if not isinstance(b, Table) or has_content(b)]
        if any(has_content(b) for b in blocks if not isinstance(b, Text) or not b.warn):
            item.blocks = blocks
            sections.append(item)
            continue
        texts = [b for b in blocks if isinstance(b, Text)]
        reasons = [b.text for b in texts if b.skip or b.warn] or [b.text for b in texts]
        skipped.append(Skipped(item.title, " ".join(reasons) or "nothing to show in these results"))
    return sections, skipped


def skipped_section(skipped: list[Skipped]) -> Section | None:
    if not skipped:
        return None
    lines = [f"{s.title}: {s.reason}" for s in skipped]
    return Section("Skipped: cannot be computed from these results", [Items(lines)])


def finish(built: Built) -> list[Section]:
    """The page's sections: those with content, then one "Skipped" list of the others with their reasons."""
    sections, skipped = collapse(built)
    tail = skipped_section(skipped)
    return sections + ([tail] if tail else [])
