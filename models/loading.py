"""Loading a model: lm-eval's registry plus our overrides (model arguments: :mod:`models.args`; names: :mod:`models.naming`),
and the one place that derives a model as the runner runs it (:func:`resolve_model`: the embedded model's defaults,
:func:`runner_model_args`; :func:`play_batch_size`).

Every backend comes from lm-eval's model registry (``hf``, ``vllm``, ``local-chat-completions``, ...).
:func:`register_lm_class` lets a later module swap in an ``LM`` subclass for one registry name
(issue 7: a KV-prefix-reusing ``hf`` for multi-turn play) without touching the engine or the CLI;
:func:`load_lm` resolves overrides first and lm-eval's registry second.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from models.args import API_MODEL_NAMES, HF_MODEL_NAMES, VLLM_MODEL_NAMES, prefix_cache_enabled, register_secrets, scrub_secrets
from models.default_model import DEFAULT_MODEL, default_model_kwargs
from models.ref import ModelRef
from plumbing.callables import takes_keyword
from plumbing.errors import UserError

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

    import models.chance  # noqa: F401  (registers the ``random`` chance player)

    try:
        return get_model(model)
    except (ValueError, KeyError) as exc:
        known = sorted(set(model_registry.keys()) | set(_LM_CLASS_OVERRIDES))
        raise UserError(f"unknown model {model!r}; lm-eval models: {', '.join(known)}") from exc


def _runner_lm_class(model: str, prefix_cache: bool | None):
    """The runner's own class for ``model`` (prefix-cached hf, the API client), or None: lm-eval's. Each module is
    imported only for its models (torch for hf, aiohttp for the API), so a chance or scripted player loads neither."""
    if model in HF_MODEL_NAMES:
        from models.prefix_cache import runner_lm_class  # torch, transformers

        return runner_lm_class(model, prefix_cache, _LM_CLASS_OVERRIDES)
    if model in API_MODEL_NAMES:
        from models.api import api_lm_class  # aiohttp (lm-eval's API models)

        return api_lm_class(model, _LM_CLASS_OVERRIDES)
    return None


def runner_model_args(model: str, model_args: Mapping[str, Any], enabled: bool | None = None, seed: int | None = None) -> dict[str, Any]:
    """model_args as the runner passes them: for vLLM, ``enable_prefix_caching=True`` and ``seed`` (play's
    ``--seed``: vLLM samples in its own engine process, which the runner's ``torch.manual_seed`` does not reach;
    lm-eval's ``vllm`` would otherwise seed every run with 1234) unless the user set them."""
    out = dict(model_args)
    if model in VLLM_MODEL_NAMES and prefix_cache_enabled(enabled):
        out.setdefault("enable_prefix_caching", True)
    if model in VLLM_MODEL_NAMES and seed is not None:
        out.setdefault("seed", int(seed))
    return out


def play_batch_size(model: str | None, model_args: Mapping[str, Any], device: str | None, live: int) -> int:
    """``triangulate play``'s default ``--batch_size``: ``live`` (the episodes in flight) for an ``hf`` model on
    a GPU (``device`` or model_args' ``device`` naming cuda, or neither naming one and CUDA present), else 1.
    The embedded SmolLM2 (``model`` None) runs on the CPU unless a device is named. ``vllm``: ``live`` on any
    device (lm-eval's ``vllm`` hands vLLM one ``generate`` call per batch, so batch 1 would decode the live
    episodes one at a time: 16 replies took 30.7 s at batch 1 and 5.3 s in one call on this project's CPU)."""
    if model in VLLM_MODEL_NAMES:
        return max(int(live), 1)
    if model is not None and model not in HF_MODEL_NAMES:
        return 1
    where = device or model_args.get("device")
    if where:
        return max(int(live), 1) if str(where).startswith("cuda") else 1
    import torch  # only for an hf model with no device named: is CUDA there?

    on_gpu = model is not None and torch.cuda.is_available()
    return max(int(live), 1) if on_gpu else 1


def resolve_model(ref: ModelRef, *, device: str | None = None, prefix_cache: bool | None = None, seed: int | None = None) -> ModelRef:
    """The model as :func:`load_lm` builds its backend, without loading it: the embedded SmolLM2 (``ref.model`` None)
    gets its registry name and, with no model_args, its default model_args; the runner's additions
    (:func:`runner_model_args`; ``seed``: play's ``--seed``) are in."""
    model, args = ref.model, ref.args
    if model is None:
        model = DEFAULT_MODEL
        if not args:
            args = default_model_kwargs(device=device or "cpu")
    backend_args = runner_model_args(model, args, prefix_cache, seed)
    return ref.with_args(model, backend_args)


def load_lm(backend: ModelRef, *, batch_size: int | str | None = 1, device: str | None = None, prefix_cache: bool | None = None):
    """Build an lm-eval LM of ``backend`` (a :func:`resolve_model` result: its registry name and model_args as given
    to the backend).

    ``prefix_cache`` (None = on; ``--no_prefix_cache`` passes False): ``hf`` is
    served by :class:`models.prefix_cache.PrefixCacheHFLM` (per-episode KV prefix reuse); ``local-chat-completions``
    is served by :class:`models.api.LocalChatCompletionsLM` (no empty ``stop`` list in its requests).
    """
    model, args = backend.model, backend.args_dict()
    if model is None:
        raise ValueError("load_lm takes a resolved model (models.loading.resolve_model)")
    register_secrets(args)
    lm_class = _runner_lm_class(model, prefix_cache) or resolve_lm_class(model)
    extra = {"batch_size": batch_size, "device": device or _hf_default_device(model, args)}
    if not all(takes_keyword(lm_class, key) for key in extra):  # a backend that does not take batch_size/device
        extra = {}
    try:
        return lm_class.create_from_arg_obj(args, extra)
    except (TypeError, ValueError, OSError, ImportError) as exc:  # unknown model_args key, bad path, missing extra
        log.debug("loading %s failed", model, exc_info=True)
        detail = scrub_secrets(f"{type(exc).__name__}: {exc}", args)
        raise UserError(
            f"cannot load --model {model} with --model_args {backend.args_string or '(none)'}: {detail} "
            "(check the model name or path and the model_args keys)"
        ) from exc


def _hf_default_device(model: str, args: Mapping[str, Any]) -> str | None:
    """The device for an ``hf`` model when neither ``--device`` nor model_args name one: CUDA when present, else the
    CPU, as lm-eval's ``HFLM`` chooses for an unnamed device (its constructor's own default, ``cuda``, fails on a
    machine without CUDA; ``lm_eval``'s CLI passes ``cuda:0``, which falls back). None: the backend's own default."""
    if model not in HF_MODEL_NAMES or args.get("device"):
        return None
    import torch  # an hf model loads torch anyway

    return "cuda" if torch.cuda.is_available() else "cpu"


def decoding_config(lm: Any) -> dict[str, Any]:
    """How a loaded backend decodes, for a run's config: its LM class and, for the prefix cache
    (:class:`models.prefix_cache.PrefixCacheHFLM`), its switches."""
    out: dict[str, Any] = {"lm_class": type(lm).__name__}
    if hasattr(lm, "prefix_cache_enabled"):
        out["prefix_cache"] = bool(lm.prefix_cache_enabled)
        out["prompt_lookup_tokens"] = int(getattr(lm, "prompt_lookup_tokens", 0))
    return out
