"""``triangulate report``: correlate benchmarks, games and cognitive tests across models.

    triangulate report RESULTS... [--external [LABEL=]FILE ...] [--abilities FILE.yaml]
                      [--judge_model M [--judge_model_args K=V,...]] --out DIR

Writes DIR/scores.csv, kendall_tau.csv, kendall_p.csv, kendall_n.csv, PNG figures, the analyses' CSVs
and DIR/report.html (self-contained, opens offline).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval._cli.utils import MergeDictAction

from plumbing import run_folder
from plumbing.output_dirs import new_output_dir
from triangulation.report.make import make_report


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "report",
        help="tables, Kendall correlations, plots and an HTML report over many models' results",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "results",
        nargs="*",
        type=Path,
        metavar="RESULTS",
        help=f"folders (or {run_folder.RESULTS_GLOB} files) written by lm_eval / triangulate play --output_path",
    )
    p.add_argument(
        "--external",
        action="append",
        default=[],
        metavar="[LABEL=]FILE",
        help="score table from elsewhere: plain wide CSV, clembench-runs results.csv, Open LLM Leaderboard export (repeatable)",
    )
    p.add_argument(
        "--abilities",
        type=Path,
        default=None,
        metavar="FILE.yaml",
        help="benchmark -> ability mapping (default: the shipped seed-003 taxonomy)",
    )
    p.add_argument(
        "--pair",
        action="append",
        default=[],
        metavar="MODEL_A,MODEL_B",
        help="model pair for the discriminative-power plot (repeatable; default: pairs of the results' models)",
    )
    p.add_argument(
        "--sizes",
        type=Path,
        default=None,
        metavar="FILE.csv",
        help="model,size_b (billions of parameters) for the accuracy-by-size figure (seed 003 Fig. 1); `triangulate suite` writes one",
    )
    p.add_argument(
        "--scatter",
        action="append",
        default=[],
        metavar="BENCH_A,BENCH_B",
        help="benchmark pair for the two-benchmark scatter (seed 003 Fig. 8; repeatable; default: the highest- and lowest-correlated game x cognitive test)",
    )
    p.add_argument("--subtasks", action="store_true", help="also list subtasks of groups (e.g. every mmlu subject) as benchmarks")
    p.add_argument(
        "--judge_model",
        default=None,
        help="lm-eval model judging Connections' categorical reasoning (seed 001 Table 6, Figure 7; default: the fastText proxy when vectors are installed)",
    )
    p.add_argument(
        "--judge_model_args",
        default=None,
        nargs="+",
        action=MergeDictAction,
        help="model_args for --judge_model (alone: the embedded SmolLM2 with these args)",
    )
    p.add_argument("--title", default="triangulate report", help="the report's title (its page heading and <title>)")
    p.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="folder for report.html, its tables (CSV), figures and episode pages"
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    with new_output_dir(args.out, "--out"):  # a failed report leaves no empty --out behind
        path = _make(args)
    print(f"report: {path}")
    return 0


def _make(args: argparse.Namespace) -> Path:
    from triangulation.report.analyses.figures_triangulating import read_sizes

    return make_report(
        args.results,
        args.out,
        externals=args.external,
        abilities=args.abilities,
        pairs=args.pair,
        scatter=getattr(args, "scatter", None) or (),
        sizes=read_sizes(getattr(args, "sizes", None)),
        subtasks=args.subtasks,
        title=args.title,
        judge_model=args.judge_model,
        judge_model_args=args.judge_model_args,
    )
