"""Published vs fresh: per model and benchmark, the score on the published items against the score on their
matched fresh twins (issues 33 and 42; ``<task>`` vs ``<task>_fresh``, :mod:`datasets_build.matched`).

Beyond the papers (docs/FIDELITY.md, "published vs fresh"): a model that has seen the published items may score
higher on them than on new items of the same difficulty. The design is paired: fresh item i is the twin of
published item i (same index, lm-eval ``doc_id``; same episode ``id`` in play). Per model and benchmark the section
compares the two sides over the pairs both sides hold (:func:`plumbing.stats.paired_delta`): delta = mean over
pairs of published - fresh, its 95% paired-bootstrap interval, the one-sided sign-flip p-value of delta > 0, and
the Benjamini-Hochberg q-value over every benchmark x model row of the report (:func:`plumbing.stats.
benjamini_hochberg`). A row is flagged "published favoured" when q <= :data:`FDR` and delta > 0. The published
and fresh scores and n of a row come from the same pairs as its delta. Unequal item sets are restricted to the
pairs present and said (column ``pairs note``); sides run with different settings (few-shot, generation
arguments, the play seed or options) are refused, not compared. Zero-variance rows (every pair differs by the
same amount, or fewer than 2 pairs) have no interval: "not estimable". ``leaderboard.csv`` gets a
``<benchmark> delta`` column per benchmark; the fresh tasks are no benchmarks of their own (the leaderboard and
the correlations leave them out: :func:`datasets_build.matched.published_of`).

Item scores: an lm-eval sample's value of the main metric; a played episode's value, where the main metric
is clembench's ``clemscore`` its per-episode part, ``main_score`` with an aborted episode counted 0 (so the
episodes' mean is the clemscore: % played / 100 x quality, seed 002 §2).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from datasets_build.fresh_names import published_of
from datasets_build.matched import DEFAULT_SEED, PRIVATE
from plumbing.csvio import write_csv
from plumbing.jsonio import read_json
from plumbing.stats import benjamini_hochberg, paired_delta
from triangulation.html import Section, Table, Text
from triangulation.report.cells import keyed_item_records
from triangulation.report.leaderboard import is_chance
from triangulation.runs.results_io import NO_SCORE, Run

TITLE = "Published vs fresh (contamination check; ours)"
DELTA_SUFFIX = " delta"
N_BOOT = 2000
#: the false discovery rate the flags are controlled at (Benjamini-Hochberg over every row of a report)
FDR = 0.05
FLAG = "published favoured"
NOT_ESTIMABLE = "not estimable"
#: the task settings both sides must share (lm-eval ``configs[task]`` and play ``configs[task]`` keys)
SETTINGS_KEYS = ("num_fewshot", "generation_kwargs", "fewshot_config", "gen_kwargs", "task_args")
#: the run settings both sides must share (the results file's ``config``: seeds, model arguments)
RUN_SETTINGS_KEYS = ("seed", "random_seed", "numpy_seed", "torch_seed", "fewshot_seed", "model_args", "gen_kwargs")

HOW_TO_READ = (
    "Each row compares a model's score on a benchmark's published items with its score on freshly generated twins "
    "of matched difficulty (the task `<benchmark>_fresh`: fresh item i is the twin of published item i). Both "
    "scores, n and delta = published - fresh are over the same item pairs; the interval is a 95% paired bootstrap "
    f"(whole pairs resampled, {N_BOOT} resamples), p the one-sided sign-flip test of delta > 0, and q its "
    "Benjamini-Hochberg value over every benchmark x model row of this report; 'published favoured' marks q <= "
    f"{FDR} (so at most about {FDR:.0%} of the flags are expected to be false when no model is contaminated). "
    "'not estimable' marks rows without an interval (every pair differs by the same amount, e.g. both sides all 0, "
    "or fewer than 2 pairs). What a flag can mean: the model does better on the published items than on new items "
    "made the same way, as a model that has seen them would; or the fresh items are harder in a way the matching did "
    "not measure (the chance player's rows show only what depends on the game's shape, not a difficulty mismatch). "
    "What it cannot mean: proof that the model was trained on the test set. No flag is no proof of a clean model: "
    "few pairs give wide intervals, and a model may have memorised material the fresh items share with the "
    "published ones: GlobalGroup's fresh groups are new word sets (none equals a published group; each keeps at most "
    "2 of its topic's published words, the rest come from an open thesaurus), so memorised games and memorised "
    "groups can both show, but memorised topics and the word pairs kept cannot, and topics the thesaurus could not "
    "extend are missing from the fresh side; Taboo's fresh targets appear in no clembench "
    "file; plain Wordle has no twin (its published episodes all send one prompt). The fresh side's dataset card says what the items were matched on and which seed made them "
    "(the public default seed: anyone can regenerate those twins, so they stay unseen only until a model is trained "
    "on them; a lab's private seed keeps them unseen). 'Min-K% AUC' (where `triangulate probe` ran) is a second, "
    "independent signal: how well the Min-K% Prob of the item text (Shi et al. 2023) tells published items from "
    "their twins; 0.5 is chance, and above 0.5 the published text looks more familiar to the model."
)


def episode_value(record: Mapping[str, Any], metric: str) -> float:
    """One item's value of ``metric`` (see the module docstring for clembench's clemscore)."""
    value = record.get(metric)
    if value is None and metric == "clemscore" and "main_score" in record:
        aborted = record.get("aborted")
        value = 0.0 if aborted else record.get("main_score")
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, (int, float)) else math.nan


def keyed_scores(run: Run, task: str, metric: str) -> dict[str, float]:
    """Item key -> the item's value of ``metric`` (the first record of a key wins)."""
    out: dict[str, float] = {}
    for key, record in keyed_item_records(run, task):
        out.setdefault(key, episode_value(record, metric))
    return out


