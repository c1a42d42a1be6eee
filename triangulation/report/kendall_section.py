"""The report's Kendall section: which models enter the correlations and why, the pair tables (each pair labelled with where its scores come from: this run, the --external tables, or both) and the heatmaps."""

from __future__ import annotations

import math
import re

import pandas as pd

from plumbing.csvio import write_csv
from triangulation.html import Image, Section, Table, Text
from triangulation.report import plots
from triangulation.report.context import ReportContext, Skipped
from triangulation.report.kendall import MIN_MODELS, WARN_BELOW, kendall_pairs
from triangulation.report.top import MAX_PAIRS_SHOWN, RELIABLE_FROM, benchmark_reliability, column_groups


def heatmaps(ctx: ReportContext, tau: pd.DataFrame, p: pd.DataFrame, pairs: pd.DataFrame) -> list[Image]:
    """One heatmap per source (evaluated here, each --external table), full labels."""
    images = []
    in_pairs = set(pairs["a"]) | set(pairs["b"])
    for caption, columns in column_groups(list(tau.columns), ctx.external_labels):
        shown = [c for c in columns if c in in_pairs]
        if len(shown) < 2:
            continue
        sub_tau, sub_p = tau.loc[shown, shown], p.loc[shown, shown]
        prefix = caption.removeprefix("--external ").removesuffix(": model x benchmark")
        labels = [c.removeprefix(f"{prefix}/") for c in shown]
        sub_tau.index = sub_tau.columns = sub_p.index = sub_p.columns = labels
        external = not prefix.startswith("evaluated here")
        title = f"Kendall tau-b, {prefix}{' (an --external table only)' if external else ''} (* p < 0.05)"
        name = (
            "kendall_heatmap.png"
            if prefix.startswith("evaluated here")
            else f"kendall_heatmap_{re.sub(r'[^A-Za-z0-9._-]', '_', prefix)}.png"
        )
        images.append(Image(plots.heatmap(sub_tau, sub_p, ctx.out / name, title=title), title))
    return images


def source_of(ctx: ReportContext, benchmark: str) -> str:
    """ "evaluated here", or the ``--external`` label a benchmark column comes from."""
    return next((label for label in ctx.external_labels if str(benchmark).startswith(f"{label}/")), "evaluated here")


def pair_source(ctx: ReportContext, a: str, b: str) -> str:
    """Where a Kendall pair's two benchmarks come from: "external only (clem10, clem16)", "evaluated here" or both."""
    sources = sorted({source_of(ctx, a), source_of(ctx, b)})
    if "evaluated here" not in sources:
        return f"external only ({', '.join(sources)})"
    return (
        "evaluated here" if sources == ["evaluated here"] else f"evaluated here + {', '.join(s for s in sources if s != 'evaluated here')}"
    )


def who_enters(ctx: ReportContext) -> str:
    """Which models the correlations run over, and why the benchmarks evaluated here enter no pair when they
    have fewer than :data:`MIN_MODELS` models."""
    ours = [m for m in ctx.run_models if m in ctx.models.index]
    external = [m for m in ctx.models.index if m not in ours]
    line = (
        f"Models entering the correlations: {len(ctx.models.index)} (chance rows left out): {len(ours)} evaluated here"
        + (f" ({', '.join(ours)})" if ours else "")
        + f" and {len(external)} from --external tables."
    )
    here = [c for c in ctx.models.columns if source_of(ctx, c) == "evaluated here"]
    if not here:
        return line
    scored = ctx.models[here].notna().sum()
    few = [c for c in here if scored[c] < MIN_MODELS]
    if len(few) == len(here):
        most = int(scored.max()) if len(scored) else 0
        line += (
            f" The benchmarks evaluated here enter no pair: a correlation needs >= {MIN_MODELS} models, and they have at most "
            f"{most} (the chance player is a reference, not a model); the pairs below are between published (--external) "
            "benchmarks only. Add results of more models to correlate your own benchmarks."
        )
    elif few:
        line += f" {len(few)} of the {len(here)} benchmarks evaluated here have fewer than {MIN_MODELS} models and enter no pair."
    return line


def kendall_section(ctx: ReportContext, n_boot: int = 1000) -> Section | Skipped:
    """Kendall tau-b between benchmarks over the models (chance rows left out): heatmaps, and per pair the 95%
    bootstrap interval over models, the p-value and the reliability of both sides; writes
    ``kendall_{tau,p,n,pairs}.csv`` (the square matrices only as CSV)."""
    title = "Kendall tau-b between benchmarks"
    tau, p, n = ctx.kendall
    for name, frame in (("tau", tau), ("p", p), ("n", n)):
        write_csv(frame, ctx.out / f"kendall_{name}.csv")
    pairs = kendall_pairs(ctx.models, n_boot=n_boot)
    reliability = benchmark_reliability(ctx)
    if not pairs.empty:
        pairs["reliability_a"] = [reliability.get(a, math.nan) for a in pairs["a"]]
        pairs["reliability_b"] = [reliability.get(b, math.nan) for b in pairs["b"]]
        unreliable = (pairs["reliability_a"] < RELIABLE_FROM) | (pairs["reliability_b"] < RELIABLE_FROM)
        pairs["warning"] = [
            "; ".join(w for w in (old, f"unreliable (split-half < {RELIABLE_FROM})" if bad else "") if w)
            for old, bad in zip(pairs["warning"], unreliable)
        ]
    write_csv(pairs, ctx.out / "kendall_pairs.csv", index=False)
    if pairs.empty:
        common = n.to_numpy().copy()
        for i in range(len(common)):
            common[i, i] = 0  # a benchmark with itself is no pair
        most = int(common.max()) if common.size else 0
        return Skipped(title, f"needs >= {MIN_MODELS} models common to two benchmarks, has {most}")
    sec = Section(title)
    sec.blocks.append(Text(who_enters(ctx), note=True))
    sec.blocks.append(
        Text(
            "Pairwise over the models both benchmarks scored (scipy.stats.kendalltau, tau-b); the interval is a "
            f"95% percentile bootstrap over models ({n_boot} resamples), p is scipy's. Chance and published reference rows "
            "are left out. reliability_a/b: the split-half reliability of each side (Sources and models; blank = unknown). "
            "The square matrices are in kendall_tau.csv, kendall_p.csv and kendall_n.csv (common models).",
            note=True,
        )
    )
    small = pairs[pairs["n"] < WARN_BELOW]
    if len(small):
        sec.blocks.append(
            Text(
                f"{len(small)} of {len(pairs)} pairs rest on fewer than {WARN_BELOW} models (marked n < {WARN_BELOW}): "
                "their tau takes few values and their intervals are wide; read them as anecdotes.",
                warn=True,
            )
        )
    sec.blocks += heatmaps(ctx, tau, p, pairs)
    pairs.insert(2, "from", [pair_source(ctx, a, b) for a, b in zip(pairs["a"], pairs["b"])])
    ordered = pairs.assign(abs_tau=pairs["tau"].abs()).sort_values(["abs_tau", "n"], ascending=False).drop(columns="abs_tau")
    ordered["p"] = [f"{v:.2g}" for v in ordered["p"]]  # p spans orders of magnitude: two significant digits
    caption = "benchmark pairs: where they come from, tau-b, 95% bootstrap interval over models, p-value (strongest first"
    caption += f"; the {MAX_PAIRS_SHOWN} strongest of {len(ordered)}, all in kendall_pairs.csv)" if len(ordered) > MAX_PAIRS_SHOWN else ")"
    sec.blocks.append(Table(ordered.head(MAX_PAIRS_SHOWN).set_index("a"), caption))
    return sec
