"""The report's first lines: one verdict per evaluated model against the chance player (our addition).

Plain first: "SmolLM2: indistinguishable from chance on every benchmark (9); 7 of the 9 because its replies did not
parse (under 5% parsed); at --limit (n <= 3 per benchmark) ...". Each benchmark the chance row (``--model random``)
scored counts once: a group without its members, a published task without its fresh twin (``<task>_fresh``,
the contamination check's second form of the same benchmark). A benchmark is *measurably* above or below chance
when the chance score lies outside the model's 95% interval (:meth:`LeaderboardCell.interval`), *indistinguishable* when it
lies inside, *undefined* when the model has no score there (never counted as below chance), and without an
interval when the run wrote no item records (lm-eval without ``--log_samples``). A benchmark where none of the model's
replies parsed reads "unparsed" in the leaderboard whatever its score (0 or undefined) and counts as indistinguishable
from chance, with the reason given: its replies did not parse.
"""

from __future__ import annotations

import math

from datasets_build.fresh_names import published_of
from triangulation.html import Section, Text
from triangulation.report.cells import FORMAT_FAILURE_BELOW, LeaderboardCell
from triangulation.report.context import ReportContext
from triangulation.report.leaderboard import CHANCE_MODELS, is_chance

#: the verdict's classes, in the order the sentence names them
CLASSES = ("above", "below", "indistinguishable", "undefined", "no interval")


def compare(value: float, chance: float, cell: LeaderboardCell | None) -> str:
    """The class of a model's score against chance's (one of :data:`CLASSES`)."""
    if math.isnan(value):
        return "undefined"
    if value == chance:
        return "indistinguishable"
    if cell is None:
        return "no interval"
    lo, hi = cell.interval()
    if math.isnan(lo):
        return "no interval"
    if lo <= chance <= hi:
        return "indistinguishable"
    return "above" if value > chance else "below"


def verdict_benchmarks(ctx: ReportContext) -> list[str]:
    """The benchmarks a verdict counts: a group once (not its members), a fresh twin not beside its published task."""
    table = ctx.table
    members = {m for r in ctx.runs for g, subs in r.group_subtasks.items() if g in table.columns for m in subs}
    return [b for b in table.columns if b not in members and published_of(str(b)) not in table.columns]


def unparsed(cell: LeaderboardCell | None) -> bool:
    """Under :data:`FORMAT_FAILURE_BELOW` of the model's replies parsed: a format failure more than a measurement."""
    return cell is not None and bool(cell.parsed) and cell.parse_share < FORMAT_FAILURE_BELOW


def nothing_parsed(cell: LeaderboardCell | None) -> bool:
    """0% of the replies parsed: the cell reads "unparsed" in the leaderboard, and its score (0 or undefined)
    measures the format, not the ability: the verdict counts it with chance, "because its replies did not parse"."""
    return cell is not None and bool(cell.parsed) and cell.parse_share == 0


def lead(classes: dict[str, list[str]], total: int) -> str:
    """The plain part: "indistinguishable from chance on every benchmark (9)", else each class with its count."""
    if len(classes["indistinguishable"]) == total:
        return f"indistinguishable from chance on every benchmark ({total})"
    words = {
        "above": "measurably above chance",
        "below": "measurably below chance",
        "indistinguishable": "indistinguishable from chance",
        "undefined": "undefined (no score)",
        "no interval": "without an interval (no item records: --log_samples)",
    }
    parts = [f"{words[c]} on {len(classes[c])}" for c in CLASSES if classes[c]]
    parts[0] += f" of {total} benchmarks"
    if not classes["above"] and not classes["below"]:
        parts.append("measurably above or below on none")
    return ", ".join(parts)


def verdict(ctx: ReportContext, model: str, chance_model: str) -> str:
    """One line: where ``model`` stands against ``chance_model`` on the benchmarks both have."""
    table = ctx.table
    classes: dict[str, list[str]] = {c: [] for c in CLASSES}
    failures, ns, limited = 0, [], False
    for bench in verdict_benchmarks(ctx):
        chance = table.at[chance_model, bench]
        cell = ctx.cells.get((model, bench))
        if math.isnan(chance) or (math.isnan(table.at[model, bench]) and cell is None):
            continue
        side = "indistinguishable" if nothing_parsed(cell) else compare(float(table.at[model, bench]), float(chance), cell)
        classes[side].append(bench)
        if cell is not None:
            ns.append(cell.n)
            limited = limited or cell.limited
            failures += side != "above" and unparsed(cell)
    total = sum(len(v) for v in classes.values())
    if not total:
        return f"{model}: no benchmark shared with the chance row."
    line = f"{model}: {lead(classes, total)}"
    not_above = total - len(classes["above"])
    if failures:
        of = f"the {not_above}" if not_above != total else f"the {total}"
        line += f"; {failures} of {of} because its replies did not parse (under {FORMAT_FAILURE_BELOW:.0%} parsed)"
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
            f"Against the chance player (the row {CHANCE_MODELS[chance[0]]!r}) on each benchmark both scored; measurably "
            "above or below = the chance score lies outside the model's 95% interval, indistinguishable = inside it; the parse share is the share of "
            "replies the task could read (our addition, beyond the papers)." + group_count_note(ctx),
            note=True,
        )
    )
    return sec


def group_count_note(ctx: ReportContext) -> str:
    """Why the verdict counts fewer benchmarks than the leaderboard has columns: a group counts once, and a fresh
    twin counts with its published task."""
    groups = {
        g: [m for m in subs if m in ctx.table.columns] for r in ctx.runs for g, subs in r.group_subtasks.items() if g in ctx.table.columns
    }
    members = {m for subs in groups.values() for m in subs}
    twins = [c for c in ctx.table.columns if published_of(str(c)) in ctx.table.columns]
    ours = [c for c in ctx.table.columns if not any(str(c).startswith(f"{label}/") for label in ctx.external_labels)]
    line = ""
    if members:
        named = ", ".join(f"{g} ({len(subs)})" for g, subs in sorted(groups.items()) if subs)
        line += (
            f" A group counts once, as one benchmark: of the leaderboard's {len(ours)} columns here, {len(members)} are "
            f"members shown beside their group ({named})."
        )
    if twins:
        line += (
            f" A fresh twin (the contamination check's new items) counts with its published task, not as one more "
            f"benchmark: {', '.join(map(str, twins))}."
        )
    return line
