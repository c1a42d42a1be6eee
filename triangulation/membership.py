"""The membership probe (issue 42's second signal): Min-K% Prob (Shi et al. 2023, arXiv:2310.16789) of published
items against their fresh twins, per model, with the AUC and its interval (:mod:`custom_metrics.membership`).

Token log-probabilities follow lm-eval's ``loglikelihood_rolling`` (each token predicted from everything before
it, the first from the model's prefix token) and are checked against it: the sum over a text's tokens must equal
lm-eval's rolling log-likelihood of the text (:data:`ROLLING_TOLERANCE`), so the probe's numbers are lm-eval's.
Needs a model whose log-probabilities are available: an lm-eval ``HFLM`` (``hf``, ``hf-prefix-cache``).
AUC > 0.5: the published items look more familiar to the model than their twins (the chance level is 0.5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from custom_metrics.membership import DEFAULT_K, auc_interval, min_k_prob
from plumbing.errors import UserError

#: the largest difference allowed between a text's summed token log-probabilities and lm-eval's rolling value
ROLLING_TOLERANCE = 0.05


@dataclass(frozen=True)
class ProbeResult:
    auc: float
    low: float
    high: float
    n_published: int
    n_fresh: int
    k: float


def token_logprobs(lm: Any, text: str) -> list[float]:
    """log p(token_i | prefix token, tokens before i) for every token of ``text`` (one forward pass)."""
    import torch

    tokens = lm.tok_encode(text)
    if len(tokens) + 1 > lm.max_length:
        raise UserError(f"a probe text has {len(tokens)} tokens, more than the model's {lm.max_length - 1}")
    ids = torch.tensor([[lm.prefix_token_id, *tokens]], device=lm.device)
    with torch.no_grad():
        logits = lm.model(ids).logits.float()
    logprobs = torch.log_softmax(logits[0, :-1], dim=-1)
    return logprobs.gather(1, ids[0, 1:, None])[:, 0].tolist()


def rolling_loglikelihoods(lm: Any, texts: Sequence[str]) -> list[float]:
    """lm-eval's own ``loglikelihood_rolling`` of each text."""
    from lm_eval.api.instance import Instance

    requests = [Instance(request_type="loglikelihood_rolling", doc={}, arguments=(t,), idx=i) for i, t in enumerate(texts)]
    return [float(v) for v in lm.loglikelihood_rolling(requests, disable_tqdm=True)]


def scores(lm: Any, texts: Sequence[str], k: float = DEFAULT_K) -> list[float]:
    """Min-K% Prob of each text, its token log-probabilities checked against lm-eval's rolling log-likelihood."""
    per_text = [token_logprobs(lm, t) for t in texts]
    for text, values, rolling in zip(texts, per_text, rolling_loglikelihoods(lm, texts)):
        if abs(sum(values) - rolling) > ROLLING_TOLERANCE * max(1.0, abs(rolling)) ** 0.5:
            raise UserError(f"token log-probabilities sum to {sum(values):.3f}, lm-eval's rolling value is {rolling:.3f} ({text[:40]!r})")
    return [min_k_prob(v, k) for v in per_text]


def probe(lm: Any, published: Sequence[str], fresh: Sequence[str], k: float = DEFAULT_K, n_boot: int = 2000) -> ProbeResult:
    """AUC of Min-K% Prob separating the published texts (members) from their fresh twins, with its 95% interval."""
    value, low, high = auc_interval(scores(lm, published, k), scores(lm, fresh, k), n_boot=n_boot)
    return ProbeResult(value, low, high, len(published), len(fresh), k)
