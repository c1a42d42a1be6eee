"""``triangulate view``: browse the episodes of play runs and the samples of lm-eval runs as HTML.

    triangulate view RUN_DIR... --out DIR

Writes DIR/index.html and one self-contained page per task (DIR/<task>.html) from every
episodes file (``triangulate play``) and the newest samples file (lm-eval ``--log_samples``) of each
task under the folders. A last line torn by a killed run is skipped, and the count is printed. ``triangulate report`` writes the same pages to
``<report>/episodes/``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from plumbing import run_folder
from plumbing.errors import UserError
from plumbing.output_dirs import new_output_dir


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "view",
        help="HTML pages of every episode and logged sample (conversations, parsed replies, scores)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="folders written by triangulate play / lm_eval --output_path")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from triangulation.viewer.pages import write_viewer

    for folder in args.runs:
        if not folder.exists():
            raise UserError(f"no such folder: {folder}")
    with new_output_dir(args.out, "--out"):
        pages = write_viewer(args.runs, args.out)
        if not pages:
            raise UserError(f"no {run_folder.RECORD_FILES} under {', '.join(map(str, args.runs))}")
    print(f"episodes: {args.out / 'index.html'} ({len(pages)} task pages)")
    if torn := run_folder.torn_lines(args.runs):
        print(f"triangulate view: {torn.describe()}", file=sys.stderr)
    return 0
