"""Suite files for ``triangulate suite``: models x tasks, read and validated on load.

A suite YAML holds ``models`` (lm-eval ``--model``/``--model_args``, optional judge and second
player) and ``tasks`` (entries naming lm-eval tasks with ``eval:`` or play tasks with ``play:``),
with limits, seeds and generation kwargs per entry or under ``defaults``. Every mistake is one line
(:class:`plumbing.errors.UserError`) naming the file and the entry. See ``suites/smoke.yaml``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from models.args import redact_url
from models.forms import CHANCE_MODEL
from models.loading import resolve_model
from models.naming import MAX_LABEL_CHARS, unique_report_ids
from models.ref import ModelRef
from multiturn.api import option_problem
from plumbing.checks import number_problem
from plumbing.errors import UserError
from plumbing.secrets import register_model_args

if TYPE_CHECKING:
    from triangulation.suite.task_index import Resolved

SUITE_KEYS = {
    "name",
    "description",
    "models",
    "tasks",
    "defaults",
    "retries",
    "timeout",
    "max_consecutive_failures",
    "sizes",
    "report",
    "slurm",
    "retry_wait",
    "contamination",
    "include_path",
}
MODEL_KEYS = {"name", "model", "model_args", "size", "apply_chat_template", "judge", "player_b", "batch_size", "device"}
#: how a model is run: ``hf`` (each cell loads it, as lm-eval does), ``vllm`` (served once for all its cells),
#: ``api`` (an existing OpenAI-compatible endpoint); see triangulation/suite/serve.py
ENGINES = ("hf", "vllm", "api")
SERVE_KEYS = {"engine", "gpus", "serve_args", "base_url", "api_key_env", "num_concurrent", "serve_timeout", "serve_restarts"}
MODEL_KEYS |= SERVE_KEYS | {"time"}
#: model keys that do not change a cell's results (left out of its fingerprint): Figure 1's size, where and
#: how it is placed and served, its SLURM job's time limit
NOT_RESULTS = {"size", "gpus", "num_concurrent", "serve_timeout", "api_key_env", "serve_restarts", "time"}
#: task options that do not change a cell's results: how long a backend call may take
NOT_RESULTS_OPTIONS = {"timeout"}
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: the ``slurm:`` block (``--executor slurm``): resources of each model's job
SLURM_KEYS = {"partition", "time", "gpus_per_model", "cpus", "mem", "sbatch", "setup", "max_requeues"}
DEFAULT_TIME_MIN = 24 * 60
TIME = re.compile(r"^(?:(\d+)-)?(\d+):(\d\d):(\d\d)$")
ROLE_KEYS = {"model", "model_args"}
#: options a task entry (or ``defaults``) may set; the runner each applies to is in ``EVAL_ONLY``/``PLAY_ONLY``
OPTION_KEYS = {
    "limit",
    "seed",
    "gen_kwargs",
    "num_fewshot",
    "fewshot_as_multiturn",
    "apply_chat_template",
    "metadata",
    "log_samples",
    "task_args",
    "judge_gen_kwargs",
    "batch_size",
    "timeout",
    "split",  # a group entry runs as one cell per subtask, merged back (triangulation/suite/split.py)
}
EVAL_ONLY = {"num_fewshot", "fewshot_as_multiturn", "apply_chat_template", "metadata", "log_samples"}
PLAY_ONLY = {"task_args", "judge_gen_kwargs"}
TASK_KEYS = OPTION_KEYS | {"eval", "play", "name"}
REPORT_KEYS = {"title", "external", "pairs", "scatter", "abilities", "subtasks"}
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True)
class ModelSpec:
    name: str  # folder label inside the suite's output
    model: str | None  # lm-eval registry name; None (with no model_args) = the embedded SmolLM2
    #: model_args as the suite file wrote them (a string or a mapping; None: not given), made into :attr:`ref` (the
    #: cells' command lines pass on ``ref.given``, as written)
    model_args: InitVar[str | dict[str, Any] | None] = None
    size: float | None = None  # billions of parameters (seed 003 Figure 1)
    apply_chat_template: bool = True
    #: the judge's and the second player's models (``judge:``/``player_b:``), each made once here
    judge: ModelRef | None = None
    player_b: ModelRef | None = None
    batch_size: str | None = None
    device: str | None = None
    engine: str = "hf"  # hf | vllm | api
    #: GPUs it needs: `--gpus` placement, its SLURM job, its server's tensor-parallel size; None = the default, 1
    gpus: int | None = None
    serve_args: tuple[str, ...] = ()  # extra `vllm serve` flags
    base_url: str | None = None  # engine api: http://HOST:PORT/v1
    api_key_env: str | None = None  # engine api: the environment variable that holds the key (never the key)
    num_concurrent: int = 32  # requests in flight per served cell (play: also its --max_live)
    serve_timeout: float = 1800.0  # seconds to wait for the server's /v1/models
    serve_restarts: int = 2  # a vllm server that dies mid-sweep is started again this many times
    time: int | None = None  # its SLURM job's time limit in minutes (None: the `slurm:` block's)
    #: the model, parsed once (made from ``model``/``model_args`` when not given): names, identity, fingerprint
    ref: ModelRef = None  # type: ignore[assignment]

    #: what makes two suite models the same for measured rates (engine, weights, arguments, GPUs), made once
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self, model_args: str | dict[str, Any] | None) -> None:
        if self.ref is None:
            object.__setattr__(self, "ref", ModelRef.parse(self.model, model_args))
        key = json.dumps([self.engine, self.model, self.ref.fingerprint(), self.gpu_count], sort_keys=True, default=str)
        object.__setattr__(self, "key", key)

    @functools.cached_property
    def backend(self) -> ModelRef:
        """The model as its backend is reached (:func:`models.loading.resolve_model`: the embedded model by its GGUF
        file), resolved once: its report id and its files' size are read from it."""
        return resolve_model(self.ref)

    @property
    def served(self) -> bool:
        return self.engine != "hf"

    @property
    def weightless(self) -> bool:
        """The chance player: no weights, no GPU; each of its cells is a light process of one CPU core."""
        return self.model == CHANCE_MODEL

    @property
    def gpu_weights(self) -> bool:
        """Its weights sit on GPUs: not the chance player, not a model behind an API (``engine: api``)."""
        return not (self.weightless or self.engine == "api")

    @property
    def gpu_count(self) -> int:
        return 1 if self.gpus is None else self.gpus


