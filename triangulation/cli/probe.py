"""``triangulate probe``: the membership probe of issue 42 (Min-K% Prob, Shi et al. 2023) on a published task's
items against its fresh twin's, for one model whose log-probabilities are available (lm-eval ``hf``).

    triangulate probe --tasks globalgroup_zh [--model hf --model_args pretrained=...] [--limit N] --output_path DIR

Writes ``DIR/<model folder>/membership_<task>.json`` (AUC, its 95% interval, n on each side, k) beside the model's
results, where ``triangulate report`` shows it in "Published vs fresh". Item text: a GlobalGroup game's prompt and
gold answer (:func:`datasets_build.prompts.globalgroup_item_text`), the first ``--limit`` published test games and
their twins.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from datasets_build.matched import FRESH_SUBSETS
from datasets_build.prompts import globalgroup_item_text
from models.loading import load_lm, resolve_model
from models.ref import ModelRef
from plumbing import atomic, run_folder
from plumbing.errors import UserError
from triangulation import membership

#: the tasks the probe knows the item text of
PROBED = {f"globalgroup_{s}": f"{s}_4x4" for s in FRESH_SUBSETS}


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "probe",
        help="membership probe (Min-K%% Prob) of published items against their fresh twins",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", default=None, help="an lm-eval model with log-probabilities (default: the embedded SmolLM2, hf)")
    p.add_argument("--model_args", default=None)
    p.add_argument("--tasks", required=True, help=f"comma-separated, of: {', '.join(PROBED)}")
    p.add_argument("--limit", type=int, default=None, help="the first N published games and their twins")
    p.add_argument("--k", type=float, default=0.2, help="share of lowest-probability tokens (default 0.2, the paper's)")
    p.add_argument("--device", default=None)
    p.add_argument("--output_path", type=Path, required=True)
    p.set_defaults(func=run)
    return p


def item_texts(task: str, limit: int | None) -> tuple[list[str], list[str]]:
    from datasets_build.load import load_globalgroup
    from datasets_build.matched import load_globalgroup_fresh

    config = PROBED[task]
    published = list(load_globalgroup(config)["test"])[:limit]
    fresh = list(load_globalgroup_fresh(config)["test"])[:limit]
    return [globalgroup_item_text(d) for d in published], [globalgroup_item_text(d) for d in fresh]


def run(args: argparse.Namespace) -> int:
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in PROBED]
    if unknown:
        raise UserError(f"--tasks {', '.join(unknown)}: the probe knows the item text of {', '.join(PROBED)} only")
    if args.limit is not None and args.limit < 2:
        raise UserError("--limit must be at least 2 (an AUC needs two items on each side)")
    if not 0 < args.k <= 1:
        raise UserError("--k must be in (0, 1]")
    ref = ModelRef.parse(args.model, args.model_args)  # the one parse of --model_args
    lm = load_lm(resolve_model(ref, device=args.device, prefix_cache=False), device=args.device, prefix_cache=False)
    if not hasattr(lm, "model") or not hasattr(lm, "tok_encode"):
        raise UserError(f"--model {args.model}: the probe needs token log-probabilities (an lm-eval `hf` model)")
    folder = run_folder.model_dir(args.output_path, ref.folder)
    folder.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        published, fresh = item_texts(task, args.limit)
        result = membership.probe(lm, published, fresh, k=args.k)
        payload = {"task": task, "signal": "min_k_prob", **result.__dict__}
        atomic.write_text(folder / f"membership_{task}.json", json.dumps(payload, indent=1) + "\n")
        print(f"{task}: Min-K% Prob AUC {result.auc:.3f} [{result.low:.3f}, {result.high:.3f}] (n {result.n_published} + {result.n_fresh})")
    return 0
