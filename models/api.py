"""lm-eval's OpenAI-compatible chat backend as the side runner sends it: no empty ``stop`` list.

lm-eval's ``local-chat-completions`` has no tokenizer, so it knows no EOS string, and a request whose
``until`` is empty (most play tasks' turns) goes out with ``"stop": []``.
OpenAI and vLLM read that as "no stop strings"; ``transformers serve`` hands it to transformers'
``StopStringCriteria``, which rejects an empty list ("Stop string preprocessing was unable to identify
tokens matching one or more of the supplied stop string(s)") and the server answers 500 to every
request. :class:`LocalChatCompletionsLM` leaves ``stop`` out of the payload when it is empty, which
means the same thing to every server.

lm-eval also reads an HTTP 200 whose body is no reply (``{"error": {...}}``, ``"content": null``, a malformed
``choices``) as an empty reply, which a game then scores as the model's answer. :class:`LocalChatCompletionsLM`
(what :func:`api_lm_class` gives :func:`models.loading.load_lm`: ``play``, ``score``'s judge) raises
:class:`ServerReplyError` instead, saying what the server sent: a backend failure, retried and, when it lasts,
recorded as a failed episode that a rerun plays again. ``triangulate eval`` keeps lm-eval's reading (:class:`EvalChatCompletionsLM`;
lm-eval has no failed sample: a raise would end the whole evaluation).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lm_eval.models.openai_completions import LocalChatCompletion

from models.args import API_MODEL_NAMES
from plumbing.checks import DEFAULT_SEED


class ServerReplyError(RuntimeError):
    """An HTTP 200 from a chat server whose body holds no reply text (the message quotes what it sent)."""


#: characters of a server's body quoted in a :class:`ServerReplyError`
BODY_EXCERPT = 300


def _excerpt(body: Any) -> str:
    text = json.dumps(body, ensure_ascii=False, default=str) if not isinstance(body, str) else body
    return text if len(text) <= BODY_EXCERPT else text[:BODY_EXCERPT] + f"... ({len(text)} characters)"


def chat_reply_texts(body: Any) -> list[str]:
    """The reply texts of one chat-completions response body, in ``index`` order; :class:`ServerReplyError`
    naming what the server sent when it is an error object, a choice has ``content: null`` or no text, or
    ``choices`` is missing or malformed."""
    if isinstance(body, dict) and body.get("error") is not None:
        raise ServerReplyError(f"the server answered HTTP 200 with an error instead of a reply: {_excerpt(body)}")
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ServerReplyError(f"the server answered HTTP 200 without a list of choices: {_excerpt(body)}")
    texts: dict[int, str] = {}
    for position, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice, dict) else None
        index = choice.get("index", position) if isinstance(choice, dict) else position
        if not isinstance(message, dict) or not isinstance(index, int) or not 0 <= index < len(choices) or index in texts:
            raise ServerReplyError(f"the server answered HTTP 200 with a malformed choice: {_excerpt(choice)}")
        content = message.get("content")
        if not isinstance(content, str):
            finish = choice.get("finish_reason")
            raise ServerReplyError(
                f"the server answered HTTP 200 with content {_excerpt(content)} instead of a reply text (finish_reason {finish!r})"
            )
        texts[index] = content
    return [texts[i] for i in range(len(choices))]


class LocalChatCompletionsLM(LocalChatCompletion):
    """``local-chat-completions`` that omits an empty ``stop`` from the request body and reads replies strictly
    (:func:`chat_reply_texts`): a body that is no reply is a backend failure, never an empty answer."""

    def _create_payload(self, messages, generate=False, gen_kwargs=None, seed=DEFAULT_SEED, eos=None, **kwargs) -> dict:
        payload = super()._create_payload(messages, generate=generate, gen_kwargs=gen_kwargs, seed=seed, eos=eos, **kwargs)
        return without_empty_stop(payload)

    def parse_generations(self, outputs: Any, **kwargs) -> list[str]:
        from lm_eval.models.utils import postprocess_generated_text

        replies = []
        for body in outputs if isinstance(outputs, list) else [outputs]:
            for text in chat_reply_texts(body):
                replies.append(postprocess_generated_text(text, stop=None, think_end_token=self.think_end_token))
        return replies


class ErrorReply(str):
    """The empty sample lm-eval makes of a server error (an HTTP 200 whose body is ``{"error": ...}`` or holds no
    ``choices``): ``triangulate eval``'s request cache never stores one (a healthy rerun asks again)."""


#: what the servers of this process answered instead of replies (:class:`EvalChatCompletionsLM`); ``triangulate
#: eval`` fails when it holds any (the results would score errors as the model's answers)
SERVER_ERRORS: list[str] = []


class EvalChatCompletionsLM(LocalChatCompletionsLM):
    """What ``triangulate eval`` gets for ``local-chat-completions``: no empty ``stop``, replies read as lm-eval
    reads them (lm-eval has no failed sample), except that a body that is a server error, not a reply, becomes an
    :class:`ErrorReply` (never cached) and is counted in :data:`SERVER_ERRORS`."""

    def parse_generations(self, outputs: Any, **kwargs) -> list[str]:
        replies: list[str] = []
        for body in outputs if isinstance(outputs, list) else [outputs]:
            error = isinstance(body, dict) and body.get("error") is not None
            if error or not isinstance(body, dict) or not isinstance(body.get("choices"), list) or not body["choices"]:
                SERVER_ERRORS.append(f"the server answered HTTP 200 with no reply: {_excerpt(body)}")
                replies.append(ErrorReply(""))
                continue
            replies += LocalChatCompletion.parse_generations(self, [body], **kwargs)  # content null: lm-eval's reading
        return replies


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
API_LM_CLASSES: dict[str, type] = dict.fromkeys(API_MODEL_NAMES, LocalChatCompletionsLM)
#: the same names as ``triangulate eval`` gets them from lm-eval's registry
EVAL_LM_CLASSES: dict[str, type] = {"local-chat-completions": EvalChatCompletionsLM}


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
        for name, cls in EVAL_LM_CLASSES.items():
            model_registry._objs[name] = cls
