"""Test-only model for ``triangulate suite`` tests (not part of the product).

``python tests/support/suite_helpers.py ARGS...`` is ``triangulate ARGS...`` with the scripted model
``scripted-suite`` registered for both lm-eval (``triangulate eval``) and ``triangulate play``; the
suite tests pass it as ``--launcher`` so every cell subprocess knows the model.

``CannedLM`` answers from a fixed menu, chosen by a hash of (its name, the prompt): models with
different ``pretrained=NAME`` model_args score differently but reproducibly. Every request it serves is
appended to the file named by ``$SUITE_WORK_LOG`` (one line per request: name and kind), so a test
can tell whether a run did any model work. Like lm-eval's own models it answers request by request and
hands each answer to lm-eval's cache hook as it comes (``--use_cache``: a killed run resumes at the request);
a request is logged only once its answer is in the cache. ``delay=SECONDS`` slows each request (for kill tests),
``fail=1`` makes loading the model fail (a model that is down), ``log_args=1`` adds to each work-log line a digest
of the request and the SLURM leg it was computed in (``$SLURM_RESTART_COUNT``, 0 before any requeue).
``$SUITE_DIE_AFTER=N`` makes the process SIGKILL itself right after its N-th logged request (a kill mid-batch at a
known point, without changing the model's arguments, so the run resumes under the same settings).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lm_eval.api.model import LM  # noqa: E402

NBACK = ["m", "-"]
WCST = ["option 1", "option 2", "option 3", "option 4"]
LNT = ["vowel", "consonant", "even", "odd"]
OTHER = ["CLUE: a sweet red fruit", "GUESS: apple", "yes", "no", "1", "A"]


class CannedLM(LM):
    def __init__(self, pretrained: str = "scripted", delay: float = 0.0, fail: int = 0, log_args: int = 0, **_ignored):
        super().__init__()
        if int(fail):
            raise RuntimeError(f"scripted model {pretrained} is down (fail=1)")  # a crash: exit status 1
        self.name = str(pretrained)  # `pretrained=NAME`: the report names the model NAME
        self.delay = float(delay)
        self.log_path = os.environ.get("SUITE_WORK_LOG")
        self.log_args = bool(int(log_args))
        self.die_after = int(os.environ.get("SUITE_DIE_AFTER") or 0)
        self.answered = 0

    @property
    def tokenizer_name(self) -> str:
        return self.name

    def apply_chat_template(self, chat_history: list[dict], add_generation_prompt: bool = True) -> str:
        return json.dumps(chat_history, ensure_ascii=False)

    def _log(self, kind: str, n: int) -> None:
        time.sleep(self.delay * n)
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(f"{self.name} {kind}\n" * n)

    def _pick(self, text: str, menu: list[str]) -> str:
        digest = hashlib.sha256(f"{self.name}\x00{text}".encode()).digest()
        return menu[digest[0] % len(menu)]

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        out = []
        for req in requests:
            text = str(req.args[0])
            lower = text.lower()
            menu = LNT if "vowel" in lower else WCST if "option" in lower else NBACK if "n-back" in lower or "letter" in lower else OTHER
            out.append(self._answer("generate_until", req.args, self._pick(text, menu)))
        return out

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        return [
            self._answer("loglikelihood", r.args, (-(hashlib.sha256(f"{self.name}{r.args}".encode()).digest()[0] / 25.0), False))
            for r in requests
        ]

    def _answer(self, kind: str, args: tuple, answer):
        """One request: the delay, the answer into lm-eval's cache (when it has one), then the work log."""
        time.sleep(self.delay)
        self.cache_hook.add_partial(kind, args, answer)
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(f"{self.name} {kind.replace('generate_until', 'generate')}{self._tag(args)}\n")
        self.answered += 1
        if self.answered == self.die_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return answer

    def _tag(self, args: tuple) -> str:
        if not self.log_args:
            return ""
        digest = hashlib.sha256(repr(args).encode()).hexdigest()[:12]
        return f" {digest} leg={os.environ.get('SLURM_RESTART_COUNT', '0')}"

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        self._log("loglikelihood_rolling", len(requests))
        return [-1.0 for _ in requests]

    @classmethod
    def create_from_arg_obj(cls, arg_dict, additional_config=None):
        return cls(**dict(arg_dict))

    @classmethod
    def create_from_arg_string(cls, arg_string, additional_config=None):
        from lm_eval.utils import simple_parse_args_string

        return cls(**simple_parse_args_string(arg_string))


def register() -> None:
    """``scripted-suite`` in lm-eval's model registry and as a play backend."""
    import lm_eval.models  # noqa: F401  (fills lm-eval's registry first: registering into an empty one hides `hf`)
    from lm_eval.api.registry import register_model

    from models.loading import register_lm_class

    register_model("scripted-suite")(CannedLM)
    register_lm_class("scripted-suite", CannedLM)


if __name__ == "__main__":
    from triangulation.cli.main import main

    register()
    sys.exit(main(sys.argv[1:]))
