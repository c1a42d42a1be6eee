"""NYT Connections analyses from ``--log_samples`` files (seed 001).

- Table 5: distribution of the unweighted clustering score (0-4 exactly-right groups) per model.
- Figure 7: share of gold groups solved exactly, by knowledge type (a group may carry several).
- Static (``connections``) versus interactive (``connections_interactive``) play per model, and
  game by game: lm-eval's ``--log_samples`` file of ``connections`` joined with play's
  ``episodes_connections_interactive.jsonl`` on the game id (``connections_by_game.csv``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from custom_metrics.matching import exact_flags, key_set
from custom_metrics.parsing import parse_groups
from plumbing.jsonio import iter_jsonl

from triangulation import plots
from triangulation.analyses_globalgroup import gold_of
from triangulation.html import Image, Section, Table
from triangulation.results_io import Run, main_metric
from triangulation.samples import response_text, sample_records


def score_distribution(records: Iterable[tuple[str, str, dict[str, Any]]]) -> pd.DataFrame:
    """Model x unweighted clustering score (0..4): number of games."""
    rows = [(m, r.get("unweighted_clustering")) for m, _t, r in records if r.get("unweighted_clustering") is not None]
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows, columns=["model", "score"])
    frame["score"] = frame["score"].astype(float).round().astype(int)
    table = frame.pivot_table(index="model", columns="score", aggfunc="size", fill_value=0)
    return table.reindex(columns=range(5), fill_value=0)


def knowledge_accuracy(records: Iterable[tuple[str, str, dict[str, Any]]]) -> pd.DataFrame:
    """Knowledge type x model: share of gold groups some predicted group matches exactly (seed 001 Fig. 7)."""
    rows = []
    for model, _task, rec in records:
        doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
        groups = gold_of(doc)
        predicted = [key_set(g.words) for g in parse_groups(response_text(rec), list(doc.get("words") or []) or None, n_groups=len(groups) or None)]
        flags = exact_flags([key_set(map(str, g["words"])) for g in groups], predicted)
        for group, solved in zip(groups, flags):
            for kind in group.get("knowledge") or ["(none)"]:
                rows.append({"model": model, "knowledge": kind, "solved": float(solved)})
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).pivot_table(index="knowledge", columns="model", values="solved", aggfunc="mean")


def static_vs_interactive(runs: Iterable[Run], overrides: dict[str, Any] | None = None) -> pd.DataFrame:
    """Model x {connections, connections_interactive}: each task's main metric where both were run."""
    table: dict[str, dict[str, float]] = {}
    for run in runs:
        for task in ("connections", "connections_interactive"):
            if task in run.results:
                name, value = main_metric(task, run, overrides)
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
    static: dict[str, Path] = {}
    episodes: dict[str, Path] = {}
    for run in runs:
        for task, files, prefix in (("connections", static, "samples_"), ("connections_interactive", episodes, "episodes_")):
            path = run.samples.get(task)
            if path is not None and Path(path).name.startswith(prefix):
                files[run.model] = Path(path)
    rows = []
    for model in sorted(static.keys() & episodes.keys()):
        played = {str(r["id"]): r for r in iter_jsonl(episodes[model], skip_bad_last_line=True) if "id" in r and not r.get("failed")}
        for sample in iter_jsonl(static[model]):
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


def build(runs: list[Run], outdir: Path, overrides: dict[str, Any] | None = None) -> Section | None:
    records = [r for r in sample_records(runs, "connections") if r[1] == "connections"]
    both = static_vs_interactive(runs, overrides)
    games = by_game(runs)
    if not records and both.empty and games.empty:
        return None
    section = Section("NYT Connections (seed 001)")
    dist = score_distribution(records)
    if not dist.empty:
        dist.to_csv(outdir / "connections_score_distribution.csv")
        section.blocks.append(Table(dist, "Games per unweighted clustering score (Table 5)", digits=0))
        share = dist.div(dist.sum(axis=1), axis=0).T
        section.blocks.append(Image(plots.grouped_bars(share, outdir / "connections_score_distribution.png", "Connections: share of games by clustering score", "share of games"), "distribution"))
    if records:
        know = knowledge_accuracy(records)
        if not know.empty:
            know.to_csv(outdir / "connections_knowledge.csv")
            section.blocks += [Table(know, "Share of groups solved by knowledge type (Figure 7)"),
                               Image(plots.grouped_bars(know, outdir / "connections_knowledge.png", "Connections: groups solved by knowledge type", "share solved"), "knowledge")]
    if not both.empty:
        both.to_csv(outdir / "connections_static_vs_interactive.csv")
        section.blocks.append(Table(both, "Static versus interactive Connections"))
    if not games.empty:
        games.to_csv(outdir / "connections_by_game.csv", index=False)
        section.blocks.append(Table(by_game_summary(games), "Static versus interactive Connections, games played both ways (connections_by_game.csv)"))
    return section
