"""``triangulate score RUN_DIR``: recompute a run's metrics with the current code, without calling a model.

Every folder under RUN_DIR that holds results is re-scored: ``triangulate play`` tasks from their
``episodes_<task>.jsonl`` (the stored replies replayed through the current games,
:mod:`multiturn.engine.rescore`), lm-eval tasks from their ``samples_<task>_<date>.jsonl`` (the stored
responses through the current filters, ``process_results`` and aggregations,
:mod:`triangulation.runs.rescore_samples`). New ``results_<time>.json`` files are written next to the old
ones (which are kept) and every metric that changed is printed. ``--judge_model`` re-judges the judge
turns of SPLAT episodes with another model and prints how often the two judges agree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lm_eval._cli.utils import MergeDictAction

from plumbing.errors import UserError

HELP = "recompute a run's metrics from its stored transcripts and samples with the current code (no model calls)"


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("score", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "run_dir", type=Path, metavar="RUN_DIR", help="an --output_path of triangulate play / triangulate eval, or one model folder in it"
    )
    parser.add_argument(
        "--tasks", "-t", default=None, help="comma-separated tasks to re-score (default: every task with stored episodes or samples)"
    )
    parser.add_argument("--judge_model", default=None, help="lm-eval model that re-judges the judge turns of SPLAT episodes")
    parser.add_argument("--judge_model_args", default=None, nargs="+", action=MergeDictAction, help="model_args for --judge_model")
    parser.add_argument("--judge_gen_kwargs", default=None, nargs="+", action=MergeDictAction, help="generation kwargs of the new judge")
    parser.add_argument("--device", default=None, help="device for a local --judge_model")
    parser.set_defaults(func=run)
    return parser


def model_dirs(run_dir: Path) -> list[Path]:
    """Folders under (or equal to) ``run_dir`` holding a ``results_*.json`` next to episodes or samples files."""
    if not run_dir.is_dir():
        raise UserError(f"RUN_DIR {run_dir} is not a folder")
    candidates = {p.parent for p in run_dir.rglob("results_*.json")}
    found = sorted(d for d in candidates if any(d.glob("episodes_*.jsonl")) or any(d.glob("samples_*.jsonl")))
    if not found:
        raise UserError(f"no results with episodes_*.jsonl or samples_*.jsonl under {run_dir} (lm-eval runs need --log_samples)")
    return found


def run(args: argparse.Namespace) -> int:
    from multiturn.engine.rescore import changed_metrics, judge_agreement, latest_results, rescore_run
    from multiturn.engine.results import write_results
    from triangulation.runs.rescore_samples import rescore_lm_eval_run, samples_files

    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
    judge = _judge(args) if args.judge_model or args.judge_model_args else None
    total_changes = 0
    for model_dir in model_dirs(Path(args.run_dir)):
        print(f"== {model_dir}")
        if any(model_dir.glob("episodes_*.jsonl")):
            payload, reports, old = rescore_run(model_dir, tasks, judge=judge)
            if reports:
                changes = changed_metrics(old, payload)
                total_changes += _print_changes(changes, write_results(model_dir, payload) if changes else None)
                for report in reports:
                    print(f"  {report.task}: {report.changed_episodes} episode(s) scored differently", end="")
                    print(
                        f"; {len(report.diverged)} kept their stored scores (replay diverged: {next(iter(report.diverged.values()))})"
                        if report.diverged
                        else ""
                    )
                    if judge is not None and report.judged:
                        from multiturn.games.splat import judge_label

                        agreement = judge_agreement(report.judged, judge_label)
                        print(
                            f"  {report.task}: judges agree on {agreement['agreement']:.3f} of {agreement['n_parsed']} verdicts (Cohen's kappa {agreement['cohen_kappa']:.3f}; stored judge vs {args.judge_model or 'the new judge'})"
                        )
        lm_tasks = list(samples_files(model_dir, tasks))
        if lm_tasks:
            old = latest_results(model_dir, lm_tasks)
            payload = rescore_lm_eval_run(model_dir, old, lm_tasks)
            changes = changed_metrics({"results": {t: old.get("results", {}).get(t, {}) for t in lm_tasks}}, payload)
            total_changes += _print_changes(changes, write_results(model_dir, payload) if changes else None)
    print(f"{total_changes} metric value(s) changed")
    return 0


def _print_changes(changes: list[tuple[str, str, Any, Any]], path: Path | None) -> int:
    """Print the changed metrics and the new results file; nothing changed = no new file, and it says so."""
    for task, key, before, after in changes:
        print(f"  {task}  {key}: {_fmt(before)} -> {_fmt(after)}")
    if path is None:
        print("  no metric changed: no new results file written")
    else:
        print(f"  results: {path}")
    return len(changes)


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _judge(args: argparse.Namespace):
    """``judge(task, request) -> reply`` on the new judge model (retried like play's backend calls)."""
    from multiturn.backends.loading import load_lm
    from multiturn.backends.retry import BackendFailure, RetryPolicy, call_backend
    from multiturn.engine.scheduler import merged_gen_kwargs

    lm, _, _ = load_lm(args.judge_model, args.judge_model_args, device=args.device)
    policy = RetryPolicy()

    def judge(task, request) -> str:
        kwargs = merged_gen_kwargs(task, request, None, dict(args.judge_gen_kwargs or {}) or None)
        [reply] = call_backend(lm, [lm.apply_chat_template(request.messages)], kwargs, policy)
        if isinstance(reply, BackendFailure):
            print(f"triangulate score: the new judge failed: {reply.message}", file=sys.stderr)
            return ""
        return reply

    return judge
