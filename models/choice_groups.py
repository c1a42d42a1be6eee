"""Which of lm-eval's loglikelihood requests the served one-pass path (:mod:`models.onepass`,
``local-completions-onepass``) answers together, and how many requests it sends: the rule, without lm-eval.

A request is lm-eval's tokenized ``(context, continuation)`` pair (``TemplateLM._encode_pair``: the context's
trailing spaces moved to the continuation, the whole encoded then split). Continuations are grouped by the
prompt lm-eval would send before them (:func:`prompt_before`); a group needs one request per node of its
continuations' token trie (:func:`trie_nodes`: one for one-token choices; two for SmolLM2's " 1".." 4", a space
token then a digit), and goes to lm-eval's per-choice path (one request per continuation) when that would be
more requests than it has members. :func:`requests_per_question` and
:func:`served_requests` are the counts for the suite's plan and cost model (``triangulation/suite/estimate.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: the lm-eval model name of the one-pass client (registered by :mod:`models.onepass`)
ONE_PASS_MODEL = "local-completions-onepass"
#: next-token logprobs it asks for per group (vLLM's default ``--max-logprobs``; the suite starts vLLM with it)
DEFAULT_LOGPROBS = 20

Pair = tuple[Sequence[int], Sequence[int]]  # (context tokens, continuation tokens), as lm-eval encodes them


@dataclass(frozen=True)
class ChoiceGroup:
    """Continuations scored together: lm-eval's requests ``members`` (indices) share ``prompt``; ``nodes`` are
    the continuation prefixes after which a next-token distribution is needed (``()``: at the prompt's end;
    one request each). A member's loglikelihood is the sum of its tokens' logprobs at the nodes along it."""

    prompt: tuple[int, ...]
    members: tuple[int, ...]
    nodes: tuple[tuple[int, ...], ...]


def trie_nodes(continuations: Iterable[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """The distinct proper prefixes of ``continuations`` (shortest first): MMLU's " A".." D" need ``()`` only;
    SmolLM2's " 1".." 4" (a space token, then a digit) need ``()`` and ``(space,)``."""
    nodes = {tuple(c[:j]) for c in continuations for j in range(len(c))}
    return tuple(sorted(nodes, key=lambda n: (len(n), n)))


def requests_per_question(continuations: Sequence[Sequence[int]]) -> int:
    """Requests the one-pass path sends for one question whose choices share a context: one per node of the
    choices' token trie (:func:`trie_nodes`) when that is at most one per choice, else one per choice (lm-eval's
    per-choice path); 1 for MMLU's " A".." D"."""
    return min(len(trie_nodes(continuations)), len(continuations))


def prompt_before(context: Sequence[int], max_length: int) -> tuple[int, ...]:
    """The tokens before a one-token continuation in the parent's request: ``(context + [c])[-max_length:]``
    without ``c`` (the parent left-truncates to ``max_length``, which lm-eval's API models set to theirs - 1)."""
    return tuple(context[-(max_length - 1) :]) if len(context) + 1 > max_length else tuple(context)


def group_requests(pairs: Sequence[Pair], max_length: int) -> tuple[list[ChoiceGroup], list[int]]:
    """The groups the one-pass path scores and the indices it leaves to the per-choice path: continuations are
    grouped by the prompt before them (a one-token one as the parent truncates it; a longer one only when the
    parent would not truncate it), and a group whose trie needs more requests than it has members goes per
    choice whole."""
    by_prompt: dict[tuple[int, ...], list[int]] = {}
    rest: list[int] = []
    for i, (context, continuation) in enumerate(pairs):
        if context and len(continuation) == 1:
            by_prompt.setdefault(prompt_before(context, max_length), []).append(i)
        elif context and continuation and len(context) + len(continuation) <= max_length:
            by_prompt.setdefault(tuple(context), []).append(i)
        else:
            rest.append(i)
    groups = []
    for prompt, members in by_prompt.items():
        nodes = trie_nodes(pairs[i][1] for i in members)
        if len(nodes) <= len(members):
            groups.append(ChoiceGroup(prompt, tuple(members), nodes))
        else:
            rest.extend(members)
    return groups, sorted(rest)


def served_requests(pairs: Iterable[Pair], max_length: int = 1 << 30) -> int:
    """Requests the one-pass path sends for lm-eval's tokenized loglikelihood requests ``pairs`` (no top-k miss
    assumed; a miss adds one request per member of its group)."""
    groups, rest = group_requests(list(pairs), max_length)
    return sum(len(g.nodes) for g in groups) + len(rest)
