"""``triangulate score RUN_DIR``: recompute a run's metrics with the current code, without calling a model.

Every folder under RUN_DIR that holds results is re-scored: ``triangulate play`` tasks from their
episodes files (the stored replies replayed through the current games, :mod:`multiturn.engine.rescore`),
lm-eval tasks from their ``--log_samples`` files (the stored responses through the current filters,
``process_results`` and aggregations, :mod:`triangulation.runs.rescore_samples`). New results files are
written next to the old ones (which are kept) and every metric that changed is printed. ``--judge_model`` re-judges the judge
turns (tasks with a judge role) with another model and prints how often the two judges agree.
A play task is re-scored under its episodes file's lock (:mod:`plumbing.locks`), as ``play`` writes it: while a
``play`` holds it, ``score`` stops with one line naming that process, or waits for it with ``--wait_lock``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lm_eval._cli.utils import MergeDictAction

from models.args import parse_model_args
from models.loading import load_lm
from plumbing import run_folder
from plumbing.locks import lock_all
from triangulation.runs.rescore_samples import rescore_lm_eval_run

HELP = "recompute a run's metrics from its stored transcripts and samples with the current code (no model calls)"


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("score", help=HELP, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "run_dir", type=Path, metavar="RUN_DIR", help="an --output_path of triangulate play / triangulate eval, or one model folder in it"
    )
    parser.add_argument(
        "--tasks", "-t", default=None, help="comma-separated tasks to re-score (default: every task with stored episodes or samples)"
    )
    parser.add_argument("--judge_model", default=None, help="lm-eval model that re-judges the judge turns (tasks with a judge role)")
    parser.add_argument("--judge_model_args", default=None, nargs="+", action=MergeDictAction, help="model_args for --judge_model")
    parser.add_argument("--judge_gen_kwargs", default=None, nargs="+", action=MergeDictAction, help="generation kwargs of the new judge")
    parser.add_argument("--device", default=None, help="device for a local --judge_model")
    parser.add_argument("--wait_lock", action="store_true", help="wait for a `triangulate play` still writing these tasks")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
    judge = _judge(args, parse_model_args(args.judge_model_args)) if args.judge_model or args.judge_model_args else None
    total_changes = sum(rescore_folder(args, model_dir, tasks, judge) for model_dir in run_folder.model_dirs(Path(args.run_dir)))
    print(f"{total_changes} metric value(s) changed")
    if torn := run_folder.torn_lines([Path(args.run_dir)], tasks):
        print(f"triangulate score: {torn.describe()}", file=sys.stderr)
    return 0


def rescore_folder(args: argparse.Namespace, model_dir: Path, tasks: list[str] | None, judge) -> int:
    """Re-score one model folder's play and lm-eval tasks, write the new results; returns the metric values changed."""
    from multiturn.api import changed_metrics, get_task, judge_agreement, rescore_run, store_rescored, write_results

    changes = 0
    print(f"== {model_dir}")
    play_tasks = [t for t in run_folder.play_tasks(model_dir) if tasks is None or t in tasks]
    if play_tasks:
        with lock_all([run_folder.episodes_path(model_dir, t) for t in play_tasks], wait=getattr(args, "wait_lock", False)):
            payload, reports, old = rescore_run(model_dir, tasks, judge=judge)
            changed = changed_metrics(old, payload) if reports else []
            # the episodes' own scores too (the viewer shows what results say), before a waiting `play` may go on
            rewritten = store_rescored(model_dir, reports, locked=True) if reports else []
            versions = old.get("versions", {})
            new_file = changed or rewritten or versions != {**versions, **payload.get("versions", {})}
            written = write_results(model_dir, payload) if reports and new_file else None
        if reports:
            changes += _print_changes(changed, written)
            for report in reports:
                print(f"  {report.task}: {report.changed_episodes} episode(s) scored differently", end="")
                print(
                    f"; {len(report.diverged)} kept their stored scores (replay diverged: {next(iter(report.diverged.values()))})"
                    if report.diverged
                    else ""
                )
                if judge is not None and report.judged:
                    agreement = judge_agreement(report.judged, get_task(report.task).judge_label)
                    print(
                        f"  {report.task}: judges agree on {agreement['agreement']:.3f} of {agreement['n_parsed']} verdicts (Cohen's kappa {agreement['cohen_kappa']:.3f}; stored judge vs {args.judge_model or 'the new judge'})"
                    )
    lm_tasks = list(run_folder.samples_files(model_dir, tasks))
    if lm_tasks:
        old = run_folder.latest_results(model_dir, lm_tasks)
        payload = rescore_lm_eval_run(model_dir, old, lm_tasks)
        changed = changed_metrics({"results": {t: old.get("results", {}).get(t, {}) for t in lm_tasks}}, payload)
        changes += _print_changes(changed, write_results(model_dir, payload) if changed else None)
    return changes


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


def _judge(args: argparse.Namespace, model_args: dict[str, Any]):
    """``judge(task, request) -> reply`` on the new judge model (retried like play's backend calls); ``model_args``:
    ``--judge_model_args``, parsed once at the command's entry."""
    from models.retry import BackendFailure, RetryPolicy, call_backend
    from multiturn.api import merged_gen_kwargs

    lm, _, _ = load_lm(args.judge_model, model_args, device=args.device)
    policy = RetryPolicy()

    def judge(task, request) -> str:
        kwargs = merged_gen_kwargs(task, request, None, dict(args.judge_gen_kwargs or {}) or None)
        [reply] = call_backend(lm, [lm.apply_chat_template(request.messages)], kwargs, policy, task=task.name, role=request.role)
        if isinstance(reply, BackendFailure):
            print(f"triangulate score: the new judge failed: {reply.message}", file=sys.stderr)
            return ""
        return reply

    return judge