def fresh_seed(run: Run, task: str) -> str:
    """Which seed made the fresh side, never a private seed's value: ``private``, ``public default (seed N)``,
    ``public (seed N)``, or ``unknown``; read from the first item (a GlobalGroup doc's ``id``
    ``<config>_fresh<seed>_<i>``, a Taboo episode instance's ``fresh_seed``)."""
    first = next(iter(run.records.get(task, [])), None)
    if not isinstance(first, Mapping):
        return "unknown"
    instance = first.get("instance") if isinstance(first.get("instance"), Mapping) else {}
    doc = first.get("doc") if isinstance(first.get("doc"), Mapping) else {}
    found = re.search(r"_fresh(private|\d+)_", str(doc.get("id", ""))) or re.fullmatch(
        r"(private|seed(\d+))", str(instance.get("fresh_seed", ""))
    )
    if found is None:
        return "unknown"
    label = found.group(1)
    if label == PRIVATE:
        return "private"
    seed = int(label.removeprefix("seed"))
    return f"public default (seed {seed})" if seed == DEFAULT_SEED else f"public (seed {seed})"


def membership_columns(run: Run, bench: str) -> dict[str, Any]:
    """The Min-K% Prob probe's AUC and interval (``triangulate probe`` writes ``membership_<task>.json`` beside the
    model's results); empty when the model was not probed."""
    path = run.path.parent / f"membership_{bench}.json"
    if not path.is_file():
        return {}
    probe = read_json(path)
    return {"Min-K% AUC": probe.get("auc"), "AUC 95% low": probe.get("low"), "AUC 95% high": probe.get("high")}


def latest_runs(runs: list[Run]) -> dict[tuple[str, str], Run]:
    """(model, task) -> the latest run that holds the task's item records."""
    out: dict[tuple[str, str], Run] = {}
    for run in sorted(runs, key=lambda r: r.date):
        for task in run.results:
            if task in run.samples:
                out[(run.model, task)] = run
    return out


def settings_difference(pub_run: Run, bench: str, fresh_run: Run, task: str) -> str:
    """'' when both sides ran with the same settings (:data:`SETTINGS_KEYS` of the task's config,
    :data:`RUN_SETTINGS_KEYS` of the results file's), else what differs."""
    sides = [
        (pub_run.configs.get(bench, {}), fresh_run.configs.get(task, {}), SETTINGS_KEYS),
        (pub_run.config, fresh_run.config, RUN_SETTINGS_KEYS),
    ]
    return ", ".join(f"{k} {pub.get(k)!r} vs {fresh.get(k)!r}" for pub, fresh, keys in sides for k in keys if pub.get(k) != fresh.get(k))


def pairs_note(pub: Mapping[str, float], fresh: Mapping[str, float], common: list[str]) -> str:
    """'' when both sides hold the same items, else what was left out."""
    if len(common) == len(pub) == len(fresh):
        return ""
    return f"published {len(pub)} items, fresh {len(fresh)}: compared on the {len(common)} pairs both hold"


def _row(model: str, bench: str, metric: str, pub: Mapping[str, float], fresh: Mapping[str, float], n_boot: int) -> dict:
    common = sorted(set(pub) & set(fresh), key=_order)
    paired = paired_delta([pub[k] for k in common], [fresh[k] for k in common], n_boot=n_boot)
    kept = [k for k in common if not (math.isnan(pub[k]) or math.isnan(fresh[k]))]
    return {
        "model": model,
        "benchmark": bench,
        "metric": metric,
        "published": _mean([pub[k] for k in kept]),
        "fresh": _mean([fresh[k] for k in kept]),
        "pairs": paired.pairs,
        "delta": paired.delta,
        "95% low": paired.low,
        "95% high": paired.high,
        "p": paired.p,
        "interval": "" if paired.estimable else NOT_ESTIMABLE,
        "pairs note": pairs_note(pub, fresh, common),
    }


