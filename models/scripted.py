"""A scripted lm-eval ``LM`` for testing games and the engine without a neural model.

``ScriptedLM(respond)`` answers every ``generate_until`` request with ``respond(messages)``, where
``messages`` is the chat history the engine rendered. ``apply_chat_template`` serialises the history
as JSON (as lm-eval's chat-API backends do), so the script sees exactly what a player would see.
It is a test double for the runner's logic; end-to-end tests also run the real SmolLM2 model.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from lm_eval.api.model import LM

Responder = Callable[[list[dict]], str]


class ScriptedLM(LM):
    def __init__(self, respond: Responder, name: str = "scripted"):
        super().__init__()
        self.respond = respond
        self.name = name
        self.calls = 0  # generate_until invocations (batches)
        self.requests_seen = 0

    @property
    def tokenizer_name(self) -> str:
        return self.name

    def apply_chat_template(self, chat_history: list[dict], add_generation_prompt: bool = True) -> str:
        return json.dumps(chat_history, ensure_ascii=False)

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        self.calls += 1
        out = []
        for req in requests:
            context = req.args[0]
            self.requests_seen += 1
            reply = self.respond(json.loads(context))
            self.cache_hook.add_partial("generate_until", req.args, reply)  # request by request, as lm-eval's backends do
            out.append(reply)
        return out

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("ScriptedLM only generates")

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("ScriptedLM only generates")
