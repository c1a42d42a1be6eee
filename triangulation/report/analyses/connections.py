"""NYT Connections analyses from ``--log_samples`` files (seed 001).

- Table 5: distribution of the unweighted clustering score (0-4 exactly-right groups) per model.
- Figure 7: share of gold groups clustered exactly (among the first four groups, as the score counts)
  AND reasoned right, by knowledge type (a group may carry several); Table 6: games per categorical
  reasoning score; Table 2: mean reasoning / clustering ratio. The reasoning check is a stand-in for
  the paper's human judge (:mod:`triangulation.report.analyses.connections_judge`: ``--judge_model`` or fastText);
  without one, only the clustering-only shares are shown, under their own name.
- Tables 3-4 (App. D.1): models against novice and expert humans on the games the humans played.
- Static (``connections``) versus interactive (``connections_interactive``) play per model, and
  game by game: lm-eval's ``--log_samples`` file of ``connections`` joined with play's episodes
  file of ``connections_interactive`` on the game id (``connections_by_game.csv``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from custom_metrics.connections import matched_names, reasoning_flags, score_connections
from custom_metrics.globalgroup import doc_pool
from plumbing.csvio import write_csv
from plumbing.errors import UserError
from plumbing.run_folder import is_episodes_file, is_samples_file
from triangulation.html import Image, Section, Table, Text
from triangulation.report import plots
from triangulation.report.analyses.connections_judge import GroupToJudge
from triangulation.report.analyses.globalgroup import gold_of
from triangulation.runs.results_io import NO_SCORE, Run
from triangulation.runs.samples import response_text, sample_records


def score_distribution(records: Iterable[tuple[str, str, dict[str, Any]]], metric: str = "unweighted_clustering") -> pd.DataFrame:
    """Model x clustering score: number of games. ``unweighted_clustering`` 0..4 (Table 5, Figure 3) or
    ``weighted_clustering`` 0..10 (Figure 4, "Spread of weighted clustering scores", seed 001 Sec. 5.1)."""
    top = 10 if metric == "weighted_clustering" else 4
    rows = [(m, r.get(metric)) for m, _t, r in records if r.get(metric) is not None]
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows, columns=["model", "score"])
    frame["score"] = frame["score"].astype(float).round().astype(int)
    table = frame.pivot_table(index="model", columns="score", aggfunc="size", fill_value=0)
    return table.reindex(columns=range(top + 1), fill_value=0)


#: seed 001 Table 1's columns: Word Form (Phonology/Orthography/Morphology, Multiword Expressions), Word
#: Meaning (Semantic Relations, Associative Relations, Encyclopedic), and Word Meaning + Word Form
FORM_LABELS = ("phonology", "orthography", "morphology")
TABLE1 = (
    "semantic relations",
    "encyclopedic",
    "multiword expressions",
    "associative relations",
    "phonology/orthography/morphology",
    "word meaning + word form",
)


def knowledge_counts(labels: Iterable[Sequence[str]]) -> pd.Series:
    """Seed 001 Table 1, "Distribution of different knowledge types required to categorize words": one count
    per gold group; a group with two labels (``semantic relations + morphological``) counts under
    "Word Meaning + Word Form", a single phonology / orthography / morphology label under the merged
    Word Form column; unlabelled groups are left out."""
    counts = dict.fromkeys(TABLE1, 0)
    for group in labels:
        key = table1_column(group)
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
    return pd.Series(counts, name="groups")


def table1_column(labels: Sequence[str]) -> str | None:
    """The Table 1 column of one gold group's knowledge labels (None when unlabelled): two labels ->
    "word meaning + word form", a phonology / orthography / morphology label -> the merged Word Form column."""
    names = [str(n).strip().lower() for n in labels if str(n).strip() and str(n) != "(none)"]
    if len(names) > 1:
        return "word meaning + word form"
    if not names:
        return None
    return "phonology/orthography/morphology" if names[0] in FORM_LABELS else names[0]


def judged_groups(records: Iterable[tuple[str, str, dict[str, Any]]], judge: Any = None) -> pd.DataFrame:
    """One row per (model, game, gold group): ``knowledge`` (list), ``clustered`` (exactly right among
    the answer's first four groups, as the clustering score counts) and ``reasoned`` (clustered and
    judged reasoned right; NaN without a judge). ``judge`` is an :class:`~triangulation.report.analyses.connections_judge.LLMJudge`
    (its ``judge_groups`` sees each clustered group with the whole response, all games in one batch) or
    a per-game :data:`~custom_metrics.connections.ReasoningCheck` on the names (the fastText proxy)."""
    parsed = []
    for number, (model, _task, rec) in enumerate(records):
        doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
        groups = sorted(gold_of(doc), key=lambda g: g.get("level", 0))
        gold = [[str(w) for w in g["words"]] for g in groups]
        response = response_text(rec)
        scored = score_connections(response, gold, pool=doc_pool(doc))  # as the lm-eval metric scores it
        parsed.append((model, str(doc.get("id") or f"sample-{number}"), groups, scored, response))
    verdicts: dict[tuple[int, int], bool] = {}
    if judge is not None and hasattr(judge, "judge_groups"):
        asked = [
            ((k, i), GroupToJudge(name, str(g.get("topic") or ""), tuple(map(str, g["words"])), response))
            for k, (_m, _id, groups, scored, response) in enumerate(parsed)
            for i, (g, name, right) in enumerate(zip(groups, matched_names(scored), scored["right"]))
            if right
        ]
        verdicts = dict(zip((key for key, _ in asked), judge.judge_groups(item for _, item in asked)))
    rows = []
    for k, (model, game, groups, scored, _response) in enumerate(parsed):
        if judge is None:
            reasoned = [math.nan] * len(groups)
        elif hasattr(judge, "judge_groups"):
            reasoned = [bool(right) and verdicts.get((k, i), False) for i, right in enumerate(scored["right"])]
        else:
            reasoned = reasoning_flags(scored, [str(g.get("topic") or "") for g in groups], judge)
        for group, clustered, ok in zip(groups, scored["right"], reasoned):
            rows.append(
                {
                    "model": model,
                    "id": game,
                    "knowledge": list(group.get("knowledge") or ["(none)"]),
                    "clustered": float(clustered),
                    "reasoned": float(ok),
                }
            )
    return pd.DataFrame(rows, columns=["model", "id", "knowledge", "clustered", "reasoned"])


def knowledge_accuracy(groups: pd.DataFrame, column: str = "reasoned") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 001 Figure 7: "The categories were only counted as correct if the model both clustered all the
    words correctly and justified its reasoning" (Sec. 6.1). Knowledge type x model: the share of gold
    groups correct (``column="reasoned"``; ``"clustered"`` gives the clustering-only variant) and the
    count correct (shown above each bar in the paper)."""
    data = groups.dropna(subset=[column]).explode("knowledge")
    if data.empty:
        return pd.DataFrame(), pd.DataFrame()
    share = data.pivot_table(index="knowledge", columns="model", values=column, aggfunc="mean")
    count = data.pivot_table(index="knowledge", columns="model", values=column, aggfunc="sum")
    return share, count


