"""Our models ranked among published ones on the same items, every published number scored by our code
or by the paper's own rule; reference rows, never part of a correlation.

- NYT Connections (seed 001, Sec. 5): the published raw replies of Claude 3.5 Sonnet and GPT-4o
  (``published_answers.json`` of the built data) re-scored with the task's own ``process_results`` on the
  games a run played, plus the novice and expert humans' published unweighted scores (App. D.1, Tables
  3-4: "the number of categories correctly grouped") on those games where they played them.
- clembench (seed 002, Sec. 2): "clemscore = % played / 100 x quality" per game, from the published
  clembench-runs tables (``--external``) by the same rule as our runs' per-game clemscore (our runs at
  ``--limit`` play fewer instances than the published ones).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from plumbing.csvio import write_csv
from plumbing.errors import UserError
from triangulation.html import Section, Table, Text
from triangulation.report.context import ReportContext, Skipped
from triangulation.report.leaderboard import CHANCE_MODELS, is_chance
from triangulation.runs.results_io import NO_SCORE, metric_values

CONNECTIONS = "connections"
TITLE = "Ranked among published models"
SOURCE_OURS = "evaluated here"
SOURCE_ANSWERS = "published replies (Samadarshi et al. 2024), re-scored by our code"
SOURCE_HUMANS = "published human scores (Samadarshi et al. 2024, App. D.1)"
HUMAN_LABELS = {"novice": "novice humans", "expert": "expert humans"}


def played_games(ctx: ReportContext) -> dict[str, dict[str, Mapping[str, Any]]]:
    """Model -> {game id: doc} of the static Connections games each run played (from its samples)."""
    from triangulation.report.cells import item_records

    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    for run in sorted(ctx.runs, key=lambda r: r.date):
        if CONNECTIONS in run.samples:
            docs = {
                str(r["doc"]["id"]): r["doc"]
                for r in item_records(run, CONNECTIONS)
                if isinstance(r.get("doc"), Mapping) and "id" in r["doc"]
            }
            out[run.model] = docs
    return out


def rescored(answers: list[Mapping[str, Any]], docs: Mapping[str, Mapping[str, Any]], metric: str) -> list[float]:
    """The task's own ``process_results`` on each published reply to a game in ``docs``."""
    from custom_metrics.connections import process_results

    values = []
    for answer in answers:
        doc = docs.get(str(answer["id"]))
        if doc is not None:
            values.append(float(process_results(doc, [str(answer["response"])]).get(metric, math.nan)))
    return values


def connections_ranking(ctx: ReportContext) -> tuple[pd.DataFrame, str] | None:
    """(ranking table, metric) on the union of the games the runs played; None without a Connections run."""
    from datasets_build.connections import load_human_scores, load_published_answers

    played = played_games(ctx)
    if not played:
        return None
    run = next(r for r in ctx.runs if r.model in played and CONNECTIONS in r.results)
    metric, _ = run.main.get(CONNECTIONS, NO_SCORE)
    docs = {gid: doc for games in played.values() for gid, doc in games.items()}
    rows = [
        {
            "model": CHANCE_MODELS.get(m, m),
            "score": ctx.table.at[m, CONNECTIONS],
            "games": len(g),
            "source": "chance player" if is_chance(m) else SOURCE_OURS,
        }
        for m, g in played.items()
        if m in ctx.table.index and CONNECTIONS in ctx.table.columns
    ]
    try:
        answers_by_model, humans = load_published_answers(), load_human_scores()
    except UserError:  # the report also reads runs made elsewhere: no built data, no published rows
        answers_by_model, humans = {}, {}
    for label, answers in answers_by_model.items():
        values = [v for v in rescored(answers, docs, metric) if not math.isnan(v)]
        if values:
            rows.append({"model": label, "score": float(np.mean(values)), "games": len(values), "source": SOURCE_ANSWERS})
    if metric == "unweighted_clustering":  # the humans' published score is that one
        for level, games in humans.items():
            values = [float(g["unweighted_clustering"]) for g in games if str(g["id"]) in docs]
            if values:
                rows.append(
                    {
                        "model": HUMAN_LABELS.get(level, level),
                        "score": float(np.mean(values)),
                        "games": len(values),
                        "source": SOURCE_HUMANS,
                    }
                )
    return ranked(pd.DataFrame(rows)), metric


