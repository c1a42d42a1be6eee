"""lm-eval's OpenAI-compatible chat backend as the side runner sends it: no empty ``stop`` list.

lm-eval's ``local-chat-completions`` has no tokenizer, so it knows no EOS string, and a request whose
``until`` is empty (most play tasks' turns) goes out with ``"stop": []``.
OpenAI and vLLM read that as "no stop strings"; ``transformers serve`` hands it to transformers'
``StopStringCriteria``, which rejects an empty list ("Stop string preprocessing was unable to identify
tokens matching one or more of the supplied stop string(s)") and the server answers 500 to every
request. :class:`LocalChatCompletionsLM` leaves ``stop`` out of the payload when it is empty, which
means the same thing to every server. :func:`api_lm_class` is how :func:`models.loading.load_lm`
picks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lm_eval.models.openai_completions import LocalChatCompletion


class LocalChatCompletionsLM(LocalChatCompletion):
    """``local-chat-completions`` that omits an empty ``stop`` from the request body."""

    def _create_payload(self, messages, generate=False, gen_kwargs=None, seed=1234, eos=None, **kwargs) -> dict:
        payload = super()._create_payload(messages, generate=generate, gen_kwargs=gen_kwargs, seed=seed, eos=eos, **kwargs)
        return without_empty_stop(payload)


def without_empty_stop(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The request body without ``stop`` when it is empty (``[]``, ``[None]`` or ``""``)."""
    out = dict(payload)
    stop = out.get("stop")
    if isinstance(stop, (list, tuple)):
        stop = [s for s in stop if s]
        out["stop"] = stop
    if not stop:
        out.pop("stop", None)
    return out


#: registry names the runner serves with its own class instead of lm-eval's
API_LM_CLASSES: dict[str, type] = {"local-chat-completions": LocalChatCompletionsLM}


def api_lm_class(model: str, overrides: Mapping[str, Any] | None = None):
    """The runner's class for an API backend name, or None (lm-eval's entry, or a play-specific override)."""
    if model in (overrides or {}):
        return None
    return API_LM_CLASSES.get(model)


def install_in_lm_eval_registry() -> None:
    """Make lm-eval's own registry (``triangulate eval --model local-chat-completions``) give the runner's
    classes too. lm-eval's ``Registry.register`` refuses to re-bind an alias, so the entry is replaced
    under the registry's lock (idempotent)."""
    import lm_eval.models  # noqa: F401  (fills the registry)
    from lm_eval.api.registry import model_registry

    with model_registry._lock:
        for name, cls in API_LM_CLASSES.items():
            model_registry._objs[name] = cls