def per_game_scores(groups: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, game): unweighted clustering score and categorical reasoning score."""
    return (
        groups.groupby(["model", "id"], sort=False)
        .agg(unweighted=("clustered", "sum"), reasoning=("reasoned", lambda c: c.sum(min_count=1)))
        .reset_index()
    )


def reasoning_distribution(games: pd.DataFrame) -> pd.DataFrame:
    """Seed 001 Table 6: "the frequency of categorical reasoning scores (the categories correctly grouped
    and reasoned) for each model": model x score 0..4, number of games."""
    data = games.dropna(subset=["reasoning"])
    if data.empty:
        return pd.DataFrame()
    table = data.assign(score=data["reasoning"].round().astype(int)).pivot_table(
        index="model", columns="score", aggfunc="size", fill_value=0
    )
    return table.reindex(columns=range(5), fill_value=0)


def reasoning_ratio(games: pd.DataFrame) -> pd.Series:
    """Seed 001 Table 2 (Sec. 6.3): "Average categorical reasoning to unweighted clustering score ratio by
    model", the mean of reasoning / clustering over the games with at least one exactly-right group."""
    data = games.dropna(subset=["reasoning"])
    data = data[data["unweighted"] > 0]
    return (data["reasoning"] / data["unweighted"]).groupby(data["model"]).mean().rename("average ratio")


def human_comparison(games: pd.DataFrame, humans: list[dict[str, Any]], label: str) -> pd.DataFrame:
    """Seed 001 Tables 3-4 (App. D.1): "The frequency of clustering scores for novice human players in 100
    games and scores for Claude 3.5 Sonnet in the same games". Score 0..4 x (each model, ``label``):
    number of games, plus rows ``games`` and ``mean``, over the games both the humans and that model
    played (a model with fewer games is compared on those only; the humans' column uses all theirs)."""
    human = pd.DataFrame(humans)
    if human.empty or games.empty:
        return pd.DataFrame()
    columns = {}
    for model, own in games.groupby("model", sort=True):
        common = own[own["id"].isin(set(human["id"]))]
        if not common.empty:
            columns[str(model)] = common["unweighted"].round().astype(int)
    if not columns:
        return pd.DataFrame()
    columns[label] = human["unweighted_clustering"].astype(int)
    counts = pd.DataFrame({name: values.value_counts().reindex(range(5), fill_value=0) for name, values in columns.items()})
    table = counts.astype(object)  # counts stay whole numbers beside the float "mean" row (no dtype upcast)
    table.loc["games"] = [len(v) for v in columns.values()]
    table.loc["mean"] = [float(v.mean()) for v in columns.values()]
    table.index.name = "unweighted clustering score"
    return table


