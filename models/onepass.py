"""``local-completions-onepass``: lm-eval's ``local-completions`` scoring a question's choices from the next-token
logprobs after their shared context, one request for MMLU's one-token choices (issue 40).

lm-eval's served loglikelihood path sends one ``/v1/completions`` request per choice, with ``echo`` and prompt
logprobs, so a question's context is prefilled once per choice (4x for MMLU), and vLLM skips its prefix cache for
requests with prompt logprobs. Here continuations are grouped by the prompt the parent would send before them
(:mod:`models.choice_groups`: the context, left-truncated the same way), and each node of a group's token trie
(``()`` for one-token choices; also ``(space,)`` for SmolLM2's " 1".." 4", a space token then a digit) is one
request: the prompt plus that prefix, ``max_tokens: 1``, no echo, the top ``onepass_logprobs`` next-token logprobs
(vLLM's server caps them with ``--max-logprobs``, default 20) keyed by token id (vLLM's
``return_tokens_as_token_ids``). A choice's loglikelihood is the sum of its tokens' logprobs there; it is greedy
when each token's logprob is the largest over the whole vocabulary (the top-1 of the answer), as lm-eval's parent
decides it from its ``logprobs: 1`` top entry. A choice token outside the returned top-k is asked for by one more
request with it the only token allowed (vLLM's ``allowed_token_ids``; the reported logprob is raw, over the whole
vocabulary). A group with a token still missing (a server that ignores the restriction), a group whose
trie needs more requests than it has choices (distinct multi-token answers), a multi-token continuation the parent
would truncate, and everything when the server cannot do it (:meth:`OnePassCompletionsLM.probe`: the first request
is refused or its keys are not token ids: an ``engine: api`` server that is not vLLM) go to the parent's
per-choice path, unchanged; the fallback is said once in the log.

The grouping rule and the request counts (for the suite's plan and cost model, without importing lm-eval) are
:mod:`models.choice_groups`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import requests as http
from lm_eval.api.registry import register_model
from lm_eval.models.openai_completions import LocalCompletionsAPI
from tenacity import retry, stop_after_attempt, wait_exponential

from models.choice_groups import DEFAULT_LOGPROBS, ONE_PASS_MODEL, ChoiceGroup, group_requests
from plumbing.checks import DEFAULT_SEED

log = logging.getLogger(__name__)

TOKEN_ID = re.compile(r"^token_id:(\d+)$")


def top_token_logprobs(choice: dict[str, Any]) -> dict[int, float] | None:
    """The first generated position's top logprobs of one completion choice, by token id; None when its keys
    are not token ids (a server without ``return_tokens_as_token_ids``) or it has none."""
    top = ((choice.get("logprobs") or {}).get("top_logprobs") or [None])[0]
    if not isinstance(top, dict) or not top:
        return None
    out: dict[int, float] = {}
    for key, value in top.items():
        match = TOKEN_ID.match(str(key))
        if match is None or not isinstance(value, int | float):
            return None
        out[int(match.group(1))] = float(value)
    return out


def sampled_token(choice: dict[str, Any]) -> int | None:
    """The token id a one-pass answer sampled (its ``tokens[0]``, ``token_id:N``), or None."""
    tokens = (choice.get("logprobs") or {}).get("tokens") or [None]
    match = TOKEN_ID.match(str(tokens[0]))
    return int(match.group(1)) if match else None


def score_path(tops: dict[tuple[int, ...], dict[int, float] | None], continuation: Sequence[int]) -> tuple[float, bool] | None:
    """``(logprob, is_greedy)`` of a continuation from the top logprobs after each of its prefixes: the sum of its
    tokens' logprobs, greedy when each is the largest over the vocabulary there (the top-1, which a top-k holds);
    None when a token is not among them (its group is re-asked per choice)."""
    total, greedy = 0.0, True
    for j, token in enumerate(continuation):
        top = tops.get(tuple(continuation[:j]))
        if top is None or token not in top:
            return None
        total += top[token]
        greedy = greedy and top[token] == max(top.values())
    return total, greedy


@dataclass
class OnePassStats:
    """What one model instance did: groups (questions) scored one pass, their choices and requests, groups
    re-asked per choice because a token was outside the top-k, continuations sent per choice (a trie with more
    nodes than choices, a truncated multi-token context, a server that cannot)."""

    one_pass_groups: int = 0
    one_pass_choices: int = 0
    one_pass_requests: int = 0
    forced_requests: int = 0
    top_k_misses: int = 0
    per_choice: int = 0
    notes: list[str] = field(default_factory=list)


@register_model(ONE_PASS_MODEL)
class OnePassCompletionsLM(LocalCompletionsAPI):
    """``local-completions`` scoring choices that share a context from the next-token logprobs after it, one request
    per node of their token trie (the module docstring); ``onepass_logprobs=K`` sets the top-k asked for."""

    def __init__(self, onepass_logprobs: int = DEFAULT_LOGPROBS, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.onepass_logprobs = int(onepass_logprobs)
        self._supported: bool | None = None  # unknown until the first one-pass request
        self.onepass_stats = OnePassStats()

    def _create_payload(self, messages, generate=False, gen_kwargs=None, seed=DEFAULT_SEED, eos=None, **kwargs) -> dict:
        if kwargs.get("onepass"):
            return {
                "model": self.model,
                "prompt": messages,
                "temperature": 0,
                "max_tokens": 1,
                "logprobs": self.onepass_logprobs,
                "seed": seed,
                "echo": False,
                "return_tokens_as_token_ids": True,
                **({"allowed_token_ids": [kwargs["forced"]]} if kwargs.get("forced") is not None else {}),
            }
        return super()._create_payload(messages, generate=generate, gen_kwargs=gen_kwargs, seed=seed, eos=eos, **kwargs)

    def _loglikelihood_tokens(self, requests, **kwargs) -> list[tuple[float, bool]]:
        pairs = [(ctx, cont) for _, ctx, cont in requests]
        groups, rest = group_requests(pairs, self.max_length)
        results: list[tuple[float, bool] | None] = [None] * len(requests)
        prompts = [g.prompt + node for g in groups for node in g.nodes]
        probed: list[dict[int, float] | None] = []
        if prompts and self._supported is None:
            self._supported, first = self.probe(prompts[0])
            probed = [first] if self._supported else []
        if not self._supported:
            groups, rest, prompts = [], list(range(len(requests))), []
        answers = iter(probed + self._one_pass(prompts[len(probed) :]))
        found = [{node: next(answers) for node in group.nodes} for group in groups]
        self._fill_missing(groups, found, pairs)
        for group, tops in zip(groups, found, strict=True):
            scored = [score_path(tops, pairs[i][1]) for i in group.members]
            if any(s is None for s in scored):
                self.onepass_stats.top_k_misses += 1
                rest.extend(group.members)
                continue
            self.onepass_stats.one_pass_groups += 1
            self.onepass_stats.one_pass_choices += len(group.members)
            self.onepass_stats.one_pass_requests += len(group.nodes)
            for i, answer in zip(group.members, scored, strict=True):
                results[i] = answer
                if requests[i][0] is not None:
                    self.cache_hook.add_partial("loglikelihood", requests[i][0], answer)
        rest.sort()
        self.onepass_stats.per_choice += len(rest)
        if rest:
            for i, answer in zip(rest, super()._loglikelihood_tokens([requests[i] for i in rest], **kwargs), strict=True):
                results[i] = answer
        return results  # type: ignore[return-value]

    def probe(self, prompt: Sequence[int]) -> tuple[bool, dict[int, float] | None]:
        """Whether the server answers a one-pass request with token-id keyed top logprobs (vLLM's
        ``return_tokens_as_token_ids``), and that first answer; a refused request (HTTP 4xx, e.g. more logprobs
        than its ``--max-logprobs``) or string keys: no, and the per-choice path is used for this model, said
        once."""
        top = None
        try:
            outputs = self.model_call(messages=[list(prompt)], generate=False, onepass=True)
            top = None if outputs is None else top_token_logprobs(outputs["choices"][0])
            ok = top is not None
            why = "its top logprobs are not keyed by token ids (return_tokens_as_token_ids)"
        except http.HTTPError as exc:
            if exc.response is None or exc.response.status_code >= 500:
                raise
            ok, why = False, f"it refused the request (HTTP {exc.response.status_code}: {exc.response.text[:200]})"
        except (KeyError, IndexError, TypeError) as exc:
            ok, why = False, f"its answer has no choices/logprobs ({exc!r})"
        if not ok:
            note = f"one-pass scoring not supported by {self.base_url}: {why}; every choice is scored by its own request"
            self.onepass_stats.notes.append(note)
            log.warning(note)
        return ok, top

    def _fill_missing(self, groups: list[ChoiceGroup], tops: list[dict[tuple[int, ...], dict[int, float] | None]], pairs) -> None:
        """Add the logprob of each choice token outside its node's top-k, one request each with that token the only
        one allowed (vLLM's ``allowed_token_ids``): the sampled token's logprob is reported raw, over the whole
        vocabulary (vLLM's default ``--logprobs-mode raw_logprobs``: before the allowed-token mask), so it is the
        same number the per-choice path reads. A server that samples another token leaves the gap (per choice)."""
        wanted = sorted(
            {
                (g, tuple(pairs[i][1][:j]), token)
                for g, (group, got) in enumerate(zip(groups, tops, strict=True))
                for i in group.members
                for j, token in enumerate(pairs[i][1])
                if got.get(tuple(pairs[i][1][:j])) is not None and token not in got[tuple(pairs[i][1][:j])]
            }
        )
        if not wanted:
            return
        asked = [(groups[g].prompt + node, token) for g, node, token in wanted]
        for (g, node, token), forced in zip(wanted, self._one_pass([p for p, _ in asked], [t for _, t in asked]), strict=True):
            self.onepass_stats.forced_requests += 1
            if forced is not None and forced.get(token) is not None and forced.get("sampled") == token:
                tops[g][node][token] = forced[token]

    def _one_pass(self, prompts: list[tuple[int, ...]], forced: list[int] | None = None) -> list[dict[int, float] | None]:
        """Each prompt's next-token top logprobs by token id (None where the answer has none), ``batch_size``
        prompts a request (one with ``forced``: that token the only one allowed, ``"sampled"`` the token the server
        chose), ``num_concurrent`` requests in flight, retried as the parent retries."""
        from tqdm import tqdm

        if not prompts:
            return []
        call = retry(stop=stop_after_attempt(self.max_retries), wait=wait_exponential(multiplier=0.5, min=1, max=10), reraise=True)(
            self.model_call
        )
        size = 1 if forced is not None else max(1, self._batch_size)
        chunks = [list(range(i, min(i + size, len(prompts)))) for i in range(0, len(prompts), size)]

        def ask(chunk: list[int]) -> list[dict[int, float] | None]:
            token = None if forced is None else forced[chunk[0]]
            outputs = call(messages=[list(prompts[i]) for i in chunk], generate=False, onepass=True, forced=token)
            choices = sorted((outputs or {}).get("choices", []), key=lambda c: c.get("index", 0))
            tops = [top_token_logprobs(c) for c in choices]
            if token is not None and tops and tops[0] is not None:
                tops[0]["sampled"] = sampled_token(choices[0])
            return tops if len(tops) == len(chunk) else [None] * len(chunk)

        out: list[dict[int, float] | None] = []
        label = "Requesting API (one pass" + (", tokens outside the top-k)" if forced is not None else ")")
        with ThreadPoolExecutor(max_workers=max(1, self._concurrent)) as pool, tqdm(total=len(prompts), desc=label) as bar:
            for tops in pool.map(ask, chunks):
                out.extend(tops)
                bar.update(len(tops))
        return out
