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

from models.loading import load_lm, resolve_model
from models.ref import ModelRef
from plumbing import run_folder
from plumbing.errors import UserError
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
    asked = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
    judge = _judge(args, ModelRef.parse(args.judge_model, args.judge_model_args)) if args.judge_model or args.judge_model_args else None
    model_dirs = run_folder.model_dirs(Path(args.run_dir))
    tasks = _leaf_tasks(asked, model_dirs) if asked else None
    total_changes = sum(rescore_folder(args, model_dir, tasks, judge) for model_dir in model_dirs)
    print(f"{total_changes} metric value(s) changed")
    if torn := run_folder.torn_lines([Path(args.run_dir)], tasks):
        print(f"triangulate score: {torn.describe()}", file=sys.stderr)
    return 0


def _leaf_tasks(asked: list[str], model_dirs: list[Path]) -> list[str]:
    """``--tasks`` as the stored tasks they name: a group (``lm_pragmatics``, ``cognitive_flexibility``) is
    its members, as the run's results list them (``group_subtasks``) or the play registry groups them; a
    name no run of RUN_DIR holds is a one-line error (re-scoring nothing in silence hides a typo)."""
    from multiturn.api import group_names

    stored: set[str] = set()
    groups: dict[str, list[str]] = dict(group_names())
    for model_dir in model_dirs:
        stored |= set(run_folder.play_tasks(model_dir)) | set(run_folder.samples_files(model_dir, None))
        for path in sorted(model_dir.glob(run_folder.RESULTS_GLOB)):
            groups.update(_group_subtasks(path))
    out: list[str] = []
    for name in asked:
        members = _expand(name, groups, 0)
        found = [m for m in members if m in stored]
        if not found:
            shown = sorted(stored)[:8] + ([f"... {len(stored) - 8} more"] if len(stored) > 8 else [])
            raise UserError(
                f"--tasks {name}: no stored episodes or samples of it under the run folder (stored: {', '.join(shown) or 'none'})"
            )
        out += [m for m in found if m not in out]
    return out


def _group_subtasks(path: Path) -> dict[str, list[str]]:
    try:
        return {g: list(m) for g, m in (run_folder.ResultsFile.read(path).data.get("group_subtasks") or {}).items() if m}
    except UserError:
        return {}


def _expand(name: str, groups: dict[str, list[str]], depth: int) -> list[str]:
    if name not in groups or depth > 8:
        return [name]
    return [leaf for member in groups[name] for leaf in _expand(member, groups, depth + 1)]


def rescore_folder(args: argparse.Namespace, model_dir: Path, tasks: list[str] | None, judge) -> int:
    """Re-score one model folder's play and lm-eval tasks, each with the settings of the run that last
    reported it; a new results file only where a metric changed. Every task is re-scored before anything is
    written, so a task that cannot be re-scored leaves the folder as it was. Returns the metric values changed."""
    from multiturn.api import changed_metrics, rescore_runs, store_rescored, write_results

    print(f"== {model_dir}")
    play_tasks = [t for t in run_folder.play_tasks(model_dir) if tasks is None or t in tasks]
    lm_tasks = list(run_folder.samples_files(model_dir, tasks))
    rescored_lm = [
        (old.data, rescore_lm_eval_run(model_dir, old.data, names)) for old, names in run_folder.results_by_source(model_dir, lm_tasks)
    ]
    changes = 0
    if play_tasks:
        with lock_all([run_folder.episodes_path(model_dir, t) for t in play_tasks], wait=getattr(args, "wait_lock", False)):
            for payload, reports, old in rescore_runs(model_dir, play_tasks, judge=judge):
                changed = changed_metrics(_only(old, [r.task for r in reports]), payload) if reports else []
                # the episodes' own scores too (the viewer shows what results say), before a waiting `play` may go on
                rewritten = store_rescored(model_dir, reports, locked=True) if reports else []
                changes += _report_play(args, model_dir, payload, reports, old, changed, rewritten, judge)
    for old, payload in rescored_lm:
        changed = changed_metrics(_only(old, list(payload["results"])), payload)
        changes += _print_changes(changed, write_results(model_dir, payload) if changed else None)
    return changes


def _only(payload: dict[str, Any], tasks: list[str]) -> dict[str, Any]:
    return {"results": {t: (payload.get("results") or {}).get(t, {}) for t in tasks}}


def _report_play(args, model_dir: Path, payload, reports, old, changed, rewritten, judge) -> int:
    """Write a re-scored play run's new results file where anything changed and print what did."""
    from multiturn.api import get_task, judge_agreement, write_results

    versions = old.get("versions", {})
    new_file = changed or rewritten or versions != {**versions, **payload.get("versions", {})}
    written = write_results(model_dir, payload) if reports and new_file else None
    if not reports:
        return 0
    changes = _print_changes(changed, written)
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


def _judge(args: argparse.Namespace, ref: ModelRef):
    """``judge(task, request) -> reply`` on the new judge model ``ref`` (``--judge_model``/``--judge_model_args``, made
    once at the command's entry), retried like play's backend calls."""
    from models.retry import BackendFailure, RetryPolicy, call_backend
    from multiturn.api import merged_gen_kwargs

    lm = load_lm(resolve_model(ref, device=args.device), device=args.device)
    policy = RetryPolicy()

    def judge(task, request) -> str:
        kwargs = merged_gen_kwargs(task, request, None, dict(args.judge_gen_kwargs or {}) or None)
        [reply] = call_backend(lm, [lm.apply_chat_template(request.messages)], kwargs, policy, task=task.name, role=request.role)
        if isinstance(reply, BackendFailure):
            print(f"triangulate score: the new judge failed: {reply.message}", file=sys.stderr)
            return ""
        return reply

    return judge
