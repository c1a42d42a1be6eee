"""Greedy decoding with drafts looked up in the history (prompt-lookup decoding) on a reused KV cache.

Multi-turn replies repeat text that is already in the conversation (a model restating its format,
a player answering in the same words every trial, a game's feedback copied back). At each
step :func:`find_draft` takes the tokens that followed the latest earlier occurrence of the last
``ngram`` tokens; one forward pass scores the pending token plus the draft, and the longest prefix
of the draft that greedy decoding would have produced is accepted, plus the model's own next token.
Rejected positions are cropped from the cache. The accepted tokens are exactly the argmax tokens,
so replies equal plain greedy decoding up to floating-point ties (the same caveat as transformers'
``prompt_lookup_num_tokens``, which cannot start from a pre-filled cache; see Saxena 2023,
"Prompt Lookup Decoding"). On a CPU a forward pass over ten tokens costs about 2.5 single-token
steps (SmolLM2, one thread), so a draft pays when three or more of its tokens are accepted; drafts
are tried only where the history offers one.

Used by :class:`models.prefix_cache.PrefixCacheHFLM` for greedy requests without logits
processors; anything else goes through transformers' ``generate``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

DEFAULT_DRAFT_TOKENS = 10
DEFAULT_NGRAM = 3


def find_draft(tokens: Sequence[int], max_draft: int = DEFAULT_DRAFT_TOKENS, max_ngram: int = DEFAULT_NGRAM) -> list[int]:
    """The tokens that followed the latest earlier occurrence of the longest matching tail n-gram.

    ``tokens`` is the whole sequence so far; the last ``n`` tokens (``n`` from ``max_ngram`` down to 1)
    are searched for earlier in the sequence, most recent first; the first hit's continuation (at
    most ``max_draft`` tokens, never running into the tail itself) is the draft. Empty when none.
    """
    size = len(tokens)
    if max_draft <= 0 or size < 2:
        return []
    for n in range(min(max_ngram, size - 1), 0, -1):
        tail = list(tokens[size - n :])
        first = tail[0]
        # latest start i < size - n with tokens[i:i+n] == tail
        for i in range(size - n - 1, -1, -1):
            if tokens[i] == first and list(tokens[i : i + n]) == tail:
                draft = list(tokens[i + n : min(i + n + max_draft, size)])
                if draft:
                    return draft
    return []


def greedy_lookup_generate(
    model: Any,
    context: torch.Tensor,
    cache: Any,
    cached: int,
    max_new_tokens: int,
    eos_ids: set[int],
    should_stop: Callable[[list[int]], bool],
    max_draft: int = DEFAULT_DRAFT_TOKENS,
    max_ngram: int = DEFAULT_NGRAM,
) -> torch.Tensor:
    """Greedy continuation of ``context`` (shape ``(1, L)``) whose first ``cached`` positions are in ``cache``.

    Returns ``context`` followed by the generated tokens, at most ``max_new_tokens`` of them; ends at an
    ``eos_ids`` token (kept, as transformers does) or when ``should_stop(generated)`` is true. On return
    ``cache`` holds exactly the returned sequence minus its last token (the layout ``generate`` leaves).
    """
    device = context.device
    history = context[0].tolist()
    generated: list[int] = []
    if max_new_tokens <= 0:
        return context
    with torch.inference_mode():
        out = model(input_ids=context[:, cached:], past_key_values=cache, use_cache=True, logits_to_keep=1)
        pending = int(out.logits[0, -1].argmax())
        while True:
            generated.append(pending)
            history.append(pending)
            if pending in eos_ids or len(generated) >= max_new_tokens or should_stop(generated):
                break
            room = max_new_tokens - len(generated)
            draft = find_draft(history, min(max_draft, room), max_ngram)
            step = torch.tensor([[pending] + draft], device=device)
            logits = model(input_ids=step, past_key_values=cache, use_cache=True).logits[0]
            choices = logits.argmax(dim=-1).tolist()
            accepted = 0
            while accepted < len(draft) and choices[accepted] == draft[accepted]:
                accepted += 1
            # cache now holds ... pending, draft[0:len(draft)]; keep pending + the accepted drafts
            excess = len(draft) - accepted
            if excess:
                cache.crop(-excess)
            stopped = False
            for token in draft[:accepted]:
                generated.append(token)
                history.append(token)
                if token in eos_ids or len(generated) >= max_new_tokens or should_stop(generated):
                    stopped = True
                    break
            if stopped:
                break
            pending = choices[accepted]
    sequence = torch.tensor([history], device=device, dtype=context.dtype)
    surplus = cache.get_seq_length() - (sequence.shape[1] - 1)
    if surplus > 0:  # stopped inside an accepted draft: drop what lies beyond the returned sequence
        cache.crop(-surplus)
    return sequence
