"""``triangulate play``: run multi-turn tests on any lm-eval model backend.

Flags are named and behave as in ``lm_eval`` (``--model --model_args --tasks --output_path --limit
--batch_size --seed --gen_kwargs --device``), plus ``--overwrite`` (start over instead of resuming),
``--model_b/--model_args_b`` (second player), ``--judge_model/--judge_model_args`` (judge role),
``--judge_gen_kwargs`` (the judge's generation kwargs), ``--wandb_args``/``--wandb_config_args``/``--hf_hub_log_args``
(log results and episodes through lm-eval's loggers), ``--task_args`` (task options such as SPLAT's
``max_rounds``), ``--max_live`` (episodes in flight), ``--retries``, ``--request_timeout`` and ``--max_reply_chars`` (longer replies are cut,
the cut recorded in the episode). Without ``--model`` the embedded SmolLM2 is used.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any, NamedTuple

from lm_eval._cli.utils import MergeDictAction

from models.args import scrub_secrets
from models.loading import load_lm
from models.ref import ModelRef
from models.retry import DEFAULT_MAX_REPLY_CHARS
from multiturn import registry
from multiturn.engine import run_loggers
from multiturn.engine.flags import OPTION_BOUNDS, batch_size_value, limit_value
from multiturn.engine.record import read_episodes
from multiturn.engine.runner import run_tasks, unchanged_results
from multiturn.engine.settings import PlaySettings
from plumbing import run_folder
from plumbing.checks import DEFAULT_SEED, number_arg
from plumbing.errors import UserError
from plumbing.logs import install_log_scrubber
from plumbing.output_dirs import new_output_dir

log = logging.getLogger(__name__)
#: the argparse types of the numeric flags (plumbing.checks: one line at parse time for nan, inf, 0, 1e400, ...)
POSITIVE = number_arg(above=0)
LIMIT = number_arg(**OPTION_BOUNDS["limit"])
SEED = number_arg(**OPTION_BOUNDS["seed"])


def _limit(text: str) -> int | float:
    """``--limit``'s type: a positive number, a count (an int) or a fraction in (0, 1) (:func:`limit_value`)."""
    return limit_value(LIMIT(text))


def _add_run_folder_flags(parser: argparse.ArgumentParser) -> None:
    """``--overwrite`` (start over) and ``--wait_lock`` (wait for another process writing the same tasks)."""
    parser.add_argument("--overwrite", action="store_true", help="discard earlier episodes of these tasks instead of resuming")
    parser.add_argument("--wait_lock", action="store_true", help="wait for another process writing these tasks in --output_path")


BATCH_HELP = (
    "backend batch size (int or 'auto'), as in lm_eval; default: 1 on a CPU (prefix reuse pays there), the live "
    "episodes (--max_live) for an hf model on a GPU and for vllm (lockstep batching, benchmarks/README.md's GPU table)"
)


def _add_backend_call_flags(parser: argparse.ArgumentParser) -> None:
    """How each backend call is made: retries, a timeout, the cap on a reply's length."""
    parser.add_argument("--retries", type=int, default=4, help="attempts per backend call before an episode is recorded failed")
    parser.add_argument(
        "--request_timeout",
        type=POSITIVE,
        default=None,
        help="seconds one backend call may take before it counts as failed and is retried (default: no limit)",
    )
    parser.add_argument(
        "--max_reply_chars",
        type=number_arg(integer=True, minimum=1),
        default=DEFAULT_MAX_REPLY_CHARS,
        help=f"cut a longer reply to this many characters before it is scored or stored; the cut is recorded (default {DEFAULT_MAX_REPLY_CHARS:,})",
    )


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "play",
        help="run multi-turn tests (n-back, WCST, LNT, clembench games, ...) on an lm-eval model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--model", "-m", default=None, help="lm-eval model name (hf, vllm, local-chat-completions, ...); default: embedded SmolLM2"
    )
    parser.add_argument("--model_args", "-a", default=None, nargs="+", action=MergeDictAction, help="'key=val,key2=val2' as in lm_eval")
    parser.add_argument("--tasks", "-t", default=None, help="comma-separated tasks or groups; 'list' prints them")
    parser.add_argument("--output_path", "-o", default=None, help=f"results folder ({run_folder.LAYOUT})")
    parser.add_argument("--limit", "-L", type=_limit, default=None, help="first N episodes per task (a value < 1 is a fraction)")
    parser.add_argument("--batch_size", "-b", type=batch_size_value, default=None, help=BATCH_HELP)
    parser.add_argument(
        "--seed", type=SEED, default=DEFAULT_SEED, help=f"stimuli, episode order and sampling seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--gen_kwargs",
        default=None,
        nargs="+",
        action=MergeDictAction,
        help="override the tasks' generation kwargs for the player roles, e.g. temperature=0 max_gen_toks=16",
    )
    parser.add_argument(
        "--judge_gen_kwargs",
        default=None,
        nargs="+",
        action=MergeDictAction,
        help="override the judge role's generation kwargs (e.g. max_gen_toks=64)",
    )
    parser.add_argument(
        "--task_args",
        default=None,
        nargs="+",
        action=MergeDictAction,
        help="task options as KEY=VALUE (e.g. max_rounds=10 human_labels=labels.csv); `--tasks list` shows each task's options",
    )
    parser.add_argument("--device", default=None, help="device for local backends (cpu, cuda, cuda:0, mps)")
    _add_run_folder_flags(parser)
    _add_backend_flags(parser)
    parser.add_argument("--verbosity", "-v", default="WARNING", help="log level")
    parser.set_defaults(func=run)
    return parser