@dataclass(frozen=True)
class TaskEntry:
    """One task entry of a suite file (``eval:`` or ``play:``); a play task itself is ``multiturn``'s ``TaskSpec``."""

    name: str  # folder label
    runner: str  # "eval" (lm-eval through `triangulate eval`) or "play" (`triangulate play`)
    tasks: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)
    #: an eval entry's extra lm-eval task folders or files: the suite's ``include_path:``, absolute (where the
    #: tasks are found, not what they compute: left out of the cell's fingerprint, like our own task folder)
    include_path: tuple[str, ...] = ()

    @functools.cached_property
    def resolved(self) -> dict[str, Resolved]:
        """An eval entry's task names, each looked up once in lm-eval's one task index (:func:`task_index.resolve`:
        known or not, its leaves, or why its tree cannot be built), for the preflight and the contamination twins;
        {} for a play entry. Made on first read: the index costs up to seconds, and ``--status``, a SLURM job and a
        suite of play tasks never read it."""
        if self.runner != "eval":
            return {}
        from triangulation.suite.task_index import resolve  # lm-eval's task index: lm_eval

        return {name: resolve(name, self.include_path) for name in self.tasks}

    @property
    def task_manager(self) -> Any:
        """lm-eval's task index this eval entry's names are found in (our tasks, lm-eval's, the suite's
        ``include_path:``), the same one :attr:`resolved` reads (:func:`task_index.task_manager`, once per process):
        what builds its tasks with their data (the dry run's counts)."""
        from triangulation.suite.task_index import task_manager  # lm-eval's task index: lm_eval

        return task_manager(True, self.include_path)


@dataclass(frozen=True)
class SlurmJob:
    """What one model's SLURM job asks for (:func:`_slurm`): ``gpus`` (its own ``gpus:``; else none for a model that
    needs no GPU, the chance player or ``engine: api``; else the block's ``gpus_per_model``; the preflight's count too)
    and ``minutes``, its time limit (its own ``time:``, else the block's ``time``, default 24 h)."""

    gpus: int
    minutes: int


