"""What one ``triangulate play`` run was asked to do (:class:`PlaySettings`), and what each of its tasks is played
with (:class:`TaskSettings`, :func:`episode_settings`).

``triangulate play`` builds one ``PlaySettings`` from its command line before any model loads (each
``--model_args*`` becomes a :class:`models.ref.ModelRef` here, parsed once), and the engine reads nothing else:
:attr:`PlaySettings.plan` makes one ``TaskSettings`` per task, once, which "nothing left to play"
(:func:`multiturn.engine.runner.unchanged_results`, before loading) and the runner
(:func:`multiturn.engine.runner.run_task`) both read. Its :attr:`TaskSettings.episode_settings` is what the resume
rule (:func:`multiturn.engine.store.same_settings`) compares with the task's settings file
(``episodes_<task>.settings.json``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.args import check_local_model
from models.default_model import DEFAULT_MODEL
from models.loading import play_batch_size, resolve_model
from models.ref import ModelRef
from models.retry import DEFAULT_MAX_REPLY_CHARS, RetryPolicy
from multiturn import registry
from multiturn.engine.flags import ROLE_FLAGS
from multiturn.engine.scheduler import DEFAULT_MAX_LIVE, check_gen_kwargs
from multiturn.engine.store import TaskStore, settings_id
from multiturn.game import TaskSpec
from plumbing import run_folder
from plumbing.checks import DEFAULT_SEED
from plumbing.errors import UserError
from plumbing.secrets import redact_secret_keys

#: the run settings that change a task's episodes: resuming under other values is refused
MODEL_SETTING_KEYS = ("model", "model_args", "model_b", "model_args_b", "judge_model", "judge_model_args")


@dataclass(frozen=True)
class PlaySettings:
    """One ``triangulate play`` run's settings, built once (:meth:`from_args`) and the engine's only input
    (:func:`multiturn.engine.runner.run_tasks`)."""

    #: ``--tasks`` as given (groups not expanded), in order
    tasks: tuple[str, ...]
    #: the player as given (``--model``/``--model_args``, parsed once): it names the run (folder, results)
    ref: ModelRef
    #: the player as its backend gets it (:func:`models.loading.resolve_model`): the embedded model's defaults when
    #: neither flag is given, the runner's additions (``enable_prefix_caching`` for vLLM)
    backend: ModelRef
    #: the second player's and the judge's backends, when a task has the role and its flags give it its own
    #: model (else None: the player plays both)
    player_b: ModelRef | None = None
    judge: ModelRef | None = None
    #: ``--limit``: the first N episodes per task, or a fraction in (0, 1); None for all
    limit: int | float | None = None
    #: ``--seed``: stimuli, episode order and sampling
    seed: int = DEFAULT_SEED
    #: ``--gen_kwargs`` (player roles) and ``--judge_gen_kwargs`` (judge role) overrides
    gen_kwargs: Mapping[str, Any] = field(default_factory=dict)
    judge_gen_kwargs: Mapping[str, Any] = field(default_factory=dict)
    #: ``--task_args``: task options, each task takes those it declares
    task_args: Mapping[str, Any] = field(default_factory=dict)
    #: ``--batch_size`` (an int or ``auto``) and ``--device`` for local backends
    batch_size: int | str = 1
    device: str | None = None
    #: ``--max_live``: episodes in flight (0 = all)
    max_live: int = 32
    #: ``--request_timeout`` (seconds a backend call may take; None: no limit) and ``--retries`` (attempts per call)
    request_timeout: float | None = None
    retries: int = 4
    #: False with ``--no_prefix_cache``, else None (the prefix cache on)
    prefix_cache: bool | None = None
    #: ``--max_reply_chars``: a longer reply is cut to this many characters (the cut is recorded); None: no cap
    max_reply_chars: int | None = DEFAULT_MAX_REPLY_CHARS
    #: ``--output_path`` (None: nothing stored), ``--overwrite`` (start over) and ``--wait_lock`` (wait for another
    #: process on the same task instead of refusing)
    output_path: str | None = None
    overwrite: bool = False
    wait_lock: bool = False
    #: ``--wandb_args``, ``--wandb_config_args``, ``--hf_hub_log_args``: lm-eval's loggers (None: not logged)
    wandb_args: Mapping[str, Any] | None = None
    wandb_config_args: Mapping[str, Any] | None = None
    hf_hub_log_args: Mapping[str, Any] | None = None

    @classmethod
    def for_model(cls, ref: ModelRef, tasks: tuple[str, ...], **values: Any) -> PlaySettings:
        """The settings of ``ref`` playing ``tasks`` (its backend resolved here); ``values``: the other fields."""
        seed = values.get("seed")
        backend = resolve_model(ref, device=values.get("device"), prefix_cache=values.get("prefix_cache"), seed=seed)
        return cls(tasks=tuple(tasks), ref=ref, backend=backend, **values)

    @classmethod
    def from_args(cls, args: Any, roles: set[str] | frozenset[str]) -> PlaySettings:
        """The settings of ``triangulate play``'s parsed command line ``args`` (an ``argparse.Namespace``) for tasks
        with ``roles``: the edge where each ``--model_args*`` becomes a :class:`ModelRef`. ``UserError`` for a bad value."""
        for flag in ("gen_kwargs", "judge_gen_kwargs"):
            check_gen_kwargs(getattr(args, flag), f"--{flag}")
        prefix_cache = False if getattr(args, "no_prefix_cache", False) else None
        seed = int(args.seed)
        # each model given, keyed by its field: the player's backend, and each role that has a model of its own (a role
        # with --model_args_b/--judge_model_args alone keeps the player's registry name)
        given = {"backend": (args.model, args.model_args)}
        for role, (model_flag, args_flag) in ROLE_FLAGS.items():
            other, other_args = getattr(args, model_flag), getattr(args, args_flag)
            if role in roles and (other or other_args):
                given[role] = (other or args.model or DEFAULT_MODEL, other_args)
        refs = {role: ModelRef.parse(model, model_args) for role, (model, model_args) in given.items()}  # the one parse each
        ref = refs["backend"]
        check_local_model(ref.args)  # a missing local model folder: one line, before --output_path is made
        max_live = args.max_live if args.max_live is not None else DEFAULT_MAX_LIVE
        live = max_live or DEFAULT_MAX_LIVE
        batch_size = args.batch_size if args.batch_size is not None else play_batch_size(ref.model, ref.args, args.device, live)
        backends = {role: resolve_model(r, device=args.device, prefix_cache=prefix_cache, seed=seed) for role, r in refs.items()}
        return cls(
            tasks=tuple(t.strip() for t in str(args.tasks).split(",") if t.strip()),
            ref=ref,
            **backends,
            limit=args.limit,
            seed=seed,
            gen_kwargs=dict(args.gen_kwargs or {}),
            judge_gen_kwargs=dict(args.judge_gen_kwargs or {}),
            task_args=dict(args.task_args or {}),
            batch_size=batch_size,
            device=args.device,
            max_live=max_live,
            request_timeout=args.request_timeout,
            retries=max(1, int(args.retries)),
            prefix_cache=prefix_cache,
            max_reply_chars=getattr(args, "max_reply_chars", DEFAULT_MAX_REPLY_CHARS),
            output_path=getattr(args, "output_path", None),
            overwrite=bool(getattr(args, "overwrite", False)),
            wait_lock=bool(getattr(args, "wait_lock", False)),
            **{key: getattr(args, key, None) for key in ("wandb_args", "wandb_config_args", "hf_hub_log_args")},
        )

    def retry_policy(self) -> RetryPolicy:
        """How a failing backend call is retried and how long a reply may be (``--retries``, ``--request_timeout``,
        ``--max_reply_chars``)."""
        return RetryPolicy(attempts=self.retries, timeout=self.request_timeout, max_reply_chars=self.max_reply_chars)

    @property
    def named(self) -> ModelRef:
        """The model that names the run: the embedded model by its own name, any other as its backend reaches it."""
        return self.ref if self.ref.embedded else self.backend

    def folder(self) -> str:
        """The model's folder under ``--output_path`` (:attr:`models.ref.ModelRef.folder`)."""
        return self.named.folder

    @functools.cached_property
    def model_dir(self) -> Path | None:
        """The model's folder of this run's results and episodes (None without ``--output_path``), named once."""
        return None if self.output_path is None else run_folder.model_dir(self.output_path, self.folder())

    def role_models(self) -> dict[str, ModelRef]:
        """``{role: backend}`` of the roles with a backend of their own (``player_b``, ``judge``)."""
        return {role: ref for role, ref in (("player_b", self.player_b), ("judge", self.judge)) if ref is not None}

    def _models(self, form: Callable[[ModelRef], str]) -> dict[str, Any]:
        """The :data:`MODEL_SETTING_KEYS` of this run (roles without their own model left out), model_args in ``form``."""
        out: dict[str, Any] = {"model": self.backend.model, "model_args": form(self.backend)}
        for role, ref in self.role_models().items():
            out.update(zip(ROLE_FLAGS[role], (ref.model, form(ref))))
        return out

    def model_config(self) -> dict[str, Any]:
        """The models as the results JSON's ``config`` records them (model_args redacted, in lm-eval's string form)."""
        return self._models(lambda ref: ref.args_string)

    def model_settings(self) -> dict[str, Any]:
        """The models' part of the resume rule (:attr:`models.ref.ModelRef.resume_args`), with the reply cap when it
        is not the default (a cut reply is stored and scored cut; runs played at the default keep their settings)."""
        capped = {} if self.max_reply_chars == DEFAULT_MAX_REPLY_CHARS else {"max_reply_chars": self.max_reply_chars}
        return {**self._models(lambda ref: ref.resume_args), **capped}

    def config(self) -> dict[str, Any]:
        """The run's ``config`` for the results JSON (the backend's decoding switches are added by the runner)."""
        return {
            **self.model_config(),
            "model_name": self.named.name,
            "batch_size": self.batch_size,
            "device": self.device,
            "limit": self.limit,
            "gen_kwargs": redact_secret_keys(self.gen_kwargs),  # an auth_token=... is sent, never stored
            "judge_gen_kwargs": redact_secret_keys(self.judge_gen_kwargs),
            "task_args": dict(self.task_args),
            "random_seed": self.seed,
            "max_live": self.max_live,
            "request_timeout": self.request_timeout,
            "tasks": list(self.tasks),
        }

    @functools.cached_property
    def plan(self) -> tuple[TaskSettings, ...]:
        """Every task of this run (groups expanded, in order) with what it is played with: made once, on first read,
        and read by "nothing left to play", the runner and the loggers alike (each task's instances made once)."""
        return tuple(self.for_task(registry.get_task(name, self.task_args)) for name in registry.expand(list(self.tasks)))

    def for_task(self, task: TaskSpec) -> TaskSettings:
        """``task`` as this run plays it (:class:`TaskSettings`)."""
        return TaskSettings(
            task,
            limit=self.limit,
            seed=self.seed,
            gen_kwargs=self.gen_kwargs,
            judge_gen_kwargs=self.judge_gen_kwargs,
            max_live=self.max_live,
            retry=self.retry_policy(),
            model_dir=self.model_dir,
            overwrite=self.overwrite,
            models=self.model_settings(),
        )