def _add_backend_flags(parser: argparse.ArgumentParser) -> None:
    """The second player's and judge's models, backend calls (retries, timeouts, reply cap, prefix cache) and loggers."""
    parser.add_argument("--model_b", default=None, help="lm-eval model for the second player (default: the evaluated model)")
    parser.add_argument("--model_args_b", default=None, nargs="+", action=MergeDictAction, help="model_args for --model_b")
    parser.add_argument("--judge_model", default=None, help="lm-eval model for judge roles (default: the evaluated model)")
    parser.add_argument("--judge_model_args", default=None, nargs="+", action=MergeDictAction, help="model_args for --judge_model")
    parser.add_argument("--max_live", type=int, default=None, help="episodes in flight at once (default 32; 0 = all)")
    _add_backend_call_flags(parser)
    parser.add_argument(
        "--no_prefix_cache",
        action="store_true",
        help="hf: recompute the whole history each turn instead of reusing each episode's KV cache; vllm: do not add enable_prefix_caching=True",
    )
    parser.add_argument(
        "--wandb_args",
        default=None,
        nargs="+",
        action=MergeDictAction,
        help="log to Weights & Biases through lm-eval's WandbLogger: wandb.init arguments key=val (e.g. project=p mode=offline); episodes go in one table per task",
    )
    parser.add_argument(
        "--wandb_config_args",
        default=None,
        nargs="+",
        action=MergeDictAction,
        help="Weights & Biases config arguments key=val, as in lm_eval",
    )
    parser.add_argument(
        "--hf_hub_log_args",
        default=None,
        nargs="+",
        action=MergeDictAction,
        help="log to the Hugging Face Hub through lm-eval's EvaluationTracker, as in lm_eval (hub_results_org=... push_results_to_hub=True push_samples_to_hub=True)",
    )


def _list_tasks() -> int:
    print("tasks:")
    for name in registry.task_names():
        options = registry.task_options(name)
        shown = f"  (--task_args {', '.join(f'{k}={v}' for k, v in options.items())})" if options else ""
        summary = registry.task_summary(name)
        print(f"  {name}{shown}" + (f"\n      {summary}" if summary else ""))
    groups = registry.group_names()
    if groups:
        print("groups:")
        for name, members in sorted(groups.items()):
            print(f"  {name}: {', '.join(members)}")
    return 0


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=getattr(logging, str(args.verbosity).upper(), logging.WARNING))

    install_log_scrubber()  # no credential in any log line (model_args secrets, secret-named env vars)
    if not args.tasks:
        raise UserError("--tasks is required (comma-separated; `--tasks list` shows them)")
    if args.tasks.strip() == "list":
        return _list_tasks()

    names = [t.strip() for t in args.tasks.split(",") if t.strip()]
    if not names:
        raise UserError(f"--tasks {args.tasks!r} names no task (comma-separated task or group names; `--tasks list` shows them)")
    expanded = registry.expand(names)  # UserError on unknown names, before loading any model
    task_args = dict(args.task_args or {})
    registry.check_task_args(expanded, task_args)
    roles = {role for name in expanded for role in registry.get_task(name, task_args).roles}
    settings = PlaySettings.from_args(args, roles)  # built once: every step below reads it

    # --output_path is made and checked before any model loads; a model that cannot load (a Hub id offline, ...)
    # leaves no new folder behind
    with new_output_dir(settings.output_path, "--output_path") if settings.output_path is not None else nullcontext():
        if (done := nothing_to_play(settings)) is not None:
            print(f"triangulate play: nothing left to play; no model loaded, no new results file: {done}")
            return 0
        lms = load_backends(settings)
    install_log_scrubber()  # again: loading a backend may have added log handlers
    payload, path = run_tasks(settings, lms)
    if payload is None:  # a non-zero rank of a distributed run
        return 0
    print(format_table(payload))
    if path is not None:
        print(f"results: {path}")
    failures = failure_summary(payload, getattr(args, "argv", None) or sys.argv[1:])  # said after the loggers ran
    if settings.wandb_args or settings.hf_hub_log_args:
        log_run(settings, payload)
    if failures is None:
        return 0
    if failures.none_finished:
        raise UserError(failures.line)
    print(failures.line, file=sys.stderr)
    return 1