def static_vs_interactive(runs: Iterable[Run]) -> pd.DataFrame:
    """Model x {connections, connections_interactive}: each task's main metric where both were run."""
    table: dict[str, dict[str, float]] = {}
    for run in runs:
        for task in ("connections", "connections_interactive"):
            if task in run.results:
                name, value = run.main.get(task, NO_SCORE)
                table.setdefault(run.model, {})[f"{task} ({name})"] = value
    frame = pd.DataFrame.from_dict(table, orient="index")
    if frame.shape[1] < 2:
        return pd.DataFrame()
    frame.index.name = "model"
    return frame.dropna()


#: per-game scores compared: lm-eval's per-sample metrics of ``connections``, play's episode scores
STATIC_KEYS = ("unweighted_clustering", "weighted_clustering", "perfect_solve")
INTERACTIVE_KEYS = ("groups_found", "weighted_clustering", "solved", "mistakes", "one_away_recoveries")


def by_game(runs: Iterable[Run]) -> pd.DataFrame:
    """One row per (model, game) played both ways (lm-eval sample ``doc.id`` = play episode ``id``), in the
    static file's order: ``model``, ``id``, ``static_<metric>`` and ``interactive_<metric>``. Per model the
    last run of each task counts; failed episodes and a truncated last episode line are left out."""
    static: dict[str, list[Mapping[str, Any]]] = {}
    episodes: dict[str, list[Mapping[str, Any]]] = {}
    for run in runs:
        for task, files, kind in (("connections", static, is_samples_file), ("connections_interactive", episodes, is_episodes_file)):
            path = run.samples.get(task)
            if path is not None and kind(path):
                files[run.model] = run.records.get(task, [])
    rows = []
    for model in sorted(static.keys() & episodes.keys()):
        played = {str(r["id"]): r for r in episodes[model] if not r.get("failed")}
        for sample in static[model]:
            doc = sample.get("doc") if isinstance(sample.get("doc"), dict) else {}
            game = played.get(str(doc.get("id")))
            if game is None:
                continue
            scores = game.get("scores") or {}
            row: dict[str, Any] = {"model": model, "id": str(doc["id"])}
            row.update({f"static_{k}": sample.get(k) for k in STATIC_KEYS})
            row.update({f"interactive_{k}": scores.get(k) for k in INTERACTIVE_KEYS})
            rows.append(row)
    return pd.DataFrame(rows)


def by_game_summary(games: pd.DataFrame) -> pd.DataFrame:
    """Model x mean weighted clustering and solve rate, static and interactive, over the games played both ways."""
    columns = {
        "static_weighted_clustering": "weighted clustering, static",
        "interactive_weighted_clustering": "weighted clustering, interactive",
        "static_perfect_solve": "solved, static",
        "interactive_solved": "solved, interactive",
    }
    means = games.groupby("model")[list(columns)].agg(lambda col: pd.to_numeric(col, errors="coerce").mean()).rename(columns=columns)
    means.insert(0, "games", games.groupby("model").size())
    return means


