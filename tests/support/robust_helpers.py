"""Test-only backend for the robustness tests (not part of the product).

``python tests/support/robust_helpers.py <triangulate args>`` runs the real ``triangulate`` dispatcher with one
extra play backends: ``scripted-leaky``, a scripted n-back player that behaves like a careless API
client (it logs its credentials, and its errors quote them: a 401 naming the key, a failure quoting
``$OPENAI_API_KEY``), so a test can check that none of them reaches results, transcripts or logs; and
``scripted-hang``, whose calls for one episode never return (``--request_timeout`` end to end).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from models.scripted import ScriptedLM  # noqa: E402

log = logging.getLogger("scripted_leaky")
#: n-back verbal 1, block 1 starts with this letter (block 0 with another): that episode always fails
FAILING_BLOCK_FIRST_LETTER = "c"


def _nback_reply(messages: list[dict]) -> str:
    return "m" if len(messages) % 3 == 0 else "-"


class LeakyLM(ScriptedLM):
    def __init__(self, api_key: str = "", base_url: str = "", **_ignored):
        super().__init__(_nback_reply, name="scripted-leaky")
        self.api_key, self.base_url = api_key, base_url
        self.batches = 0
        log.info("client ready: base_url=%s api_key=%s", base_url, api_key)
        log.debug("environment key: %s", os.environ.get("OPENAI_API_KEY"))

    def generate_until(self, requests, disable_tqdm: bool = False):
        self.batches += 1
        contexts = [json.loads(r.args[0]) for r in requests]
        if self.batches == 1:  # one transient failure: retried, then the run goes on
            raise PermissionError(f"401 Unauthorized: key {self.api_key} rejected by {self.base_url}")
        if any(len(c) >= 8 and c[1]["content"] == FAILING_BLOCK_FIRST_LETTER for c in contexts):  # block 1, trial 4 on
            raise ConnectionError(f"proxy refused (Authorization: Bearer {os.environ.get('OPENAI_API_KEY')})")
        return super().generate_until(requests, disable_tqdm)

    @classmethod
    def create_from_arg_obj(cls, arg_dict, additional_config=None):
        return cls(**dict(arg_dict))


class HangingLM(ScriptedLM):
    """``scripted-hang``: a scripted n-back player whose calls for block 1 never return while $ROBUST_HANG=1."""

    def __init__(self, **_ignored):
        super().__init__(_nback_reply, name="scripted-hang")

    def generate_until(self, requests, disable_tqdm: bool = False):
        contexts = [json.loads(r.args[0]) for r in requests]
        if os.environ.get("ROBUST_HANG") == "1" and any(c[1]["content"] == FAILING_BLOCK_FIRST_LETTER for c in contexts):
            import time

            time.sleep(3600)
        return super().generate_until(requests, disable_tqdm)

    @classmethod
    def create_from_arg_obj(cls, arg_dict, additional_config=None):
        return cls(**dict(arg_dict))


if __name__ == "__main__":
    from models.loading import register_lm_class
    from triangulation.cli.main import main

    register_lm_class("scripted-leaky", LeakyLM)
    register_lm_class("scripted-hang", HangingLM)
    sys.exit(main(sys.argv[1:]))