def nothing_to_play(settings: PlaySettings) -> Path | None:
    """The results file that already holds this run when a resume would play nothing
    (:func:`multiturn.engine.runner.unchanged_results`; checked before any model is loaded), else None."""
    return None if settings.output_path is None or settings.overwrite else unchanged_results(settings)


def load_backends(settings: PlaySettings) -> dict[str, Any]:
    """The backend of every role (:class:`multiturn.engine.settings.PlaySettings`): the player's plays, and also
    ``player_b`` and ``judge`` unless the settings give those roles their own."""

    def load(backend: ModelRef) -> Any:
        return load_lm(backend, batch_size=settings.batch_size, device=settings.device, prefix_cache=settings.prefix_cache)

    lm = load(settings.backend)
    lms: dict[str, Any] = {"player": lm, "player_b": lm, "judge": lm}
    for role, backend in settings.role_models().items():
        lms[role] = load(backend)
    return lms


class Failures(NamedTuple):
    """A run's episodes that failed on backend errors (:func:`failure_summary`): the one line that says so, and whether
    no episode finished at all (then the run is an error, and the line its message)."""

    line: str
    none_finished: bool


def failure_summary(payload: dict[str, Any], argv: list[str]) -> Failures | None:
    """One line naming how many episodes failed on backend errors, in which tasks, and the command that
    plays exactly those again (``argv``: the command line from ``play`` on, ``--overwrite`` dropped, since a
    rerun resumes); None when none failed. When no episode of the run finished at all the line says every one
    failed and the first error (``none_finished``)."""
    entries = {task: e for task, e in payload.get("results", {}).items() if "n_failed" in e}
    failed = {task: int(e["n_failed"]) for task, e in entries.items() if e.get("n_failed")}
    if not failed:
        return None
    total = sum(failed.values())
    counts = ", ".join(f"{task}: {n}" for task, n in failed.items())

    # each argument scrubbed before it is quoted: quoting splits a password holding a ' out of the scrubber's sight
    resume = "triangulate " + shlex.join(scrub_secrets(a) for a in argv if a != "--overwrite")
    finished = sum(int(payload.get("n-samples", {}).get(task, {}).get("effective", 0)) for task in entries)
    if finished == 0:
        first = next((e["first_error"] for e in entries.values() if e.get("first_error")), "?")
        return Failures(
            f"every episode failed on backend errors ({total}: {counts}); first error: {first}; fix the backend and resume with: {resume}",
            none_finished=True,
        )
    return Failures(
        f"triangulate play: {total} of {total + finished} episodes failed on backend errors ({counts}); they are not scored; resume with: {resume}",
        none_finished=False,
    )


def log_run(settings: PlaySettings, payload: dict[str, Any]) -> None:
    """``--wandb_args`` / ``--hf_hub_log_args``: the results and the episodes through lm-eval's loggers
    (:mod:`multiturn.engine.run_loggers`); each task's episodes are read back from its files in ``--output_path``
    (none without it)."""
    episodes = {t.task.name: read_episodes(t.store.episodes) for t in settings.plan if t.store is not None}
    if settings.wandb_args:
        run_loggers.log_wandb(payload, episodes, settings.wandb_args, settings.wandb_config_args)
    if settings.hf_hub_log_args:
        run_loggers.log_hub(payload, episodes, settings.hf_hub_log_args, settings.backend.model, settings.backend.args_string)


def format_table(payload: dict[str, Any]) -> str:
    """A plain-text table of every task's and group's metrics (groups are entries of ``results`` too)."""
    rows = [("task", "metric", "value", "stderr", "n")]
    for task, entry in payload.get("results", {}).items():
        n = payload.get("n-samples", {}).get(task, {}).get("effective", entry.get("sample_len", ""))
        for key, value in entry.items():
            if not key.endswith(",none") or "_stderr" in key:
                continue
            metric = key[: -len(",none")]
            err = entry.get(f"{metric}_stderr,none", "N/A")
            rows.append((task, metric, _fmt(value), _fmt(err), str(n)))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return json.dumps(value) if not isinstance(value, str) else value
