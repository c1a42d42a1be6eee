"""Seed 001 Figure 7 for the two models whose replies and human verdicts are published (Claude 3.5 Sonnet,
GPT-4o): "Percentage of categories from each knowledge type correctly classified and reasoned by the models
across 438 games. The counts of categories correctly reasoned are displayed above each bar" (Sec. 6.1; "The
categories were only counted as correct if the model both clustered all the words correctly and justified its
reasoning in a manner semantically analogous to the gold NYT Connections-provided category name").

The verdicts are the authors' own: ``categorical_score`` in ``results/<model>.json`` (§4.3.2, "decided manually
by a human judge"), keyed ``<model's category name>_#_<gold category name>`` with "Yes"/"No", recorded only for
the groups the model clustered exactly. A gold category is correct when its verdict is "Yes"; the knowledge
types and their merged columns are Table 1's (``game_with_knowledge_taxonomy.json``, :func:`table1_column`), the
denominators the categories of each type over the 438 games.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from plumbing.csvio import write_csv
from plumbing.errors import UserError
from triangulation.html import Image, Section, Table, Text
from triangulation.report import plots
from triangulation.report.analyses.connections import TABLE1, table1_column
from triangulation.report.context import ReportContext, Skipped

TITLE = "Connections Figure 7 from the published human verdicts (seed 001, Claude 3.5 Sonnet and GPT-4o)"
CONNECTIONS_TASKS = ("connections", "connections_interactive")


def verdicts_by_topic(categorical_score: Mapping[str, Any]) -> dict[str, bool]:
    """``{"<name>_#_<gold name>": "Yes"}`` -> {GOLD NAME (upper case): True}."""
    return {str(k).split("_#_")[-1].strip().upper(): str(v).strip().lower() == "yes" for k, v in categorical_score.items()}


def figure7_rows(games: Sequence[Mapping[str, Any]], answers: Mapping[str, Sequence[Mapping[str, Any]]]) -> pd.DataFrame:
    """One row per (model, gold category) of the games answered: model, game id, Table 1 column, correct."""
    by_id = {str(g["id"]): g for g in games}
    rows = []
    for model, replies in answers.items():
        for reply in replies:
            game = by_id.get(str(reply.get("id")))
            if game is None:
                continue
            verdicts = verdicts_by_topic(reply.get("categorical_score") or {})
            for group in game["groups"]:
                column = table1_column(group.get("knowledge") or [])
                if column is not None:
                    correct = verdicts.get(str(group["topic"]).strip().upper(), False)
                    rows.append({"model": model, "id": game["id"], "knowledge": column, "correct": bool(correct)})
    return pd.DataFrame(rows, columns=["model", "id", "knowledge", "correct"])


def figure7_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Knowledge type x (model share %, model count): Figure 7's bars and the counts above them."""
    if rows.empty:
        return pd.DataFrame()
    grouped = rows.groupby(["knowledge", "model"])["correct"]
    share, count = grouped.mean().unstack() * 100, grouped.sum().unstack().astype(int)
    order = [k for k in TABLE1 if k in share.index]
    table = pd.concat({"percent": share.loc[order], "count": count.loc[order]}, axis=1)
    table.index.name = "knowledge type"
    return table


def build(ctx: ReportContext) -> list[Section | Skipped]:
    """The section, when a run played Connections (the published figure is shown beside it)."""
    if not any(task in run.results for run in ctx.runs for task in CONNECTIONS_TASKS):
        return []
    from datasets_build.connections import load_published_answers
    from datasets_build.load import load_connections

    try:
        answers = load_published_answers()
        verdicts = any(reply.get("categorical_score") for replies in answers.values() for reply in replies)
        games = load_connections()["test"].to_list() if verdicts else []
    except UserError as exc:  # the dataset is not built here
        return [Skipped(TITLE, str(exc))]
    if not verdicts:
        reason = "the built connections dataset has no published verdicts: run `triangulate data build --datasets connections`"
        return [Skipped(TITLE, reason)]
    table = figure7_table(figure7_rows(games, answers))
    write_csv(table, ctx.out / "connections_fig7_published.csv")
    note = (
        "From the authors' own human verdicts (categorical_score in results/<model>.json): a category is correct when "
        "the model clustered it exactly and the judge said its reasoning matched the gold name. Percent of each "
        "knowledge type's categories over the 438 games; count = categories correct (the numbers above Figure 7's bars)."
    )
    image = plots.grouped_bars(
        table["percent"], ctx.out / "connections_fig7_published.png", "Seed 001 Figure 7 (published verdicts)", "% correct"
    )
    return [Section(TITLE, [Text(note, note=True), Table(table, "Figure 7 (published verdicts)"), Image(image, "Figure 7")])]
