"""``triangulate suite SUITE.yaml --output_path DIR``: evaluate many models on many tasks, then report.

Each model x task cell runs as its own `triangulate eval` (lm-eval) or `triangulate play` process;
a model with `engine: vllm` is served once (`vllm serve`, or the command in $TRIANGULATE_VLLM) and its
cells run at once as clients of that server (`engine: api`: an existing endpoint, `base_url:`);
finished cells are skipped on a rerun, failed ones are retried, a failing model is recorded and the
sweep goes on (exit status 1 at the end), and `triangulate report` runs over DIR. On a GPU node the
models share the GPUs as a pool (`--gpus`, each model's `gpus:`): a model starts as soon as its GPUs are
free, longest expected work first, with vLLM data-parallel replicas where they shorten the sweep;
`--dry_run` writes DIR/suite_plan.json (each model's engine and why, GPUs, replicas, expected start and
end, the node's GPU-busy share; commands, request and prompt-token counts);
`--executor slurm` submits one job per model (then `--status`); `--check` runs only the preflight that every
real run starts with (every misconfiguration one line, exit 2, no GPU touched). Suite files:
suites/smoke.yaml (every task family, --limit 1, the embedded model), suites/triangulating.yaml
(seed 003's battery).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from plumbing.checks import check_number
from plumbing.errors import UserError
from triangulation.suite.cells import DEFAULT_LAUNCHER
from triangulation.suite.counting import count_cells, model_costs
from triangulation.suite.gpu_fit import check_fits
from triangulation.suite.outputs import write_outputs
from triangulation.suite.placement import place_models
from triangulation.suite.plan import build_plan
from triangulation.suite.plan_print import print_plan, write_plan
from triangulation.suite.pool import gpu_inventory
from triangulation.suite.runner import run_suite
from triangulation.suite.spec import MAX_RETRIES, load_suite
from triangulation.suite.status import Ended
from triangulation.suite.sweep_plan import plan_sweep

HELP = "run a models x tasks suite (lm-eval and play tasks), resumable, then the report"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("suite", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("suite", type=Path, metavar="SUITE.yaml", help="suite file (models, tasks, defaults, report)")
    p.add_argument(
        "--output_path",
        "-o",
        type=Path,
        required=True,
        metavar="DIR",
        help="runs, logs, status and report folder (reused: finished cells are skipped)",
    )
    p.add_argument("--retries", type=int, default=None, help="extra attempts per failed cell (default: the suite's `retries`, else 1)")
    p.add_argument(
        "--dry_run",
        action="store_true",
        help="write DIR/suite_plan.json (each model's engine, GPUs, replicas, expected start and end, cells with commands, "
        "request and prompt-token counts) and print it; run nothing",
    )
    p.add_argument(
        "--gpus",
        default=None,
        metavar="IDS",
        help="GPUs to place models on, e.g. 0,1,2,3 (default: CUDA_VISIBLE_DEVICES, else every GPU `nvidia-smi -L` lists; none on a CPU machine)",
    )
    p.add_argument("--no_report", action="store_true", help="run the cells only")
    p.add_argument(
        "--executor",
        choices=("local", "slurm"),
        default="local",
        help="local: cells on this machine, the models in a GPU pool (default); slurm: one job per model "
        "through submitit, resources from the suite's `slurm:` block and each model's `gpus:`",
    )
    p.add_argument("--no_wait", action="store_true", help="--executor slurm: submit and return at once (then --status)")
    p.add_argument(
        "--status",
        action="store_true",
        help="where a SLURM sweep in DIR stands (suite_status.json updated; the report once every cell is done)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="the preflight only: task dependencies, datasets, weights and tokenizers, vLLM, GPU count and memory; "
        "every problem one line, exit 2; no GPU touched (a real run does it first too)",
    )
    p.add_argument("--no_check", action="store_true", help="skip the preflight of a real run (stand-in models in tests)")
    p.add_argument(
        "--launcher", default=None, metavar="CMD", help="how to start `triangulate` for a cell (default: this Python with -m triangulation)"
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite)
    if args.retries is not None:
        check_number(args.retries, "--retries", integer=True, minimum=0, maximum=MAX_RETRIES)
    launcher = tuple(shlex.split(args.launcher)) if args.launcher else DEFAULT_LAUNCHER
    root = args.output_path
    if root.exists() and not root.is_dir():
        raise UserError(f"--output_path {root} is a file, not a folder")
    # the GPUs a local run may use, read once (the preflight checks them, the pool places models on them)
    gpus = gpu_inventory(args.gpus) if args.executor == "local" and not args.status else []
    if args.check or not (args.no_check or args.dry_run or args.status):  # alone, or before a real run (fatal there)
        from triangulation.suite.preflight import preflight, report

        checked = report(preflight(suite, args.executor, gpus), suite, fatal=not args.check)
        if args.check:
            return checked
    ended: int | Ended  # an exit status now, or a sweep whose cells have all ended (local or SLURM)
    if args.status or (args.executor == "slurm" and not args.dry_run):
        from triangulation.suite import slurm

        attempts = 1 + (suite.retries if args.retries is None else args.retries)
        ended = slurm.status_command(suite, root) if args.status else slurm.run_slurm(suite, root, launcher, attempts, args.no_wait)
    else:
        if args.no_wait:
            raise UserError("--no_wait goes with --executor slurm")
        if gpus:  # a model too big for the node: one line, before the plan counts or anything starts
            check_fits({m.name: m.gpu_count for m in suite.models}, gpus)
        counted = count_cells(suite, progress=lambda msg: print(f"suite: {msg}", file=sys.stderr)) if args.dry_run else None
        # each model's cost, once: a dry run's own counts, else those of a dry run into the same folder, else the table's
        costs = model_costs(suite, len(gpus), root, counted) if gpus else []
        placements, expected = place_models(suite.models, gpus, costs, at_once=args.executor == "slurm")  # SLURM places each job
        if counted is not None:
            plan = build_plan(suite, root, launcher, gpus, counted, placements, expected)
            print_plan(plan, root)
            write_plan(plan, root)
            return 0
        plan = plan_sweep(suite, root, placements)  # what runs, decided once: markers, split subtasks, endpoints
        ended = run_suite(plan, launcher=launcher, retries=args.retries, gpus=gpus)
    if isinstance(ended, int):  # a SLURM sweep still running, or not waited for
        return ended
    # the sizes and the report of a finished sweep, written here for either executor; then how it ended
    return ended.close(write_outputs(root, suite, report=not args.no_report))