@dataclass(frozen=True)
class TaskSettings:
    """One task as :func:`multiturn.engine.runner.run_task` plays it: the task, its episodes' settings and where its
    files go (made by :meth:`PlaySettings.for_task`; a test builds one directly)."""

    task: TaskSpec
    #: the first N episodes, or a fraction in (0, 1); None for all
    limit: int | float | None = None
    seed: int = DEFAULT_SEED
    #: the player roles' and the judge role's generation kwargs overrides
    gen_kwargs: Mapping[str, Any] = field(default_factory=dict)
    judge_gen_kwargs: Mapping[str, Any] = field(default_factory=dict)
    #: episodes in flight (0 or None: all)
    max_live: int | None = DEFAULT_MAX_LIVE
    retry: RetryPolicy | None = None
    #: the model folder the task's files go to (:class:`multiturn.engine.store.TaskStore`); None: nothing stored
    model_dir: Path | None = None
    #: start over instead of resuming the stored episodes
    overwrite: bool = False
    #: the models' part of the resume rule (:meth:`PlaySettings.model_settings`); empty when no run names them
    models: Mapping[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def store(self) -> TaskStore | None:
        """The task's files in :attr:`model_dir` (None: nothing stored)."""
        return None if self.model_dir is None else TaskStore(self.model_dir, self.task.name)

    @functools.cached_property
    def all_instances(self) -> list[dict[str, Any]]:
        """Every instance the task makes for :attr:`seed`."""
        return self.task.instances(self.seed)

    @functools.cached_property
    def instances(self) -> list[dict[str, Any]]:
        """The instances this run plays (:func:`select_instances`: the first :attr:`limit`)."""
        return select_instances(self.all_instances, self.limit)

    @property
    def wanted(self) -> list[str]:
        """The ids of :attr:`instances`, in order."""
        return [str(inst["id"]) for inst in self.instances]

    @functools.cached_property
    def episode_settings(self) -> dict[str, Any]:
        """What stored episodes of the task must have been played with to be resumed (:func:`episode_settings`)."""
        return episode_settings(self.task, self.seed, self.gen_kwargs, self.judge_gen_kwargs, self.models)

    @functools.cached_property
    def settings_id(self) -> str:
        """The fingerprint every record of the task carries (:func:`multiturn.engine.store.settings_id`)."""
        return settings_id(self.episode_settings)


def select_instances(instances: Sequence[Mapping[str, Any]], limit: int | float | None) -> list[dict[str, Any]]:
    """The first ``limit`` instances (a float in (0, 1) is a fraction, as in lm-eval); ids must be unique."""
    items = [dict(inst) for inst in instances]
    ids = [str(inst.get("id", "")) for inst in items]
    if any(not i for i in ids):
        raise ValueError("every instance needs a non-empty 'id'")
    if len(set(ids)) != len(ids):
        raise ValueError("instance ids are not unique")
    if limit is None:
        return items
    if isinstance(limit, float) and 0 < limit < 1:
        return items[: int(math.ceil(len(items) * limit))]
    if limit < 0:
        raise UserError(f"--limit must be positive, got {limit}")
    return items[: int(limit)]


def episode_settings(
    task: TaskSpec,
    seed: int,
    gen_kwargs: Mapping[str, Any] | None,
    judge_gen_kwargs: Mapping[str, Any] | None,
    models: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The settings a resume must match: the models (:func:`model_settings`), the task's config and scoring
    ``version``, seed, gen_kwargs. ``--limit`` is left out on purpose: it picks the first N of the same episodes,
    so a larger limit extends a run and a smaller one reports a subset; neither changes an episode."""
    return {
        **dict(models or {}),
        "task": task.config(),
        "scoring_version": scoring_version(task),
        "seed": seed,
        "gen_kwargs": redact_secret_keys(gen_kwargs),  # a secret-named kwarg (auth_token=...) is never stored
        "judge_gen_kwargs": redact_secret_keys(judge_gen_kwargs),
    }


def scoring_version(task: TaskSpec) -> Any:
    """The task's scoring :attr:`multiturn.game.TaskSpec.version`."""
    return task.version