@dataclass(frozen=True)
class SlurmBlock:
    """The suite's ``slurm:`` block, checked and parsed once (:func:`_slurm`): ``partition``, ``time`` (minutes),
    ``gpus_per_model``, ``cpus`` and ``mem`` per job, ``sbatch`` extra options, ``setup`` shell lines, ``max_requeues``;
    ``jobs``: each model's :class:`SlurmJob` by its name, resolved with it."""

    partition: str | None = None
    time: int = DEFAULT_TIME_MIN
    gpus_per_model: int = 1
    cpus: int | None = None
    mem: str | None = None
    sbatch: Mapping[str, Any] = field(default_factory=dict)
    setup: tuple[str, ...] = ()
    max_requeues: int = 3
    jobs: Mapping[str, SlurmJob] = field(default_factory=dict)


@dataclass(frozen=True)
class ReportBlock:
    """The suite's ``report:`` block, checked and resolved once (:func:`_report`): the title, the external tables
    (``[LABEL=]FILE``) and the abilities taxonomy with ``$VARS`` expanded and relative to the suite file, Figure 2's
    pairs, the scatter plots, and whether subtasks get columns."""

    title: str
    external: tuple[str, ...] = ()
    abilities: Path | None = None
    pairs: tuple[str, ...] = ()
    scatter: tuple[str, ...] = ()
    subtasks: bool = False


@dataclass
class Suite:
    path: Path
    name: str
    models: list[ModelSpec]
    tasks: list[TaskEntry]
    retries: int = 1
    timeout: float | None = None
    max_consecutive_failures: int = 3
    sizes: dict[str, float] = field(default_factory=dict)
    report: ReportBlock = field(default_factory=lambda: ReportBlock("suite"))
    slurm: SlurmBlock = field(default_factory=SlurmBlock)
    retry_wait: float = 10.0  # seconds before a failed cell's first retry, doubled for each further one
    include_path: tuple[str, ...] = ()  # the suite's own lm-eval task folders or files, absolute

    @functools.cached_property
    def report_names(self) -> list[str]:
        """The names the report gives each model's results, in :attr:`models` order: each one's
        :attr:`models.ref.ModelRef.report_id` as its backend is reached (:attr:`ModelSpec.backend`), unique as the
        report makes them (:func:`models.naming.unique_report_ids`; a suite's ``name:`` tells two entries of one weights
        apart), made once."""
        return unique_report_ids([m.backend for m in self.models], [m.name for m in self.models])[0]


@dataclass(frozen=True)
class Cell:
    """One model x one task entry of a suite, with its fingerprint (:func:`cell_fingerprint`) made once, with it:
    what its marker, its request cache and a rerun's skip compare."""

    model: ModelSpec
    task: TaskEntry
    fingerprint: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fingerprint", cell_fingerprint(self.model, self.task))

    @property
    def label(self) -> str:
        return f"{self.model.name}/{self.task.name}"


