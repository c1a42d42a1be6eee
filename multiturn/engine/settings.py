"""What one ``triangulate play`` run was asked to do (:class:`PlaySettings`), and the one rule that says whether
stored episodes were played with the same settings (:func:`episode_settings`, :func:`same_settings`).

``triangulate play`` builds one ``PlaySettings`` from its command line and the parsed model arguments (each
``--model_args*`` is parsed here, once) before any model loads. The three places that compare runs use it:
"nothing left to play" (:func:`multiturn.engine.runner.unchanged_results`, before loading), the resume check
(:meth:`multiturn.engine.store.TaskStore.check_settings`, under the task's lock) and the settings file it writes
(``episodes_<task>.settings.json``): each compares :func:`episode_settings` with :func:`same_settings`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from models.args import check_local_model, model_args_string, parse_model_args, play_batch_size
from models.loading import resolve_model
from models.naming import model_folder_name, model_name
from models.retry import DEFAULT_MAX_REPLY_CHARS, RetryPolicy
from multiturn.game import TaskSpec
from plumbing.errors import UserError
from plumbing.secrets import redact_secret_keys

#: the run settings that change a task's episodes: resuming under other values is refused
MODEL_SETTING_KEYS = ("model", "model_args", "model_b", "model_args_b", "judge_model", "judge_model_args")
#: model_args that say how a model is reached, not what it answers: a served model comes back on another
#: port after a restart (the suite's serve-once sweep), with other concurrency or timeouts, and still plays
#: the same episodes, so a resume may change them
TRANSPORT_ARGS = frozenset(
    {"base_url", "num_concurrent", "max_retries", "timeout", "api_key", "verify_certificate", "batch_size", "device"}
)


@dataclass(frozen=True)
class PlaySettings:
    """One ``triangulate play`` run's settings, built once (:meth:`from_args`) and read by every step after."""

    #: ``--tasks`` as given (groups not expanded), in order
    tasks: tuple[str, ...]
    #: the lm-eval registry name that plays (the embedded model's when ``--model`` is not given)
    model: str
    #: the player's model arguments as its backend gets them: ``--model_args`` parsed once, the embedded
    #: model's defaults when neither ``--model`` nor ``--model_args`` is given, the runner's additions
    #: (``enable_prefix_caching`` for vLLM)
    model_args: dict[str, Any]
    #: neither ``--model`` nor ``--model_args``: the embedded SmolLM2 (its folder is named after the model)
    embedded: bool
    #: the second player's backend name and model arguments, when a task has the role and ``--model_b`` or
    #: ``--model_args_b`` gives it its own (else None: the player plays both)
    model_b: str | None
    model_args_b: dict[str, Any] | None
    #: the judge's backend and model arguments, when a task has the role and ``--judge_model`` or
    #: ``--judge_model_args`` gives it its own (else None: the player judges)
    judge_model: str | None
    judge_model_args: dict[str, Any] | None
    #: ``--limit``: the first N episodes per task, or a fraction in (0, 1); None for all
    limit: int | float | None
    #: ``--seed``: stimuli, episode order and sampling
    seed: int
    #: ``--gen_kwargs`` (player roles) and ``--judge_gen_kwargs`` (judge role) overrides
    gen_kwargs: dict[str, Any]
    judge_gen_kwargs: dict[str, Any]
    #: ``--task_args``: task options, each task takes those it declares
    task_args: dict[str, Any]
    #: ``--batch_size`` (an int or ``auto``) and ``--device`` for local backends
    batch_size: int | str
    device: str | None
    #: ``--max_live``: episodes in flight (0 = all)
    max_live: int
    #: ``--request_timeout`` (seconds a backend call may take; None: no limit) and ``--retries`` (attempts per call)
    request_timeout: float | None
    retries: int
    #: False with ``--no_prefix_cache``, else None (the prefix cache on)
    prefix_cache: bool | None
    #: ``--max_reply_chars``: a longer reply is cut to this many characters (the cut is recorded); None: no cap
    max_reply_chars: int | None = DEFAULT_MAX_REPLY_CHARS
    #: ``--output_path`` (None: nothing stored), ``--overwrite`` (start over) and ``--wait_lock`` (wait for another
    #: process on the same task instead of refusing)
    output_path: str | None = None
    overwrite: bool = False
    wait_lock: bool = False

    @classmethod
    def from_args(cls, args: Any, roles: set[str] | frozenset[str]) -> PlaySettings:
        """The settings of ``triangulate play``'s parsed command line ``args`` (an ``argparse.Namespace``) for tasks
        with ``roles``; every ``--model_args*`` is parsed here, once. ``UserError`` for a bad value."""
        from multiturn.engine.scheduler import DEFAULT_MAX_LIVE

        prefix_cache = False if getattr(args, "no_prefix_cache", False) else None
        parsed = parse_model_args(args.model_args)
        check_local_model(parsed)  # a missing local model folder: one line, before --output_path is made
        seed = int(args.seed)
        model, model_args = resolve_model(args.model, parsed, device=args.device, prefix_cache=prefix_cache, seed=seed)
        others: dict[str, tuple[str, dict[str, Any]] | None] = {"player_b": None, "judge": None}
        for role, other, other_args in (("player_b", args.model_b, args.model_args_b), ("judge", args.judge_model, args.judge_model_args)):
            if role in roles and (other or other_args):
                resolved = resolve_model(
                    other or model, parse_model_args(other_args), device=args.device, prefix_cache=prefix_cache, seed=seed
                )
                others[role] = resolved
        model_b, model_args_b = others["player_b"] or (None, None)
        judge_model, judge_model_args = others["judge"] or (None, None)
        return cls(
            tasks=tuple(t.strip() for t in str(args.tasks).split(",") if t.strip()),
            model=model,
            model_args=model_args,
            embedded=args.model is None and not parsed,
            model_b=model_b,
            model_args_b=model_args_b,
            judge_model=judge_model,
            judge_model_args=judge_model_args,
            limit=limit_value(args.limit),
            seed=seed,
            gen_kwargs=dict(args.gen_kwargs or {}),
            judge_gen_kwargs=dict(args.judge_gen_kwargs or {}),
            task_args=dict(args.task_args or {}),
            batch_size=batch_size_value(str(args.batch_size)) if args.batch_size is not None else default_batch_size(args, parsed),
            device=args.device,
            max_live=args.max_live if args.max_live is not None else DEFAULT_MAX_LIVE,
            request_timeout=timeout_value(args.request_timeout),
            retries=max(1, int(args.retries)),
            prefix_cache=prefix_cache,
            max_reply_chars=getattr(args, "max_reply_chars", DEFAULT_MAX_REPLY_CHARS),
            output_path=getattr(args, "output_path", None),
            overwrite=bool(getattr(args, "overwrite", False)),
            wait_lock=bool(getattr(args, "wait_lock", False)),
        )

    def retry_policy(self) -> RetryPolicy:
        """How a failing backend call is retried and how long a reply may be (``--retries``, ``--request_timeout``,
        ``--max_reply_chars``)."""
        return RetryPolicy(attempts=self.retries, timeout=self.request_timeout, max_reply_chars=self.max_reply_chars)

    def folder(self) -> str:
        """The model's folder under ``--output_path`` (:func:`models.naming.model_folder_name`)."""
        return model_folder_name(*self._named())

    def model_name(self) -> str:
        """The model's name in the results JSON (:func:`models.naming.model_name`)."""
        return model_name(*self._named())

    def _named(self) -> tuple[str | None, dict[str, Any] | None]:
        return (None, None) if self.embedded else (self.model, self.model_args)

    def role_models(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """``{role: (model, model_args)}`` of the roles with a backend of their own (``player_b``, ``judge``)."""
        out = {}
        if self.model_b is not None:
            out["player_b"] = (self.model_b, dict(self.model_args_b or {}))
        if self.judge_model is not None:
            out["judge"] = (self.judge_model, dict(self.judge_model_args or {}))
        return out

    def models(self) -> dict[str, Any]:
        """The :data:`MODEL_SETTING_KEYS` of this run, model_args as parsed dicts (roles without their own model left out)."""
        out: dict[str, Any] = {"model": self.model, "model_args": dict(self.model_args)}
        for role, keys in (("player_b", ("model_b", "model_args_b")), ("judge", ("judge_model", "judge_model_args"))):
            if role in self.role_models():
                out.update(zip(keys, self.role_models()[role]))
        return out

    def model_config(self) -> dict[str, Any]:
        """The models as the results JSON's ``config`` records them (model_args redacted, in lm-eval's string form)."""
        return {key: model_args_string(value) if key.endswith("model_args") else value for key, value in self.models().items()}

    def model_settings(self) -> dict[str, Any]:
        """The models' part of the resume rule (:func:`model_settings`), with the reply cap when it is not the default
        (a cut reply is stored and scored cut; runs played at the default keep their settings)."""
        capped = {} if self.max_reply_chars == DEFAULT_MAX_REPLY_CHARS else {"max_reply_chars": self.max_reply_chars}
        return {**model_settings(self.models()), **capped}

    def config(self) -> dict[str, Any]:
        """The run's ``config`` for the results JSON (the backend's decoding switches are added by the caller)."""
        return {
            **self.model_config(),
            "model_name": self.model_name(),
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

    def episode_settings(self, task: TaskSpec) -> dict[str, Any]:
        """What stored episodes of ``task`` must have been played with to be resumed (:func:`episode_settings`)."""
        return episode_settings(task, self.seed, self.gen_kwargs, self.judge_gen_kwargs, self.model_settings())


def model_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`MODEL_SETTING_KEYS` of a run's ``config``, each ``*model_args`` (a stored string, or a parsed dict)
    without :data:`TRANSPORT_ARGS`, in lm-eval's string form."""
    out: dict[str, Any] = {}
    for key in MODEL_SETTING_KEYS:
        if key in config:
            value = config[key]
            if key.endswith("model_args") and (value or isinstance(value, Mapping)):  # a parsed {} is stored as "", as before
                value = model_args_string({k: v for k, v in parse_model_args(value).items() if k not in TRANSPORT_ARGS})
            out[key] = value
    return out


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


def batch_size_value(value: str) -> int | str:
    """``--batch_size``: a positive integer or lm-eval's ``auto``/``auto:N``."""
    if value == "auto" or value.startswith("auto:"):
        return value
    try:
        size = int(value)
    except ValueError:
        raise UserError(f"--batch_size must be an integer or 'auto', got {value!r}") from None
    if size < 1:
        raise UserError("--batch_size must be >= 1")
    return size


def default_batch_size(args: Any, model_args: Mapping[str, Any] | None = None) -> int:
    """No ``--batch_size``: batch 1 on a CPU, the live episodes for an hf model on a GPU
    (:func:`models.args.play_batch_size`); ``model_args``: ``args.model_args`` already parsed."""
    from multiturn.engine.scheduler import DEFAULT_MAX_LIVE

    parsed = parse_model_args(args.model_args) if model_args is None else model_args
    live = args.max_live if args.max_live is not None else DEFAULT_MAX_LIVE
    return play_batch_size(args.model, parsed, args.device, live or DEFAULT_MAX_LIVE)


def limit_value(value: float | None) -> int | float | None:
    """``--limit``: a count (an int) or a fraction in (0, 1); None for every episode."""
    if value is None:
        return None
    if value <= 0:
        raise UserError(f"--limit must be positive, got {value:g}")
    return value if value < 1 else int(value)


def timeout_value(value: float | None) -> float | None:
    """``--request_timeout``: positive seconds, or None for no limit."""
    if value is not None and value <= 0:
        raise UserError(f"--request_timeout must be a positive number of seconds, got {value:g}")
    return value


def canonical(value: Any) -> str:
    """The one form two settings are compared in (sorted keys, any value as its JSON or ``str``)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def same_settings(old: Any, new: Mapping[str, Any]) -> bool:
    """The one comparison rule: stored settings ``old`` equal ``new`` in :func:`canonical` form."""
    return canonical(old) == canonical(dict(new))


def settings_id(settings: Mapping[str, Any]) -> str:
    """The fingerprint of a run's settings that every episode record carries (``settings_id``): the first 16 hex
    digits of the SHA-256 of their :func:`canonical` JSON (what ``episodes_<task>.settings.json`` holds)."""
    return hashlib.sha256(canonical(settings).encode("utf-8", "replace")).hexdigest()[:16]


def settings_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """``"key: old -> new; ..."`` for every key whose :func:`canonical` value differs."""
    keys = [k for k in dict.fromkeys([*old, *new]) if canonical(old.get(k)) != canonical(new.get(k))]
    return "; ".join(f"{k}: {canonical(old.get(k))} -> {canonical(new.get(k))}" for k in keys)
