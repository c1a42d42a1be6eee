"""Model backends for the side runner: lm-eval's registry, secret-free model_args and log lines (names: :mod:`multiturn.backends.naming`).

Every backend comes from lm-eval's model registry (``hf``, ``vllm``, ``local-chat-completions``, ...).
:func:`register_lm_class` lets a later module swap in an ``LM`` subclass for one registry name
(issue 7: a KV-prefix-reusing ``hf`` for multi-turn play) without touching the engine or the CLI;
:func:`load_lm` resolves overrides first and lm-eval's registry second.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from multiturn.backends.naming import parse_model_args, redact_url
from plumbing.errors import UserError
from plumbing.secrets import (  # noqa: F401  (re-exported: the scrubber's home is plumbing.secrets)
    SECRET_KEY_PATTERN,
    LogScrubber,
    env_secret_values,
    register_secret_values,
    scrub,
    secret_values_of,
)

log = logging.getLogger(__name__)


_LM_CLASS_OVERRIDES: dict[str, Callable[..., Any]] = {}


def register_lm_class(model: str, lm_class: Callable[..., Any]) -> None:
    """Use ``lm_class`` (an lm-eval ``LM`` subclass) whenever ``triangulate play --model <model>`` is asked for."""
    _LM_CLASS_OVERRIDES[model] = lm_class


def resolve_lm_class(model: str):
    """The LM class for a registry name: a play-specific override, else lm-eval's registry entry."""
    if model in _LM_CLASS_OVERRIDES:
        return _LM_CLASS_OVERRIDES[model]
    import lm_eval.models  # noqa: F401  (fills the registry)
    from lm_eval.api.registry import get_model, model_registry

    import multiturn.backends.chance  # noqa: F401  (registers the ``random`` chance player)

    try:
        return get_model(model)
    except (ValueError, KeyError) as exc:
        known = sorted(set(model_registry.keys()) | set(_LM_CLASS_OVERRIDES))
        raise UserError(f"unknown model {model!r}; lm-eval models: {', '.join(known)}") from exc


def load_lm(
    model: str | None,
    model_args: str | Mapping[str, Any] | None = None,
    *,
    batch_size: int | str | None = 1,
    device: str | None = None,
    prefix_cache: bool | None = None,
):
    """Build an lm-eval LM; ``model=None`` means the embedded SmolLM2 (:mod:`multiturn.backends.default_model`).

    ``prefix_cache`` (None = on; ``--no_prefix_cache`` passes False): ``hf`` is
    served by :class:`multiturn.backends.prefix_cache.PrefixCacheHFLM` (per-episode KV prefix reuse) and ``vllm``
    gets ``enable_prefix_caching=True`` unless model_args set it; ``local-chat-completions`` is served by
    :class:`multiturn.backends.api.LocalChatCompletionsLM` (no empty ``stop`` list in its requests).
    Returns ``(lm, model_name, model_args_dict)`` where ``model_name`` is the registry name used.
    """
    args = parse_model_args(model_args)
    register_secrets(args)
    if model is None:
        from multiturn.backends.default_model import DEFAULT_MODEL, default_model_args

        model = DEFAULT_MODEL
        if not args:
            args = parse_model_args(default_model_args(device=device or "cpu"))
    from multiturn.backends.prefix_cache import runner_lm_class, runner_model_args

    args = runner_model_args(model, args, prefix_cache)
    from multiturn.backends.api import api_lm_class

    lm_class = (
        runner_lm_class(model, prefix_cache, _LM_CLASS_OVERRIDES) or api_lm_class(model, _LM_CLASS_OVERRIDES) or resolve_lm_class(model)
    )
    extra = {"batch_size": batch_size, "device": device}
    try:
        try:
            lm = lm_class.create_from_arg_obj(args, extra)
        except TypeError as exc:  # a backend that does not take batch_size/device
            if "unexpected keyword" not in str(exc):
                raise
            lm = lm_class.create_from_arg_obj(args, {})
    except (TypeError, ValueError, OSError, ImportError) as exc:  # unknown model_args key, bad path, missing extra
        log.debug("loading %s failed", model, exc_info=True)
        detail = scrub_secrets(f"{type(exc).__name__}: {exc}", args)
        raise UserError(
            f"cannot load --model {model} with --model_args {model_args_string(args) or '(none)'}: {detail} "
            "(check the model name or path and the model_args keys)"
        ) from exc
    return lm, model, args


def secret_values(model_args: str | Mapping[str, Any] | None) -> list[str]:
    """The credential values in model_args (secret-looking keys, URL passwords), longest first."""
    return secret_values_of(parse_model_args(model_args).items())


def scrub_secrets(text: str, model_args: str | Mapping[str, Any] | None = None) -> str:
    """``text`` with every credential replaced by ``<redacted>``: :func:`plumbing.secrets.scrub` (the one
    scrubber: registered values, secret-named keys, URL passwords, secret-named environment variables)
    plus the values of ``model_args``."""
    return scrub(text, secret_values(model_args))


def register_secrets(model_args: str | Mapping[str, Any] | None) -> None:
    """Remember the credentials of ``model_args`` for every later scrub in this process (:func:`load_lm` calls it)."""
    register_secret_values(secret_values(model_args))


class OnceFilter(logging.Filter):
    """Lets a WARNING (or INFO) line through once per process: lm-eval repeats its ``--metadata`` hint per
    task load and transformers its cache notices per model call. Errors always pass. Lines of the loggers in
    :attr:`BY_LINE` count as repeats when they come from the same source line (the hint names each task)."""

    BY_LINE = ("lm_eval.api.task", "transformers")

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        by_line = record.levelno >= logging.WARNING and record.name.startswith(self.BY_LINE)
        key = (record.name, f"{record.pathname}:{record.lineno}" if by_line else record.getMessage())
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


def install_log_scrubber() -> None:
    """Put the secret scrubber (:class:`plumbing.secrets.LogScrubber`) and :class:`OnceFilter` on every handler of
    the root, ``lm_eval`` and ``transformers`` loggers (idempotent)."""
    for logger in (logging.getLogger(), logging.getLogger("lm_eval"), logging.getLogger("transformers")):
        for handler in logger.handlers:
            if not any(isinstance(f, LogScrubber) for f in handler.filters):
                handler.addFilter(LogScrubber())
            if not any(isinstance(f, OnceFilter) for f in handler.filters):
                handler.addFilter(OnceFilter())


def redact_model_args(model_args: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """model_args without credentials: secret-looking keys are replaced by ``"<redacted>"``, URL logins dropped."""
    out: dict[str, Any] = {}
    for key, value in parse_model_args(model_args).items():
        if SECRET_KEY_PATTERN.search(str(key)):
            out[key] = "<redacted>"
        elif isinstance(value, str):
            out[key] = redact_url(value)
        else:
            out[key] = value
    return out


def model_args_string(model_args: Mapping[str, Any]) -> str:
    """A redacted dict back to lm-eval's ``key=val,...`` form (as results JSONs store it)."""
    return ",".join(f"{k}={v}" for k, v in redact_model_args(model_args).items())
