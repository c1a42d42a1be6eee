"""The top of the report: the leaderboard, the Kendall section with bootstrap intervals, and the
sentence an analysis shows instead of an empty figure when it has too few models.

:func:`triangulation.report.build.build_report` calls these; analyses further down the page live in their
own ``analyses_*`` modules.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from triangulation.html import Image, Leaderboard, Section, Table, Text
from triangulation.report import plots
from triangulation.report.kendall import MIN_MODELS, WARN_BELOW, kendall_pairs
from triangulation.report.leaderboard import CHANCE_MODELS, leaderboard, stderr_table, without_chance
from triangulation.runs.results_io import Run

#: rows of the benchmark-pair table on the page (kendall_pairs.csv has all)
MAX_PAIRS_SHOWN = 60


def needs_models(what: str, needed: int, has: int) -> Text:
    """The sentence shown instead of an empty table or figure: "<what> needs N models, has M"."""
    return Text(f"{what} needs {needed} models, has {has}: add results of more models or --external tables.", warn=True)


def column_groups(columns: list[str], external_labels: list[str]) -> list[tuple[str, list[str]]]:
    """(caption, columns): the results' benchmarks first, then one group per --external table (``LABEL/...``),
    so each leaderboard holds the models that share its benchmarks instead of one sparse table."""
    external = {label: [c for c in columns if c.startswith(f"{label}/")] for label in external_labels}
    taken = {c for cols in external.values() for c in cols}
    groups = [("evaluated here: model x benchmark", [c for c in columns if c not in taken])]
    groups += [(f"--external {label}: model x benchmark", cols) for label, cols in external.items()]
    return [(caption, cols) for caption, cols in groups if cols]


def leaderboard_section(
    table: pd.DataFrame, runs: list[Run], overrides: dict, episode_pages: dict[str, Path], external_labels: list[str] | None = None
) -> Section:
    """Models x benchmarks, main metric +- standard error, sortable; benchmark names link to their episodes.
    One table for the results' benchmarks, one per external table."""
    external_labels = list(external_labels or [])
    run_models = {r.model for r in runs}
    values, errors, reference = leaderboard(table, stderr_table(runs, overrides, table), run_models)
    links = {task: str(Path("episodes") / page.name) for task, page in episode_pages.items() if task in values.columns}
    sec = Section("Leaderboard")
    sec.blocks.append(
        Text(
            "Main metric of each benchmark (its metric is listed under Sources and models), "
            "± the standard error lm-eval or triangulate play reported (blank where none). Click a header to sort; "
            "a linked benchmark opens its episodes. "
            f"Italic rows are reference points: {', '.join(reference) or 'none in these results'}"
            f"{' (run `triangulate play/eval --model random` to add the chance player)' if not any(m in CHANCE_MODELS for m in table.index) else ''}; "
            "they are left out of the correlations.",
            note=True,
        )
    )
    judged_self = self_judged(runs)
    if judged_self:
        sec.blocks.append(
            Text(
                "Self-judged scores: the evaluated model was its own judge (played without --judge_model), so these "
                "scores measure agreement with itself, not success: " + ", ".join(f"{m} on {t}" for m, t in judged_self) + ".",
                warn=True,
            )
        )
    for caption, columns in column_groups(list(values.columns), external_labels):
        rows = [m for m in values.index if values.loc[m, columns].notna().any()]
        if rows:
            sec.blocks.append(
                Leaderboard(values.loc[rows, columns], errors.loc[rows, columns], links=links, reference=reference, caption=caption)
            )
    return sec


def self_judged(runs: list[Run]) -> list[tuple[str, str]]:
    """(model, task) of every result a player judged itself (``"judge": "self"`` in its results entry)."""
    return sorted(
        {(r.model, task) for r in runs for task, entry in r.results.items() if isinstance(entry, dict) and entry.get("judge") == "self"}
    )


def kendall_section(table: pd.DataFrame, out: Path, n_boot: int = 1000) -> Section:
    """Kendall tau-b between benchmarks over the models (chance rows left out): matrices, heatmap, and per
    pair the 95% bootstrap interval over models and the p-value; writes ``kendall_{tau,p,n,pairs}.csv``."""
    from triangulation.report.kendall import kendall_tables

    models = without_chance(table)
    tau, p, n = kendall_tables(models)
    tau.to_csv(out / "kendall_tau.csv")
    p.to_csv(out / "kendall_p.csv")
    n.to_csv(out / "kendall_n.csv")
    pairs = kendall_pairs(models, n_boot=n_boot)
    pairs.to_csv(out / "kendall_pairs.csv", index=False)
    sec = Section("Kendall tau-b between benchmarks")
    sec.blocks.append(
        Text(
            "Pairwise over the models both benchmarks scored (scipy.stats.kendalltau, tau-b); the interval is a "
            f"95% percentile bootstrap over models ({n_boot} resamples), p is scipy's. Chance rows are left out. "
            "kendall_n.csv holds the number of common models.",
            note=True,
        )
    )
    if pairs.empty:
        common = n.to_numpy().copy()
        common[np.eye(len(common), dtype=bool)] = 0  # a benchmark with itself is no pair
        most = int(common.max()) if common.size else 0  # the most models any two benchmarks share
        sec.blocks.append(needs_models("A Kendall correlation between two benchmarks", MIN_MODELS, most))
        return sec
    small = pairs[pairs["n"] < WARN_BELOW]
    if len(small):
        sec.blocks.append(
            Text(
                f"{len(small)} of {len(pairs)} pairs rest on fewer than {WARN_BELOW} models (marked n < {WARN_BELOW}): "
                "their tau takes few values and their intervals are wide; read them as anecdotes.",
                warn=True,
            )
        )
    shown = sorted(set(pairs["a"]) | set(pairs["b"]), key=list(tau.columns).index)
    if len(shown) >= 2:
        sec.blocks.append(Image(plots.heatmap(tau.loc[shown, shown], p.loc[shown, shown], out / "kendall_heatmap.png"), "Kendall heatmap"))
    ordered = pairs.assign(abs_tau=pairs["tau"].abs()).sort_values(["abs_tau", "n"], ascending=False).drop(columns="abs_tau")
    ordered["p"] = [f"{v:.2g}" for v in ordered["p"]]  # p spans orders of magnitude: two significant digits
    shown_pairs = ordered.head(MAX_PAIRS_SHOWN)
    caption = "benchmark pairs: tau-b, 95% bootstrap interval over models, p-value (strongest first"
    caption += f"; the {MAX_PAIRS_SHOWN} strongest of {len(ordered)}, all in kendall_pairs.csv)" if len(ordered) > MAX_PAIRS_SHOWN else ")"
    sec.blocks.append(Table(shown_pairs.set_index("a"), caption))
    sec.blocks += [
        Table(tau.loc[shown, shown], "tau-b"),
        Table(p.loc[shown, shown], "p-value", digits=4),
        Table(n.loc[shown, shown], "common models", digits=0),
    ]
    return sec
