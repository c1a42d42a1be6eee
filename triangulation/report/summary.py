"""The report's first lines: one verdict per evaluated model against the chance player (our addition).

"SmolLM2: below chance on 5 of 6 benchmarks (2 measurably), above on 0, level on 1; 4 of the 6 at or below chance because
under 5% of its replies parsed; at --limit (n <= 3 per benchmark)". A benchmark counts where the chance row (``--model random``)
has a score (a group once, without its members); "measurably" = the chance score lies outside the model's 95% interval (:meth:`LeaderboardCell.interval`).
"""

from __future__ import annotations

import math

from triangulation.html import Section, Text
from triangulation.report.cells import FORMAT_FAILURE_BELOW, LeaderboardCell
from triangulation.report.context import ReportContext
from triangulation.report.leaderboard import CHANCE_MODELS, is_chance


def compare(value: float, chance: float, cell: LeaderboardCell | None) -> tuple[str, bool]:
    """("below" | "above" | "level" | "undefined", measurably): the model's score against chance's."""
    if math.isnan(value):
        return "undefined", False
    side = "below" if value < chance else "above" if value > chance else "level"
    if cell is None or side == "level":
        return side, False
    lo, hi = cell.interval()
    return side, not math.isnan(lo) and not lo <= chance <= hi


def verdict(ctx: ReportContext, model: str, chance_model: str) -> str:
    """One line: where ``model`` stands against ``chance_model`` on the benchmarks both have."""
    table = ctx.table
    counts: dict[str, list[str]] = {"below": [], "above": [], "level": [], "undefined": []}
    measurable = {"below": 0, "above": 0}
    format_failures, ns, limited = 0, [], False
    members = {m for r in ctx.runs for g, subs in r.group_subtasks.items() if g in table.columns for m in subs}
    for bench in (b for b in table.columns if b not in members):  # a group counts once, not with its members
        chance = table.at[chance_model, bench]
        cell = ctx.cells.get((model, bench))
        if math.isnan(chance) or (math.isnan(table.at[model, bench]) and cell is None):
            continue
        side, sure = compare(float(table.at[model, bench]), float(chance), cell)
        counts[side].append(bench)
        measurable[side] = measurable.get(side, 0) + sure
        if cell is not None:
            ns.append(cell.n)
            limited = limited or cell.limited
            if side != "above" and cell.parsed and cell.parse_share < FORMAT_FAILURE_BELOW:
                format_failures += 1
    total = sum(len(v) for v in counts.values())
    if not total:
        return f"{model}: no benchmark shared with the chance row."
    below = len(counts["below"]) + len(counts["undefined"])
    parts = [
        f"{model}: below chance on {below} of {total} benchmarks" + (f" ({measurable['below']} measurably)" if counts["below"] else "")
    ]
    if counts["undefined"]:
        parts[0] += f", {len(counts['undefined'])} of them undefined"
    parts.append(f"above on {len(counts['above'])}" + (f" ({measurable['above']} measurably)" if counts["above"] else ""))
    if counts["level"]:
        parts.append(f"level on {len(counts['level'])}")
    line = ", ".join(parts)
    not_above = below + len(counts["level"])
    if not_above:
        line += f"; {format_failures} of the {not_above} at or below chance because under {FORMAT_FAILURE_BELOW:.0%} of its replies parsed"
    if limited and ns:
        line += f"; at --limit (n <= {max(ns)} per benchmark): the 95% intervals in the leaderboard say how little this means"
    return line + "."


def summary_section(ctx: ReportContext) -> Section:
    """The verdict lines (or why there are none), first on the page."""
    sec = Section("Summary")
    chance = [m for m in ctx.table.index if is_chance(m)]
    models = [m for m in ctx.run_models if not is_chance(m)]
    if not models:
        sec.blocks.append(Text("No evaluated model in these results (only --external tables or the chance player).", skip=True))
        return sec
    if not chance:
        sec.blocks.append(
            Text("No chance row: run `triangulate play/eval --model random` on the same tasks for a verdict per model.", skip=True)
        )
        return sec
    for model in models:
        sec.blocks.append(Text(verdict(ctx, model, chance[0]), verdict=True))
    sec.blocks.append(
        Text(
            f"Against the chance player ({CHANCE_MODELS[chance[0]]}) on each benchmark both scored; "
            "measurably = the chance score lies outside the model's 95% interval; the parse share is the share of "
            "replies the task could read (our addition, beyond the papers)." + group_count_note(ctx),
            note=True,
        )
    )
    return sec


def group_count_note(ctx: ReportContext) -> str:
    """Why the verdict counts fewer benchmarks than the leaderboard has columns: a group counts once."""
    groups = {
        g: [m for m in subs if m in ctx.table.columns] for r in ctx.runs for g, subs in r.group_subtasks.items() if g in ctx.table.columns
    }
    members = {m for subs in groups.values() for m in subs}
    if not members:
        return ""
    named = ", ".join(f"{g} ({len(subs)})" for g, subs in sorted(groups.items()) if subs)
    ours = [c for c in ctx.table.columns if not any(str(c).startswith(f"{label}/") for label in ctx.external_labels)]
    return (
        f" A group counts once, as one benchmark: of the leaderboard's {len(ours)} columns here, {len(members)} are "
        f"members shown beside their group ({named})."
    )