def _order(key: str) -> tuple[int, Any]:
    return (0, int(key)) if key.lstrip("-").isdigit() else (1, key)


def delta_rows(runs: list[Run], n_boot: int = N_BOOT) -> pd.DataFrame:
    """One row per model and benchmark that has both sides' item records, with its q-value and flag (see the
    module docstring); sides run with different settings get a row that says so and no numbers."""
    by_cell = latest_runs(runs)
    rows = []
    for (model, task), fresh_run in sorted(by_cell.items()):
        bench = published_of(task)
        if bench is None or (model, bench) not in by_cell:
            continue
        pub_run = by_cell[(model, bench)]
        metric, _ = pub_run.main.get(bench, NO_SCORE)
        differ = settings_difference(pub_run, bench, fresh_run, task)
        if differ:
            rows.append({"model": model, "benchmark": bench, "metric": metric, "pairs": 0, "refused": f"settings differ: {differ}"})
            continue
        row = _row(model, bench, metric, keyed_scores(pub_run, bench, metric), keyed_scores(fresh_run, task, metric), n_boot)
        rows.append({**row, "fresh seed": fresh_seed(fresh_run, task), **membership_columns(pub_run, bench)})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    for column in ("p", "delta", "refused", "interval", "pairs note"):
        if column not in frame:
            frame[column] = math.nan if column in ("p", "delta") else ""
    frame[["refused", "interval", "pairs note"]] = frame[["refused", "interval", "pairs note"]].fillna("")
    frame["q"] = benjamini_hochberg(list(frame["p"]))
    frame["flag"] = [FLAG if q <= FDR and d > 0 else "" for q, d in zip(frame["q"], frame["delta"])]
    frame["reference"] = ["chance" if is_chance(m) else "" for m in frame["model"]]
    return frame


def _mean(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def add_delta_columns(out: Path, rows: pd.DataFrame) -> None:
    """``<benchmark> delta`` columns in ``leaderboard.csv`` / ``.parquet`` (written before the sections run). The
    board is read back from the parquet file, whose column types are the written ones (issue 39 item 11: the CSV
    through pandas' type guessing turned model ``000500`` into ``500`` and ``NA`` into an empty cell)."""
    parquet = out / "leaderboard.parquet"
    if rows.empty or not parquet.is_file():
        return
    board = pd.read_parquet(parquet)
    for bench, part in rows.groupby("benchmark", sort=True):
        board[bench + DELTA_SUFFIX] = board["fullname"].map(dict(zip(part["model"], part["delta"])))
    write_csv(board, out / "leaderboard.csv", index=False)
    board.to_parquet(parquet, index=False)


def build(runs: list[Run], out: Path) -> Section | None:
    """The section (None when no model has both a benchmark and its fresh twin); writes ``published_vs_fresh.csv``."""
    rows = delta_rows(runs)
    if rows.empty:
        return None
    write_csv(rows, out / "published_vs_fresh.csv", index=False)
    add_delta_columns(out, rows)
    lines = [Text(HOW_TO_READ, note=True)]
    flagged = rows[(rows["flag"] != "") & (rows["reference"] == "")]
    if not flagged.empty:
        pairs = ", ".join(f"{m} on {b} (q = {q:.3g})" for m, b, q in zip(flagged["model"], flagged["benchmark"], flagged["q"]))
        lines.append(Text(f"Published items favoured at a false discovery rate of {FDR}: {pairs}."))
    chance_off = rows[(rows["reference"] == "chance") & (rows["flag"] != "")]
    if not chance_off.empty:
        lines.append(
            Text(
                f"The chance player is flagged on {', '.join(chance_off['benchmark'])}: the game's shape differs between the sides there.",
                warn=True,
            )
        )
    for column, what in (("pairs note", "compared on the pairs both sides hold"), ("refused", "not compared")):
        odd = rows[rows[column] != ""]
        if not odd.empty:
            lines.append(
                Text(
                    f"{what.capitalize()}: "
                    + "; ".join(f"{m} on {b}: {v}" for m, b, v in zip(odd["model"], odd["benchmark"], odd[column]))
                    + ".",
                    warn=True,
                )
            )
    return Section(
        TITLE, [*lines, Table(rows.set_index(["model", "benchmark"]), "published vs fresh, delta = published - fresh over item pairs")]
    )


def section(ctx) -> list:
    """The report builder (:data:`triangulation.report.sections.SECTIONS`); listed as skipped, with the reason, when
    fresh twins were run but no model has both sides' item records."""
    from triangulation.report.context import Skipped

    built = build(ctx.runs, ctx.out)
    if built is not None:
        return [built]
    if any(published_of(task) for run in ctx.runs for task in run.results):
        return [Skipped(TITLE, "needs a model's item records of a task and its _fresh twin (lm-eval: --log_samples)")]
    return []
