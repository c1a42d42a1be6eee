"""``triangulate export``: our runs in other tools' formats.

    triangulate export inspect RUN_DIR... --out LOG_DIR

writes one Inspect AI ``.eval`` log per model x task (an lm-eval group's subtasks in one log) from every ``episodes_<task>.jsonl`` (``triangulate
play``) and ``samples_<task>_<date>.jsonl`` (lm-eval ``--log_samples``) under the folders, with the task's
aggregate metrics from its results JSON. Then ``inspect view --log-dir LOG_DIR`` shows them, and
``inspect_ai.analysis.samples_df(LOG_DIR)`` reads them as a data frame. Needs ``pip install 'triangulate[inspect]'``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from plumbing.errors import UserError
from plumbing.output_dirs import new_output_dir


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "export",
        help="write runs in other tools' formats (Inspect AI .eval logs)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    formats = p.add_subparsers(dest="format", metavar="{inspect}")
    formats.required = True
    inspect = formats.add_parser("inspect", help="one Inspect AI .eval log per model x task (inspect view, samples_df)")
    inspect.add_argument(
        "runs", nargs="+", type=Path, metavar="RUN_DIR", help="folders written by triangulate play / lm_eval --output_path"
    )
    inspect.add_argument("--out", type=Path, required=True, metavar="LOG_DIR", help="folder for the .eval logs")
    inspect.set_defaults(func=run_inspect)
    return p


def run_inspect(args: argparse.Namespace) -> int:
    from triangulation.export.inspect_logs import export_inspect, require_inspect
    from triangulation.report.abilities import load_taxonomy

    require_inspect()
    for folder in args.runs:
        if not folder.exists():
            raise UserError(f"no such folder: {folder}")
    with new_output_dir(args.out, "--out"):  # a failed export leaves no empty --out behind
        logs = export_inspect(args.runs, args.out, load_taxonomy().main_metrics)  # the report's main metric leads
    print(f"inspect logs: {len(logs)} .eval files in {args.out} (view them: inspect view --log-dir {args.out})")
    return 0