def ranked(frame: pd.DataFrame) -> pd.DataFrame:
    """Best first, with a 1-based rank (ties share the better rank)."""
    frame = frame.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    frame.insert(0, "rank", frame["score"].rank(ascending=False, method="min").astype("Int64"))
    return frame.set_index("rank")


def place(published: pd.Series, value: float) -> str:
    """Where ``value`` ranks among ``published`` (ours counted in, N = published + 1), saying so when it ties:
    "5 of 26", or "tied 5-26 of 26" when 21 published models score the same."""
    better, same, of = int((published > value).sum()), int((published == value).sum()), len(published) + 1
    return f"tied {better + 1}-{better + 1 + same} of {of}" if same else f"{better + 1} of {of}"


def clem_ranking(ctx: ReportContext) -> pd.DataFrame:
    """Per game our runs played and per published clembench table: where each of our rows ranks by clemscore."""
    from triangulation.report.analyses.clembench import external_tables, is_game

    ours: dict[str, dict[str, float]] = {}
    for run in sorted(ctx.runs, key=lambda r: r.date):
        for task in run.results:
            value = metric_values(run.results[task]).get("clemscore")
            if is_game(task) and value is not None:
                ours.setdefault(task, {})[CHANCE_MODELS.get(run.model, run.model)] = value
    rows = []
    for ext in (e for e in ctx.externals if e.kind == "clembench"):
        published = external_tables(ext)["clemscore"]
        for game, models in sorted(ours.items()):
            if game not in published.columns:
                continue
            column = published[game].dropna()
            if column.empty:
                continue
            best = column.idxmax()
            for model, value in models.items():
                rows.append(
                    {
                        "game": game,
                        "model": model,
                        "clemscore": value,
                        "rank": int((column > value).sum()) + 1,
                        "of": len(column) + 1,
                        "place": place(column, value),
                        "published median": float(column.median()),
                        "published best": f"{best} ({column[best]:.1f})",
                        "source": f"--external {ext.label}",
                    }
                )
    return pd.DataFrame(rows)


def references_section(ctx: ReportContext) -> Section | Skipped:
    """The rankings, or why there are none."""
    sec = Section(TITLE)
    connections = connections_ranking(ctx)
    if connections is not None:
        table, metric = connections
        write_csv(table, ctx.out / "published_connections_ranking.csv")
        games = max(table["games"])
        sec.blocks.append(Table(table, f"NYT Connections: {metric} (mean over up to {games} games played here)"))
        if not (table["source"] == SOURCE_ANSWERS).any():
            sec.blocks.append(
                Text("No published replies: they come with the built Connections data (`triangulate data build`).", warn=True)
            )
        elif not (table["source"] == SOURCE_HUMANS).any():
            sec.blocks.append(
                Text("The novice and expert humans played none of these games (they played 100 and 50 of the 438).", note=True)
            )
    clem = ctx.externals and clem_ranking(ctx)
    if isinstance(clem, pd.DataFrame) and not clem.empty:
        write_csv(clem, ctx.out / "published_clembench_ranking.csv", index=False)
        sec.blocks.append(
            Table(
                clem.set_index("game"),
                "clembench games: rank by clemscore among the published models (place: k of N, or the range of a tie)",
                digits=2,
            )
        )
    if not sec.blocks:
        return Skipped(
            TITLE,
            "needs a static `connections` run with --log_samples, or clembench games played here and --external clembench-runs tables",
        )
    sec.blocks.insert(
        0,
        Text(
            "Published rows are scored by our code on the same items: the Connections replies of Claude 3.5 Sonnet and GPT-4o "
            "re-scored by the task's process_results on the games played here (the humans' published per-game scores where "
            "they played them); clembench's clemscore per game = % played / 100 x quality from the published tables, the "
            "rule our runs use (our runs at --limit play fewer instances). Reference rows: never part of a correlation.",
            note=True,
        ),
    )
    return sec
