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

from plumbing.errors import UserError
from plumbing.jsonio import ensure_output_dir
from triangulation.abilities import load_taxonomy
from triangulation.external import read_externals
from triangulation.figures_triangulating import read_sizes
from triangulation.report import build_report
from triangulation.results_io import find_results_files, read_run


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
        help="folders (or results_*.json files) written by lm_eval / triangulate play --output_path",
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
    p.add_argument("--title", default="triangulate report")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    if not args.results and not args.external:
        raise UserError("give at least one results folder or --external table")
    taxonomy = load_taxonomy(args.abilities)
    ensure_output_dir(args.out, "--out")
    from tqdm.auto import tqdm

    files = [f for root in args.results for f in find_results_files(root)]
    runs = [read_run(f) for f in tqdm(files, desc="reading results", unit="file", disable=len(files) < 5)]
    externals = read_externals(args.external)
    judge = connections_judge(args.judge_model, args.judge_model_args)
    sizes = read_sizes(getattr(args, "sizes", None))
    path = build_report(
        runs,
        externals,
        taxonomy,
        args.out,
        pairs=args.pair,
        include_subtasks=args.subtasks,
        title=args.title,
        judge=judge,
        sizes=sizes,
        scatter=getattr(args, "scatter", None),
    )
    print(f"report: {path}")
    return 0


def connections_judge(model: str | None, model_args):
    """The Connections reasoning judge: ``--judge_model`` (an LLM), else the fastText proxy, else None."""
    from triangulation.connections_judge import default_judge, load_llm_judge

    if model or model_args:
        return load_llm_judge(model, model_args)
    return default_judge()
