"""Seed 003's Interactive score two ways, on published clembench-runs tables (``--external``).

The paper's rule is seed 002's clemscore (:func:`multiturn.games.clem.scoring.aggregate`: per game, then
the mean over games); the authors' code pooled every episode of every game
(:func:`multiturn.games.clem.scoring.episode_pooled`). Figures 1 and 3 keep the clemscore; this module
gives, for each published table whose % played fit the v1.6 episode counts, both scores per model, their
difference and the Kendall tau-b between them, shown in the Figure 1 and Figure 3 sections.

The episode counts are those of the published v1.6 instances (``datasets_build.clembench_upstream``); a
table whose % played are not whole episodes of them (another release) is left out, with a note.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from multiturn.api import clem_aggregate, clem_episode_pooled, clembench_games
from plumbing.csvio import write_csv
from plumbing.errors import UserError
from triangulation.html import Table, Text
from triangulation.report.external import External
from triangulation.report.kendall import kendall_pair

#: a published % played (two decimals) is a whole number of episodes when within this many episodes of one
EPISODE_TOLERANCE = 0.02


@dataclass(frozen=True)
class InteractiveScores:
    label: str  # the external table's label
    table: pd.DataFrame  # model x clemscore, clemscore_episode_pooled, difference
    tau: float
    p: float
    episodes: Mapping[str, int]  # episodes per game the pooled score weighed


def v16_episodes() -> dict[str, int] | None:
    """Episodes per game of clembench v1.6 (the published instances), or None when the upstream files are not here."""
    from datasets_build.clembench_upstream import load_instances

    try:
        return {game: len(load_instances(game)) for game in clembench_games()}
    except (UserError, OSError):
        return None


def fits(ext: External, episodes: Mapping[str, int]) -> bool:
    """Every % played of every game in ``ext`` is a whole number of ``episodes`` (the table is of that release)."""
    for game, n in episodes.items():
        col = f"{ext.label}/{game}/played"
        if col not in ext.table:
            return False
        played = pd.to_numeric(ext.table[col], errors="coerce").dropna() / 100.0 * n
        if ((played - played.round()).abs() > EPISODE_TOLERANCE).any():
            return False
    return True


def both_scores(ext: External, episodes: Mapping[str, int]) -> pd.DataFrame:
    """Per model that played every game: seed 002's clemscore and the episode-pooled score (0-100), and their difference."""
    rows = {}
    for model, row in ext.table.iterrows():
        per_game = {g: (float(row[f"{ext.label}/{g}/played"]), float(row[f"{ext.label}/{g}/quality"])) for g in episodes}
        if any(math.isnan(p) for p, _ in per_game.values()):
            continue
        paper = clem_aggregate(per_game)["clemscore"]
        code = clem_episode_pooled({g: (p, q, episodes[g]) for g, (p, q) in per_game.items()})["clemscore_episode_pooled"]
        rows[model] = {"clemscore": paper, "clemscore_episode_pooled": code, "difference": code - paper}
    table = pd.DataFrame.from_dict(rows, orient="index", columns=["clemscore", "clemscore_episode_pooled", "difference"])
    return table.rename_axis("model")


def published(externals: Iterable[External], episodes: Mapping[str, int] | None = None) -> tuple[list[InteractiveScores], list[str]]:
    """Both Interactive scores for each clembench external that fits the v1.6 episodes; notes for those left out."""
    clem = [e for e in externals if e.kind == "clembench"]
    if not clem:
        return [], []
    counts = episodes if episodes is not None else v16_episodes()
    if counts is None:
        return [], ["the clembench v1.6 instance files (episodes per game) are not in the upstream data"]
    out, notes = [], []
    for ext in clem:
        if not fits(ext, counts):
            notes.append(f"{ext.label}: its % played are not whole numbers of the v1.6 episodes per game (another release)")
            continue
        table = both_scores(ext, counts)
        if len(table) < 2:
            notes.append(f"{ext.label}: fewer than two models played every game")
            continue
        pair = kendall_pair(table["clemscore"], table["clemscore_episode_pooled"])
        out.append(InteractiveScores(ext.label, table.sort_values("clemscore", ascending=False), pair.tau, pair.p, dict(counts)))
    return out, notes


def blocks(externals: Iterable[External], outdir: Path | None = None, episodes: Mapping[str, int] | None = None) -> list:
    """The report blocks: per table a note with tau and the largest difference, then the per-model table
    (also written to ``outdir/triangulating_interactive_two_ways_<label>.csv``)."""
    found, notes = published(externals, episodes)
    out: list = []
    for s in found:
        if outdir is not None:
            write_csv(s.table, outdir / f"triangulating_interactive_two_ways_{re.sub(r'[^A-Za-z0-9._-]', '_', s.label)}.csv")
        worst = s.table["difference"].abs().idxmax()
        heaviest = max(s.episodes, key=s.episodes.get)
        out.append(
            Text(
                f"Interactive score two ways on the published {s.label} rows ({len(s.table)} models that played all {len(s.episodes)} games): "
                "clemscore = seed 002's rule, the paper's (mean over games of % played x mean over games of quality / 100; "
                "the figure uses it); clemscore_episode_pooled = the authors' code (playpen_eval clembench_report called "
                f"with 'clembench': one % played and one quality over all episodes of all games, so {heaviest}'s "
                f"{s.episodes[heaviest]} of {sum(s.episodes.values())} episodes weigh most). Kendall tau-b between them {s.tau:.3f} (p = {s.p:.3g}); largest "
                f"difference {s.table.at[worst, 'difference']:+.2f} points ({worst}).",
                note=True,
            )
        )
        out.append(Table(s.table.round(2), f"{s.label}: clemscore vs clemscore_episode_pooled (0-100)"))
    out += [Text(f"Interactive score two ways not shown for {n}.", note=True) for n in notes]
    return out
