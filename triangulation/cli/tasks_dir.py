"""``triangulate tasks-dir``: print our lm-eval task folder, for lm-eval's own command line.

    lm_eval --include_path "$(triangulate tasks-dir)" --tasks globalgroup_zh --model hf --model_args pretrained=...

lm-eval 0.4.13 finds our tasks only on ``--include_path`` (it has no plugin loader; see the README's
"lm-eval plugin" section); this prints that folder, wherever the package is installed.
"""

from __future__ import annotations

import argparse

from lm_eval_tasks import TASKS_DIR

HELP = 'print the lm-eval task folder (lm_eval --include_path "$(triangulate tasks-dir)" --tasks globalgroup_zh ...)'


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("tasks-dir", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    print(TASKS_DIR)
    return 0
