"""Backend calls with retries: one ``generate_until`` call, retried with exponential backoff and bounded in time.

A failing call is retried (``RetryPolicy``: attempts, backoff, optional per-call timeout); a batch
that keeps failing is split so that only the requests failing alone come back as
:class:`BackendFailure` (the scheduler records their episodes as ``failed``: a backend fault, not
the model's). Error texts have credentials removed (:func:`models.loading.scrub_secrets`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lm_eval.api.instance import Instance

from models.args import scrub_secrets
from plumbing.callables import takes_keyword

log = logging.getLogger(__name__)


#: the default cap on a stored reply (``triangulate play --max_reply_chars``): 25 times a 4,096-token reply
DEFAULT_MAX_REPLY_CHARS = 100_000


@dataclass
class RetryPolicy:
    """How often and how patiently a failing ``generate_until`` call is retried, and how long a reply may be.

    ``timeout`` (seconds, None = wait forever) bounds one ``generate_until`` call: a call still running
    then counts as a failed attempt (``TimeoutError``) and is retried like any backend error. The call
    runs in a daemon thread that is abandoned, not killed (Python cannot stop a thread): use it for API
    backends that can hang; a local model keeps computing the abandoned batch in the background.
    """

    attempts: int = 4
    base_delay: float = 2.0
    max_delay: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    timeout: float | None = None
    #: a reply longer than this many characters is cut to it before the game sees it or it is stored (a
    #: server sending 10 MB per reply made one n-back episode a 240 MB line); the engine records the cut
    max_reply_chars: int | None = DEFAULT_MAX_REPLY_CHARS

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based): base * 2**attempt, capped."""
        return min(self.max_delay, self.base_delay * (2**attempt))


class BackendFailure:
    """Placeholder reply for a request whose backend call failed after every retry."""

    def __init__(self, message: str):
        self.message = message


def call_backend(
    lm, prompts: list[str], gen_kwargs: dict[str, Any], retry: RetryPolicy, *, task: str | None = None, role: str | None = None
) -> list[str | BackendFailure]:
    """One ``generate_until`` call for ``prompts`` with retries; a batch that keeps failing is split so
    that only the requests that fail alone are reported as failures.

    ``task`` and ``role`` travel on each lm-eval ``Instance`` (``task_name``, ``doc["role"]``), as lm-eval's
    own requests carry their task: backends that play by the task's rules (the chance player) read them."""
    last_error: Exception | None = None
    origin = (task, role)
    for attempt in range(max(1, retry.attempts)):
        try:
            return _generate_within(lm, prompts, gen_kwargs, retry.timeout, origin)
        except Exception as exc:  # any backend error: network, rate limit, OOM, server 5xx
            last_error = exc
            log.warning("generate_until failed (attempt %d/%d): %s", attempt + 1, retry.attempts, _describe(exc))
            if attempt + 1 < retry.attempts:
                retry.sleep(retry.delay(attempt))
    if len(prompts) == 1:
        return [BackendFailure(_describe(last_error))]
    out: list[str | BackendFailure] = []
    for prompt in prompts:  # isolate the culprits: one more attempt each
        try:
            out.extend(_generate_within(lm, [prompt], gen_kwargs, retry.timeout, origin))
        except Exception as exc:
            out.append(BackendFailure(_describe(exc)))
    return out


def _describe(exc: BaseException | None) -> str:
    """``Type: message`` of a backend error, credentials removed (it goes to logs and the episode record)."""
    return scrub_secrets(f"{type(exc).__name__}: {exc}")


Origin = tuple[str | None, str | None]  # (task name, role) of a batch of requests


def _generate_within(lm, prompts: list[str], gen_kwargs: dict[str, Any], timeout: float | None, origin: Origin = (None, None)) -> list[str]:
    """``_generate``, raising ``TimeoutError`` when it has not returned after ``timeout`` seconds."""
    if timeout is None or timeout <= 0:
        return _generate(lm, prompts, gen_kwargs, origin)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["replies"] = _generate(lm, prompts, gen_kwargs, origin)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="generate_until", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError(f"generate_until did not return within {timeout:g} s ({len(prompts)} requests)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["replies"]


def _generate(lm, prompts: list[str], gen_kwargs: dict[str, Any], origin: Origin = (None, None)) -> list[str]:
    task, role = origin
    doc = {"role": role} if role else {}
    requests = [
        Instance("generate_until", dict(doc), (prompt, dict(gen_kwargs)), i, metadata=(task, None, None))
        for i, prompt in enumerate(prompts)
    ]
    quiet = {"disable_tqdm": True} if takes_keyword(lm.generate_until, "disable_tqdm") else {}
    replies = lm.generate_until(requests, **quiet)
    if len(replies) != len(prompts):
        raise RuntimeError(f"backend returned {len(replies)} replies for {len(prompts)} requests")
    return ["" if r is None else str(r) for r in replies]