def build(runs: list[Run], outdir: Path, judge: Any = None) -> Section | None:
    """The Connections section; ``judge`` checks categorical reasoning (:mod:`triangulation.report.analyses.connections_judge`)."""
    records = [r for r in sample_records(runs, "connections") if r[1] == "connections"]
    both = static_vs_interactive(runs)
    games = by_game(runs)
    if not records and both.empty and games.empty:
        return None
    section = Section("NYT Connections (seed 001)")
    dist = score_distribution(records)
    if not dist.empty:
        write_csv(dist, outdir / "connections_score_distribution.csv")
        section.blocks.append(Table(dist, "Games per unweighted clustering score (Table 5)", digits=0))
        share = dist.div(dist.sum(axis=1), axis=0).T
        section.blocks.append(
            Image(
                plots.grouped_bars(
                    share,
                    outdir / "connections_score_distribution.png",
                    "Connections: share of games by clustering score",
                    "share of games",
                ),
                "distribution",
            )
        )
    weighted = score_distribution(records, "weighted_clustering")
    if not weighted.empty:
        write_csv(weighted, outdir / "connections_weighted_distribution.csv")
        section.blocks.append(Table(weighted, "Games per weighted clustering score (Figure 4)", digits=0))
    if records:
        docs = {str(r.get("doc", {}).get("id")): r.get("doc") or {} for _m, _t, r in records}
        table1 = knowledge_counts(g.get("knowledge") or [] for doc in docs.values() for g in gold_of(doc))
        section.blocks.append(
            Table(table1.to_frame(), f"Gold groups per knowledge type over the {len(docs)} games played (Table 1)", digits=0)
        )
        section.blocks += reasoning_blocks(records, judge, outdir)
        section.blocks += human_blocks(records, outdir)
    if not both.empty:
        write_csv(both, outdir / "connections_static_vs_interactive.csv")
        section.blocks.append(Table(both, "Static versus interactive Connections"))
    if not games.empty:
        write_csv(games, outdir / "connections_by_game.csv", index=False)
        section.blocks.append(
            Table(by_game_summary(games), "Static versus interactive Connections, games played both ways (connections_by_game.csv)")
        )
    return section


def reasoning_blocks(records: list[tuple[str, str, dict[str, Any]]], judge: Any, outdir: Path) -> list:
    """Figure 7, Table 6 and Table 2 with the judge named; without one, the clustering-only shares."""
    groups = judged_groups(records, judge)
    if groups.empty:
        return []
    if judge is None:
        share, _count = knowledge_accuracy(groups, "clustered")
        write_csv(share, outdir / "connections_knowledge_clustered_only.csv")
        return [
            Text(
                "No reasoning judge (give --judge_model, or install fastText vectors for the proxy): Figure 7 and Table 6 need one. "
                "Below, the share of groups clustered exactly, without the reasoning check (not Figure 7).",
                note=True,
            ),
            Table(share, "Share of groups clustered exactly by knowledge type (clustering only, not Figure 7)"),
        ]
    name = getattr(judge, "name", "reasoning judge")
    blocks: list = [Text(f"Reasoning judged by: {name}. Seed 001 used a human judge (Sec. 4.3.2).", note=True)]
    share, count = knowledge_accuracy(groups, "reasoned")
    write_csv(share, outdir / "connections_knowledge.csv")
    write_csv(count, outdir / "connections_knowledge_counts.csv")
    blocks += [
        Table(share, "Share of groups clustered exactly and reasoned right, by knowledge type (Figure 7)"),
        Table(count, "Groups clustered exactly and reasoned right (Figure 7's bar labels)", digits=0),
        Image(
            plots.grouped_bars(
                share, outdir / "connections_knowledge.png", "Connections: groups clustered and reasoned right by knowledge type", "share"
            ),
            "knowledge",
        ),
    ]
    per_game = per_game_scores(groups)
    table6 = reasoning_distribution(per_game)
    if not table6.empty:
        write_csv(table6, outdir / "connections_reasoning_distribution.csv")
        ratio = reasoning_ratio(per_game).to_frame()
        write_csv(ratio, outdir / "connections_reasoning_ratio.csv")
        blocks += [
            Table(table6, "Games per categorical reasoning score (Table 6)", digits=0),
            Table(ratio, "Average categorical reasoning / unweighted clustering ratio (Table 2)"),
        ]
    return blocks


def human_blocks(records: list[tuple[str, str, dict[str, Any]]], outdir: Path) -> list:
    """Tables 3-4: models against the novice and expert humans on the same games (from the built data)."""
    try:
        from datasets_build.connections import load_human_scores

        humans = load_human_scores()
    except UserError:  # the connections dataset is not built here
        humans = {}
    if not humans:
        return []
    per_game = per_game_scores(judged_groups(records))
    blocks: list = []
    for level, caption in (("novice", "Table 3"), ("expert", "Table 4")):
        table = human_comparison(per_game, humans.get(level) or [], f"{level} humans")
        if table.empty:
            continue
        write_csv(table, outdir / f"connections_humans_{level}.csv")
        shares = table.loc[list(range(5))].div(table.loc["games"], axis=1)
        blocks += [
            Table(
                table,
                f"Unweighted clustering scores against {level} humans on their games ({caption}; the humans' weighted scores, Figures 10-11, "
                "are published in scoring/*_scores.csv but not in the data this build reads, and the novice column looks misaligned)",
            ),
            Image(
                plots.grouped_bars(
                    shares,
                    outdir / f"connections_humans_{level}.png",
                    f"Connections: models vs {level} humans, same games",
                    "share of games",
                ),
                f"{level} humans",
            ),
        ]
    return blocks