def cell_fingerprint(m: ModelSpec, task: TaskEntry) -> str:
    """Hash of everything that decides a cell's results (a changed entry is run again; ``size`` only labels
    Figure 1 and ``gpus`` only places the model, so changing them reruns nothing)."""
    given = [f for f in fields(ModelSpec) if f.init]  # what the suite file says; not what is derived from it (key, backend)
    defaults = {f.name: f.default for f in given}
    model = {f.name: getattr(m, f.name) for f in given if f.name not in NOT_RESULTS}
    model = {k: v for k, v in model.items() if not (k in SERVE_KEYS and v == defaults[k])}
    model["model_args"] = model.pop("ref").fingerprint()  # credentials and timeouts left out (issue 39, item 13)
    for role in ("judge", "player_b"):
        if model.get(role) is not None:
            model[role] = role_fingerprint(model[role])
    if model.get("base_url"):
        model["base_url"] = redact_url(model["base_url"])
    options = {k: v for k, v in task.options.items() if k not in NOT_RESULTS_OPTIONS}
    blob = json.dumps({"model": model, "task": [task.runner, list(task.tasks), options]}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _fail(path: Path, where: str, message: str) -> UserError:
    return UserError(f"suite {path}: {where}: {message}")


def _check_keys(path: Path, where: str, entry: Any, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(entry, Mapping):
        raise _fail(path, where, f"expected a mapping, got {type(entry).__name__}")
    unknown = sorted(set(map(str, entry)) - allowed)
    if unknown:
        raise _fail(path, where, f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")
    return {str(k): v for k, v in entry.items()}


def _names(path: Path, where: str, value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(t, str) and t.strip() for t in items):
        raise _fail(path, where, "wants a task name or a non-empty list of task names")
    return tuple(t.strip() for t in items)


#: bounds of ``retries`` and ``retry_wait`` (seconds): the longest wait, ``retry_wait`` x 2^(retries - 1), stays a
#: wait a timer can take (a 1e10 s wait, or 31+ retries at the default, overflowed it: issue 39 item 15)
MAX_RETRIES = 20
MAX_RETRY_WAIT = 3600.0


def _number(path: Path, where: str, key: str, value: Any, kind=float, minimum: float | None = 0, **bounds: Any) -> Any:
    """``value`` checked by the one number check (:func:`plumbing.checks.number_problem`: finite, in range)."""
    problem = number_problem(value, integer=kind is int, minimum=minimum, **bounds)
    if problem is not None:
        raise _fail(path, where, f"{key} {problem}")
    return kind(value)


def _checked(path: Path, where: str, key: str, value: Any) -> Any:
    """``value`` of ``limit``, ``seed`` or ``batch_size`` checked as ``triangulate play`` checks its flags
    (:func:`multiturn.engine.flags.option_problem`; lm-eval takes the same values)."""
    if (problem := option_problem(key, value)) is not None:
        raise _fail(path, where, f"{key} {problem}")
    return value


def _batch_size(path: Path, where: str, value: Any) -> str | None:
    """A model's ``batch_size``: a positive integer or ``auto`` / ``auto:N``, as lm-eval takes it (as a string)."""
    value = _checked(path, where, "batch_size", value)
    return None if value is None else value if isinstance(value, str) and value.startswith("auto") else str(int(value))


def _check_options(path: Path, where: str, options: dict[str, Any], runner: str | None) -> dict[str, Any]:
    for key in ("gen_kwargs", "metadata", "task_args", "judge_gen_kwargs"):
        if key in options and not isinstance(options[key], Mapping):
            raise _fail(path, where, f"{key} must be a mapping (key: value)")
    if "timeout" in options and options["timeout"] is not None:
        _number(path, where, "timeout", options["timeout"], minimum=None, above=0)
    for key in ("limit", "seed", "batch_size"):  # the entry's values stay as written (its fingerprint)
        if key in options:
            _checked(path, where, key, options[key])
    if "num_fewshot" in options:
        _number(path, where, "num_fewshot", options["num_fewshot"], int)
    for key in ("fewshot_as_multiturn", "apply_chat_template", "log_samples", "split"):
        if key in options and not isinstance(options[key], bool):
            raise _fail(path, where, f"{key} must be true or false")
    if runner == "eval" and (bad := sorted(PLAY_ONLY & set(options))):
        raise _fail(path, where, f"{bad[0]} applies to play tasks only")
    if runner == "play" and (bad := sorted(EVAL_ONLY & set(options))):
        raise _fail(path, where, f"{bad[0]} applies to eval (lm-eval) tasks only")
    return options


def role_fingerprint(ref: ModelRef) -> dict[str, Any]:
    """A judge's or second player's part of a cell's fingerprint: the keys its entry gave, credentials left out."""
    out: dict[str, Any] = {} if ref.model is None else {"model": ref.model}
    return out if ref.given is None else {**out, "model_args": ref.fingerprint()}


def _role(path: Path, where: str, value: Any) -> tuple[str | None, str | Mapping[str, Any] | None] | None:
    """A judge's or second player's entry, checked: its ``(model, model_args)`` as written (None: not given)."""
    if value is None:
        return None
    entry = _check_keys(path, where, value, ROLE_KEYS)
    if "model" not in entry and "model_args" not in entry:
        raise _fail(path, where, "needs model and/or model_args")
    return entry.get("model"), _model_args(path, where, entry.get("model_args"))


def _model_args(path: Path, where: str, value: Any) -> str | Mapping[str, Any] | None:
    if value is not None and not isinstance(value, (str, Mapping)):
        raise _fail(path, where, "model_args must be a 'k=v,k2=v2' string or a mapping")
    return value


def _model(path: Path, i: int, entry: Any) -> ModelSpec:
    where = f"models[{i}]"
    entry = _check_keys(path, where, entry, MODEL_KEYS)
    args = _model_args(path, where, entry.get("model_args"))
    roles = [_role(path, f"{where}.{role}", entry.get(role)) for role in ("judge", "player_b")]
    # the entry checked whole, its models are made: the one parse of the model's and each role's model_args
    ref = ModelRef.parse(entry.get("model"), args)
    judge, player_b = (None if role is None else ModelRef.parse(*role) for role in roles)
    parsed = None if args is None else ref.args_dict()
    name = entry.get("name") or ref.label
    if not isinstance(name, str) or not LABEL.match(name) or len(name) > MAX_LABEL_CHARS:
        raise _fail(path, where, f"name {name!r} must be at most {MAX_LABEL_CHARS} letters, digits, '.', '_', '+', '-' (it names a folder)")
    size = entry.get("size")
    register_model_args(parsed, *(role.args for role in (judge, player_b) if role is not None))  # scrubbed from every line
    serving = _serving(path, where, entry, parsed)
    return ModelSpec(
        name=name,
        model=entry.get("model"),
        ref=ref,
        size=None if size is None else _number(path, where, "size", size),
        apply_chat_template=bool(entry.get("apply_chat_template", True)),
        judge=judge,
        player_b=player_b,
        batch_size=_batch_size(path, where, entry.get("batch_size")),
        device=entry.get("device"),
        time=None if entry.get("time") is None else _time(path, where, entry["time"]),
        **serving,
    )


def _serving(path: Path, where: str, entry: dict[str, Any], model_args: dict[str, Any] | None) -> dict[str, Any]:
    """The serving keys of a model entry (``engine`` and what goes with it), checked (``model_args``: parsed)."""
    engine = entry.get("engine", "hf")
    if engine not in ENGINES:
        raise _fail(path, where, f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    out: dict[str, Any] = {"engine": engine}
    if "gpus" in entry:
        out["gpus"] = _number(path, where, "gpus", entry["gpus"], int, 1 if engine == "vllm" else 0)  # 0: needs none (api, CPU)
    if "num_concurrent" in entry:
        out["num_concurrent"] = _number(path, where, "num_concurrent", entry["num_concurrent"], int, 1)
    if "serve_restarts" in entry:
        out["serve_restarts"] = _number(path, where, "serve_restarts", entry["serve_restarts"], int)
    if "serve_timeout" in entry:
        out["serve_timeout"] = _number(path, where, "serve_timeout", entry["serve_timeout"], float, 1)
    wrong = sorted(k for k in ("base_url", "api_key_env") if k in entry and engine != "api")
    wrong += ["serve_args"] if "serve_args" in entry and engine != "vllm" else []
    if wrong:
        raise _fail(path, where, f"{wrong[0]} needs engine: {'vllm' if wrong[0] == 'serve_args' else 'api'}")
    if engine == "vllm":
        out["serve_args"] = _serve_args(path, where, entry.get("serve_args"))
        if entry.get("model") not in (None, "hf", "vllm"):
            raise _fail(path, where, f"engine: vllm serves an hf/vllm model's weights, not model {entry['model']!r}")
        if model_args is not None and not model_args.get("pretrained"):
            raise _fail(path, where, "engine: vllm needs pretrained=<Hub id or folder> in model_args")
    if engine == "api":
        base_url = entry.get("base_url")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise _fail(path, where, "engine: api needs base_url: http(s)://HOST:PORT/v1")
        key_env = entry.get("api_key_env")
        if key_env is not None and not (isinstance(key_env, str) and ENV_NAME.match(key_env)):
            raise _fail(path, where, "api_key_env names the environment variable that holds the key (not the key itself)")
        if not (model_args or {}).get("model"):
            raise _fail(path, where, "engine: api needs model=<the served model's name> in model_args")
        out.update(base_url=base_url.rstrip("/"), api_key_env=key_env)
    return out


def _serve_args(path: Path, where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, list) and all(isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in value):
        return tuple(str(a) for a in value)
    raise _fail(path, where, "serve_args must be a list of `vllm serve` flags or one string of them")


def _include_path(path: Path, value: Any) -> tuple[str, ...]:
    """``include_path:``: lm-eval task folders or YAML files (a path or a list of them) that the suite's eval
    entries may name tasks from, each relative to the suite file's folder unless absolute; absolute paths back."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(x, str) and x.strip() for x in items):
        raise _fail(path, "include_path", "must be a path or a list of paths (lm-eval task folders or YAML files)")
    out: list[str] = []
    for item in items:
        where = (path.parent / Path(item).expanduser()).resolve()
        if not where.exists():
            raise _fail(path, "include_path", f"{item}: no such folder or file ({where}; relative to the suite file's folder)")
        if str(where) not in out:
            out.append(str(where))
    return tuple(out)


def _task(path: Path, i: int, entry: Any, defaults: dict[str, Any], include: tuple[str, ...] = ()) -> TaskEntry:
    where = f"tasks[{i}]"
    if isinstance(entry, str):
        raise _fail(path, where, f"write `- eval: {entry}` (lm-eval task) or `- play: {entry}` (triangulate play task)")
    entry = _check_keys(path, where, entry, TASK_KEYS)
    runners = [r for r in ("eval", "play") if r in entry]
    if len(runners) != 1:
        raise _fail(path, where, "needs exactly one of `eval:` (lm-eval tasks) or `play:` (triangulate play tasks)")
    runner = runners[0]
    tasks = _names(path, f"{where}.{runner}", entry[runner])
    own = {k: v for k, v in entry.items() if k in OPTION_KEYS}
    _check_options(path, where, own, runner)
    inherited = {
        k: v for k, v in defaults.items() if not (runner == "eval" and k in PLAY_ONLY) and not (runner == "play" and k in EVAL_ONLY)
    }
    name = entry.get("name") or "+".join(tasks)
    if not isinstance(name, str) or not LABEL.match(name) or len(name) > MAX_LABEL_CHARS:
        raise _fail(path, where, f"name {name!r} must be at most {MAX_LABEL_CHARS} letters, digits, '.', '_', '+', '-' (it names a folder)")
    return TaskEntry(name=name, runner=runner, tasks=tasks, options={**inherited, **own}, include_path=include if runner == "eval" else ())


def _with_fresh_twins(
    path: Path, value: Any, tasks: list[TaskEntry], defaults: dict[str, Any], include: tuple[str, ...] = ()
) -> list[TaskEntry]:
    """``contamination: [globalgroup_zh, wordle, ...]``: each named task (added with the defaults when no entry
    lists it; an eval entry gets ``log_samples``, which the delta resamples) and its fresh twin ``<task>_fresh``
    with the same options, for every model (the report's "Published vs fresh")."""
    from datasets_build.matched import NOT_TWINNED, TWINNED, twin

    for name in _names(path, "contamination", value) if value is not None else ():
        if name in NOT_TWINNED:
            raise _fail(path, "contamination", NOT_TWINNED[name])
        if name not in TWINNED:
            raise _fail(path, "contamination", f"{name!r} has no fresh twin; choose from {', '.join(TWINNED)}")
        runner = TWINNED[name]
        index = _entry_of(name, runner, tasks)
        if index is None:
            tasks.append(_task(path, len(tasks), {runner: name}, defaults, include))
            index = len(tasks) - 1
        if tasks[index].runner != runner:
            raise _fail(path, "contamination", f"{name} is a `{runner}:` task, listed under `{tasks[index].runner}:`")
        if runner == "eval":
            tasks[index] = replace(tasks[index], options={**tasks[index].options, "log_samples": True})
        options = {k: v for k, v in tasks[index].options.items() if k != "split"}  # one task: nothing to split
        tasks.append(replace(tasks[index], name=twin(name), tasks=(twin(name),), options=options))
    return tasks


def _entry_of(name: str, runner: str, tasks: list[TaskEntry]) -> int | None:
    """The index of the entry that runs task ``name``: one that lists it, else a group entry whose group holds it
    (issue 39 item 9: ``taboo`` under ``play: clembench`` was added again with the defaults and played twice)."""
    direct = next((i for i, t in enumerate(tasks) if name in t.tasks), None)
    if direct is not None:
        return direct
    return next((i for i, t in enumerate(tasks) if t.runner == runner and name in _members(t)), None)


def _members(entry: TaskEntry) -> set[str]:
    """The tasks an entry's groups hold: play groups by the side runner's registry, lm-eval groups and tags by lm-eval's
    own task index (:attr:`TaskEntry.resolved`; read only when a ``contamination:`` task is listed by no entry directly)."""
    if entry.runner == "play":
        from multiturn.api import expand

        try:
            return set(expand(list(entry.tasks)))
        except UserError:
            return set()
    return {leaf.name for found in entry.resolved.values() for leaf in found.leaves}


#: a suite file larger than this is refused unread (suites are a few KB)
MAX_SUITE_BYTES = 1 << 20
#: the most values a suite may hold once its aliases are expanded (a billion-laughs file holds 10^9)
MAX_SUITE_VALUES = 100_000


def _bounded_yaml(path: Path) -> Any:
    """``yaml.safe_load`` of a suite file no larger than :data:`MAX_SUITE_BYTES` whose value, with every alias
    expanded, holds at most :data:`MAX_SUITE_VALUES` values (no recursive aliases); a one-line error otherwise."""
    size = path.stat().st_size
    if size > MAX_SUITE_BYTES:
        raise UserError(f"suite {path}: {size} bytes; a suite file may have at most {MAX_SUITE_BYTES} (is it the right file?)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        expanded = _expanded_size(data, {})
    except RecursionError:
        raise UserError(f"suite {path}: nested too deeply") from None
    except ValueError as exc:
        raise UserError(f"suite {path}: {exc}") from None
    if expanded > MAX_SUITE_VALUES:
        raise UserError(f"suite {path}: its aliases expand to more than {MAX_SUITE_VALUES} values; write the values out instead")
    return data


def _expanded_size(value: Any, memo: dict[int, int]) -> int:
    """How many values ``value`` holds with shared (aliased) parts counted each time they occur; each shared part
    is measured once (``memo``), so a billion laughs is measured in microseconds."""
    if not isinstance(value, (dict, list)):
        return 1
    key = id(value)
    if key in memo:
        if memo[key] < 0:
            raise ValueError("a recursive alias (a value that contains itself)")
        return memo[key]
    memo[key] = -1
    items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
    memo[key] = min(1 + sum(_expanded_size(v, memo) for v in items), MAX_SUITE_VALUES + 1)
    return memo[key]


def load_suite(path: Path | str) -> Suite:
    """Read and validate a suite YAML; every problem is a one-line UserError."""
    path = Path(path)
    try:
        data = _bounded_yaml(path)
    except OSError as exc:
        raise UserError(f"cannot read suite {path}: {exc.strerror or exc.__class__.__name__}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise UserError(f"suite {path}: not valid YAML{at}: {getattr(exc, 'problem', None) or exc.__class__.__name__}") from None
    data = _check_keys(path, "top level", data if data is not None else {}, SUITE_KEYS)
    for key in ("models", "tasks"):
        if not data.get(key):
            raise _fail(path, "top level", f"missing `{key}:` (a non-empty list)")
        if not isinstance(data[key], list):
            raise _fail(path, key, "must be a list")
    defaults = _check_options(path, "defaults", _check_keys(path, "defaults", data.get("defaults") or {}, OPTION_KEYS), None)
    models = [_model(path, i, m) for i, m in enumerate(data["models"])]
    include = _include_path(path, data.get("include_path"))
    tasks = [_task(path, i, t, defaults, include) for i, t in enumerate(data["tasks"])]
    tasks = _with_fresh_twins(path, data.get("contamination"), tasks, defaults, include)
    for kind, labels in (("models", [m.name for m in models]), ("tasks", [t.name for t in tasks])):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            raise _fail(path, kind, f"two entries are named {dup[0]!r}; give one a different `name:`")
    name = str(data.get("name") or path.stem)
    report = _report(path, data.get("report"), name)
    slurm = _slurm(path, data.get("slurm"), models)
    sizes = data.get("sizes") or {}
    if not isinstance(sizes, Mapping):
        raise _fail(path, "sizes", "must map model names to billions of parameters")
    return Suite(
        path=path,
        name=name,
        models=models,
        tasks=tasks,
        retries=_number(path, "top level", "retries", data.get("retries", 1), int, maximum=MAX_RETRIES),
        timeout=None if data.get("timeout") is None else _number(path, "top level", "timeout", data["timeout"], minimum=None, above=0),
        max_consecutive_failures=_number(path, "top level", "max_consecutive_failures", data.get("max_consecutive_failures", 3), int, 1),
        sizes={str(k): _number(path, "sizes", str(k), v) for k, v in sizes.items()},
        report=report,
        slurm=slurm,
        retry_wait=_number(path, "top level", "retry_wait", data.get("retry_wait", 10.0), maximum=MAX_RETRY_WAIT),
        include_path=include,
    )


def _report(path: Path, value: Any, suite_name: str) -> ReportBlock:
    """The ``report:`` block (:class:`ReportBlock`); paths relative to the suite file's folder unless absolute."""
    block = _check_keys(path, "report", value or {}, REPORT_KEYS)
    for key in ("external", "pairs", "scatter"):
        if key in block and not (isinstance(block[key], list) and all(isinstance(x, str) for x in block[key])):
            raise _fail(path, f"report.{key}", "must be a list of strings")
    abilities = block.get("abilities")
    if abilities and not isinstance(abilities, str):
        raise _fail(path, "report.abilities", "must be the path of an abilities taxonomy file")
    return ReportBlock(
        title=str(block.get("title") or f"suite {suite_name}"),
        external=tuple(_external(path, spec) for spec in block.get("external", [])),
        abilities=_report_path(path, abilities) if abilities else None,
        pairs=tuple(block.get("pairs", [])),
        scatter=tuple(block.get("scatter", [])),
        subtasks=bool(block.get("subtasks", False)),
    )


def _report_path(path: Path, value: str) -> Path:
    """``value`` with ``~`` and ``$VARS`` expanded, relative to the suite file's folder unless absolute."""
    out = Path(os.path.expandvars(os.path.expanduser(value)))
    return out if out.is_absolute() else path.parent / out


def _external(path: Path, spec: str) -> str:
    """An external table, ``[LABEL=]FILE``, with FILE resolved (:func:`_report_path`)."""
    label, sep, file = spec.rpartition("=") if "=" in spec else ("", "", spec)
    return f"{label}={_report_path(path, file)}" if sep else str(_report_path(path, file))


def _slurm(path: Path, value: Any, models: list[ModelSpec]) -> SlurmBlock:
    """The ``slurm:`` block: ``partition``, ``time`` (minutes or "H:MM:SS"), ``gpus_per_model`` (overrides each
    model's ``gpus``), ``cpus`` and ``mem`` (per job, e.g. "32G"), ``sbatch`` (extra options, a mapping),
    ``setup`` (shell lines run before each job, e.g. ``module load cuda``); with each model's :class:`SlurmJob`."""
    block = _check_keys(path, "slurm", value or {}, SLURM_KEYS)
    numbers = {key: _number(path, "slurm", key, block[key], int) for key in ("gpus_per_model", "cpus", "max_requeues") if key in block}
    if "sbatch" in block and not isinstance(block["sbatch"], Mapping):
        raise _fail(path, "slurm.sbatch", "must be a mapping of sbatch options (e.g. account: myproj, qos: high)")
    if "setup" in block and not (isinstance(block["setup"], list) and all(isinstance(x, str) for x in block["setup"])):
        raise _fail(path, "slurm.setup", "must be a list of shell lines")
    minutes = _time(path, "slurm", block["time"]) if "time" in block else DEFAULT_TIME_MIN
    per_model = numbers.get("gpus_per_model", 1)
    return SlurmBlock(
        partition=str(block["partition"]) if block.get("partition") else None,
        time=minutes,
        gpus_per_model=per_model,
        cpus=numbers.get("cpus") or None,
        mem=str(block["mem"]) if block.get("mem") else None,
        sbatch={str(k): v for k, v in (block.get("sbatch") or {}).items()},
        setup=tuple(block.get("setup") or ()),
        max_requeues=numbers.get("max_requeues", 3),
        jobs={m.name: SlurmJob(_job_gpus(m, per_model), minutes if m.time is None else m.time) for m in models},
    )


def _job_gpus(model: ModelSpec, per_model: int) -> int:
    if model.gpus is not None:
        return model.gpus
    return per_model if model.gpu_weights else 0


def time_minutes(value: Any) -> int:
    """A SLURM time limit: minutes (a number) or ``[D-]H:MM:SS``; None is the default, 24 h."""
    if value is None:
        return DEFAULT_TIME_MIN
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return max(1, int(value))
    match = TIME.match(str(value).strip())
    if not match:
        raise UserError(f"slurm.time: {value!r} is neither minutes nor [D-]H:MM:SS")
    days, hours, minutes, seconds = (int(x or 0) for x in match.groups())
    return max(1, days * 1440 + hours * 60 + minutes + (1 if seconds else 0))


def _time(path: Path, where: str, value: Any) -> int:
    try:
        return time_minutes(value)
    except UserError:
        raise _fail(path, where, f"time: {value!r} is neither minutes nor [D-]H:MM:SS") from None


def cells(suite: Suite) -> list[Cell]:
    """Models x tasks in sweep order: all of one model's tasks, then the next model (loads stay warm in caches)."""
    return [Cell(m, t) for m in suite.models for t in suite.tasks]
