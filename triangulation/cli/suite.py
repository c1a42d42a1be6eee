"""``triangulate suite SUITE.yaml --output_path DIR``: evaluate many models on many tasks, then report.

Each model x task cell runs as its own `triangulate eval` (lm-eval) or `triangulate play` process;
a model with `engine: vllm` is served once (`vllm serve`, or the command in $TRIANGULATE_VLLM) and its
cells run at once as clients of that server (`engine: api`: an existing endpoint, `base_url:`);
finished cells are skipped on a rerun, failed ones are retried, a failing model is recorded and the
sweep goes on (exit status 1 at the end), and `triangulate report` runs over DIR. Suite files:
suites/smoke.yaml (every task family, --limit 1, the embedded model), suites/triangulating.yaml
(seed 003's battery).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

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
    p.add_argument("--dry_run", action="store_true", help="print each cell's command and whether it is finished; run nothing")
    p.add_argument("--no_report", action="store_true", help="run the cells only")
    p.add_argument(
        "--launcher", default=None, metavar="CMD", help="how to start `triangulate` for a cell (default: this Python with -m triangulation)"
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from plumbing.errors import UserError
    from triangulation.suite.runner import DEFAULT_LAUNCHER, cell_argv, cell_dir, is_done, redacted_argv, run_suite, summary
    from triangulation.suite.spec import cells, load_suite

    suite = load_suite(args.suite)
    if args.retries is not None and args.retries < 0:
        raise UserError("--retries must be >= 0")
    launcher = tuple(shlex.split(args.launcher)) if args.launcher else DEFAULT_LAUNCHER
    root = args.output_path
    if root.exists() and not root.is_dir():
        raise UserError(f"--output_path {root} is a file, not a folder")
    if args.dry_run:
        from triangulation.suite.serve import planned_endpoint

        for model in suite.models:
            endpoint = None
            if model.served:
                endpoint = planned_endpoint(model.engine, model.model, model.model_args, model.base_url, model.api_key_env)
                print(f"{model.name}: engine {model.engine}: one server for its cells at {endpoint.base_url}")
            for cell in (c for c in cells(suite) if c.model is model):
                state = "done" if is_done(root, cell) else "to run"
                print(
                    f"{cell.label}: {state}: {shlex.join(redacted_argv(cell_argv(cell, cell_dir(root, cell), launcher, endpoint=endpoint)))}"
                )
        return 0
    result = run_suite(suite, root, launcher=launcher, retries=args.retries, report=not args.no_report)
    print(summary(result), file=sys.stderr if result.exit_code else sys.stdout)
    if result.report is not None:
        print(f"report: {result.report}")
    return result.exit_code
