"""Which of lm-eval's loglikelihood requests the served one-pass path (:mod:`models.onepass`,
``local-completions-onepass``) answers together, and how many requests it sends: the rule, without lm-eval.

A request is lm-eval's tokenized ``(context, continuation)`` pair (``TemplateLM._encode_pair``: the context's
trailing spaces moved to the continuation, the whole encoded then split). Continuations of one token are grouped
by the prompt lm-eval would send before that token (:func:`prompt_before`); each group is one request, every
other continuation one request of its own (lm-eval's per-choice path). :func:`requests_per_question` and
:func:`served_requests` are the counts for the suite's plan and cost model (``triangulation/suite/estimate.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: the lm-eval model name of the one-pass client (registered by :mod:`models.onepass`)
ONE_PASS_MODEL = "local-completions-onepass"
#: next-token logprobs it asks for per group (vLLM's default ``--max-logprobs``; the suite starts vLLM with it)
DEFAULT_LOGPROBS = 20

Pair = tuple[Sequence[int], Sequence[int]]  # (context tokens, continuation tokens), as lm-eval encodes them


def requests_per_question(continuations: Sequence[Sequence[int]]) -> int:
    """Requests the one-pass path sends for one question whose choices share a context: one for all its
    one-token continuations, one per longer continuation (lm-eval's per-choice path); 1 for MMLU's " A".." D"."""
    single = sum(1 for c in continuations if len(c) == 1)
    return (1 if single else 0) + len(continuations) - single


def prompt_before(context: Sequence[int], max_length: int) -> tuple[int, ...]:
    """The tokens before a one-token continuation in the parent's request: ``(context + [c])[-max_length:]``
    without ``c`` (the parent left-truncates to ``max_length``, which lm-eval's API models set to theirs - 1)."""
    return tuple(context[-(max_length - 1) :]) if len(context) + 1 > max_length else tuple(context)


def group_requests(pairs: Sequence[Pair], max_length: int) -> tuple[dict[tuple[int, ...], list[int]], list[int]]:
    """Indices of the one-token continuations grouped by the prompt before them, and the indices of the rest."""
    groups: dict[tuple[int, ...], list[int]] = {}
    rest: list[int] = []
    for i, (context, continuation) in enumerate(pairs):
        if len(continuation) == 1 and context:
            groups.setdefault(prompt_before(context, max_length), []).append(i)
        else:
            rest.append(i)
    return groups, rest


def served_requests(pairs: Iterable[Pair], max_length: int = 1 << 30) -> int:
    """Requests the one-pass path sends for lm-eval's tokenized loglikelihood requests ``pairs``: one per group
    of one-token continuations sharing a prompt, one per other continuation (no top-k miss assumed; a miss adds
    one request per choice of its question)."""
    groups, rest = group_requests(list(pairs), max_length)
    return len(groups) + len(rest)
