"""Prefix KV reuse for multi-turn play: an lm-eval ``HFLM`` that keeps each live episode's KV cache.

In multi-turn play every prompt is the previous prompt plus the model's reply plus one new message,
so recomputing the whole history each turn costs O(turns^2) tokens. :class:`PrefixCacheHFLM` keeps a
small pool of transformers ``DynamicCache`` objects (one per recently generated sequence, prompt plus
reply). For a new request it picks the pooled sequence with the longest common token prefix, crops
its cache to that prefix and hands it to ``generate`` as ``past_key_values``, so only the new tokens
are prefilled. Requests carry no episode id; the longest-common-prefix match finds the episode.

Everything else is HFLM's own code path (``generate_until`` -> ``_model_generate``): tokenisation,
left truncation, ``until`` stop sequences, ``max_gen_toks`` and post-processing are unchanged. The
decoding itself: sampled requests (and greedy ones with logits processors) call ``generate`` with the
cache; plain greedy requests are decoded by :mod:`models.lookup_decoding`, which drafts the next
tokens from the conversation so far and verifies them in one forward pass. Greedy replies are the
same tokens as plain ``hf`` (``tests/multiturn/test_perf_prefix_cache.py`` checks it on SmolLM2).

Batching: reuse applies to batch size 1. Padded batches fall back to plain HFLM generation. On a CPU
batch 1 is the default (:func:`models.loading.play_batch_size`): batching does not pay on a 2-core CPU (prefill is
compute-bound, DESIGN.md "Performance facts"), reuse does. On a GPU the default is the live episodes
(``--max_live``): lockstep batching ran 6.3x (16 live) and 15.4x (64) full history at batch 1 on an H100,
prefix reuse at batch 1 only 2.0-2.2x (benchmarks/README.md, GPU table); reuse still applies wherever a
step sends one request (the last live episode, a single-episode run). vLLM gives both levers at once
(:func:`models.loading.runner_model_args` turns its prefix caching on).

Selected by ``triangulate play --model hf`` (and when no model is given); opt out with
``--no_prefix_cache``. Also registered in lm-eval's model registry
as ``hf-prefix-cache``. Pool limits come from model_args ``prefix_cache_entries`` (default 64) and
``prefix_cache_mb`` (default 2048).
"""

from __future__ import annotations

import copy
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from lm_eval.api.registry import register_model
from lm_eval.models.huggingface import HFLM

from models.args import HF_MODEL_NAMES, prefix_cache_enabled
from models.lookup_decoding import DEFAULT_DRAFT_TOKENS, greedy_lookup_generate

log = logging.getLogger(__name__)

DEFAULT_ENTRIES = 64
DEFAULT_MB = 2048.0


def runner_lm_class(model: str, enabled: bool | None = None, overrides: Mapping[str, Any] | None = None):
    """The LM class the runner uses for ``model`` instead of lm-eval's entry, or None to keep lm-eval's.

    ``hf`` (and its aliases) -> :class:`PrefixCacheHFLM` while the switch is on and no play-specific
    override (``backends.register_lm_class``) names the model.
    """
    if model in HF_MODEL_NAMES and model not in (overrides or {}) and prefix_cache_enabled(enabled):
        return PrefixCacheHFLM
    return None


def common_prefix_length(a: torch.Tensor, b: torch.Tensor) -> int:
    """Number of leading positions where the 1-D token tensors ``a`` and ``b`` agree."""
    n = min(a.numel(), b.numel())
    if n == 0:
        return 0
    diff = torch.nonzero(a[:n] != b[:n])
    return int(diff[0, 0]) if diff.numel() else n


def cache_nbytes(cache: Any) -> int:
    """Bytes held by a ``DynamicCache``'s key and value tensors."""
    total = 0
    for layer in getattr(cache, "layers", ()):
        for name in ("keys", "values"):
            tensor = getattr(layer, name, None)
            if isinstance(tensor, torch.Tensor):
                total += tensor.numel() * tensor.element_size()
    return total


@dataclass
class CacheEntry:
    """One generated sequence: ``tokens`` (1-D, CPU) are exactly the positions held by ``cache``."""

    tokens: torch.Tensor
    cache: Any
    prompt_len: int
    nbytes: int


class PrefixPool:
    """A bounded LRU pool of :class:`CacheEntry`, looked up by longest common token prefix."""

    def __init__(self, max_entries: int = DEFAULT_ENTRIES, max_bytes: int = int(DEFAULT_MB * 2**20)):
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("prefix cache limits must be positive")
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._entries: OrderedDict[int, CacheEntry] = OrderedDict()
        self._next_key = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return sum(e.nbytes for e in self._entries.values())

    def take(self, tokens: torch.Tensor) -> tuple[Any, int]:
        """``(cache, n)``: a cache holding the first ``n`` tokens of ``tokens`` (``n`` <= len - 1), or ``(None, 0)``.

        When the request extends the entry's own prompt (the same episode's next turn) the entry is
        removed and its cache reused in place; otherwise (e.g. another episode sharing only the system
        prompt) a cropped copy is returned and the entry stays.
        """
        with self._lock:
            best_key, best = None, 0
            for key, entry in self._entries.items():
                n = common_prefix_length(entry.tokens, tokens)
                if n > best:
                    best_key, best = key, n
            if best_key is None:
                return None, 0
            keep = min(best, tokens.numel() - 1)
            if keep <= 0:
                return None, 0
            entry = self._entries[best_key]
            if best >= entry.prompt_len:
                del self._entries[best_key]
                cache = entry.cache
            else:
                self._entries.move_to_end(best_key)
                cache = copy.deepcopy(entry.cache)
        excess = cache.get_seq_length() - keep
        if excess > 0:
            cache.crop(-excess)
        return cache, keep

    def add(self, tokens: torch.Tensor, cache: Any, prompt_len: int) -> None:
        """Store a sequence's cache, evicting least recently used entries beyond the limits."""
        entry = CacheEntry(tokens=tokens, cache=cache, prompt_len=prompt_len, nbytes=cache_nbytes(cache))
        with self._lock:
            if entry.nbytes > self.max_bytes:
                return
            self._entries[self._next_key] = entry
            self._next_key += 1
            while len(self._entries) > self.max_entries or self.nbytes > self.max_bytes:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


@register_model("hf-prefix-cache")
class PrefixCacheHFLM(HFLM):
    """``HFLM`` whose ``generate`` calls reuse the KV cache of the longest matching earlier sequence.

    Greedy requests whose decoding no logits processor changes are decoded by
    :func:`models.lookup_decoding.greedy_lookup_generate` (drafts looked up in the history, verified
    in one forward pass); the rest go through transformers' ``generate`` with the reused cache.

    Extra model_args: ``prefix_cache_entries`` (pool size, default 64), ``prefix_cache_mb`` (memory
    cap of the pool, default 2048) and ``prompt_lookup_tokens`` (longest draft, default 10; 0 turns
    history drafts off). ``stats`` counts requests, prompt tokens, reused tokens and lookup-decoded requests.
    """

    def __init__(
        self,
        *args: Any,
        prefix_cache_entries: int = DEFAULT_ENTRIES,
        prefix_cache_mb: float = DEFAULT_MB,
        prompt_lookup_tokens: int = DEFAULT_DRAFT_TOKENS,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.prefix_pool = PrefixPool(int(prefix_cache_entries), int(float(prefix_cache_mb) * 2**20))
        self.prefix_cache_enabled = True
        self.prompt_lookup_tokens = int(prompt_lookup_tokens)
        self.stats = {"requests": 0, "prompt_tokens": 0, "reused_tokens": 0, "lookup_requests": 0}

    def _reusable(self, context: torch.Tensor, generation_kwargs: Mapping[str, Any]) -> bool:
        if not self.prefix_cache_enabled or self.backend != "causal" or context.shape[0] != 1:
            return False
        if "past_key_values" in generation_kwargs:
            return False
        mask = generation_kwargs.get("attention_mask")
        return mask is None or bool(mask.all())

    def _greedy_lookup_ok(self, generation_kwargs: Mapping[str, Any]) -> bool:
        """Greedy (``do_sample`` False, or unset with temperature 0) and nothing that reshapes the logits."""
        if self.prompt_lookup_tokens <= 0:
            return False
        if set(generation_kwargs) - _LOOKUP_SAFE_KWARGS:
            return False
        do_sample = generation_kwargs.get("do_sample")
        temperature = generation_kwargs.get("temperature", 0.0)
        if not (do_sample is False or (do_sample is None and temperature in (0, 0.0, None))):
            return False
        config = getattr(self.model, "generation_config", None)
        return config is None or all(
            getattr(config, name, default) in (default, None) for name, default in _NEUTRAL_GENERATION_CONFIG.items()
        )

    def _stop_checker(self, stop: list[str]):
        """``generated -> bool``: does the decoded text contain a stop sequence (lm-eval's ``until``)?"""
        stops = [s for s in stop if s]
        if not stops:
            return lambda generated: False
        lookback = max(len(s) for s in stops) + 8  # tokens are at least one character

        def should_stop(generated: list[int]) -> bool:
            text = self.tokenizer.decode(generated[-lookback:], skip_special_tokens=False)
            return any(s in text for s in stops)

        return should_stop

    def _model_generate(self, context: torch.Tensor, max_length: int, stop: list[str], **generation_kwargs: Any) -> torch.Tensor:
        if not self._reusable(context, generation_kwargs):
            return super()._model_generate(context, max_length, stop, **generation_kwargs)
        from transformers import DynamicCache

        tokens = context[0].detach().to("cpu")
        cache, reused = self.prefix_pool.take(tokens)
        if cache is None:
            cache = DynamicCache(config=self.model.config)
        if not getattr(cache, "is_croppable", True):
            self.prefix_cache_enabled = False
            log.warning("prefix cache disabled: this model's cache cannot be cropped")
            return super()._model_generate(context, max_length, stop, **generation_kwargs)
        self.stats["requests"] += 1
        self.stats["prompt_tokens"] += tokens.numel()
        self.stats["reused_tokens"] += reused
        if self._greedy_lookup_ok(generation_kwargs):
            eos = getattr(self.model.generation_config, "eos_token_id", None)
            eos_ids = set(eos if isinstance(eos, (list, tuple)) else [] if eos is None else [eos])
            out = greedy_lookup_generate(
                self.model,
                context,
                cache,
                reused,
                max_length - context.shape[1],
                eos_ids,
                self._stop_checker(stop),
                max_draft=self.prompt_lookup_tokens,
            )
            self.stats["lookup_requests"] += 1
        else:
            out = super()._model_generate(context, max_length, stop, past_key_values=cache, **generation_kwargs)
        held = cache.get_seq_length()
        sequence = out[0].detach().to("cpu")
        if 0 < held <= sequence.numel():
            self.prefix_pool.add(sequence[:held].clone(), cache, prompt_len=tokens.numel())
        return out


#: generation kwargs that do not change greedy decoding (sampling knobs are inert when do_sample is False)
_LOOKUP_SAFE_KWARGS = frozenset({"attention_mask", "do_sample", "temperature", "top_p", "top_k", "min_p", "pad_token_id"})
#: generation_config fields whose non-default values add logits processors: those requests use ``generate``
_NEUTRAL_GENERATION_CONFIG: dict[str, Any] = {
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "bad_words_ids": None,
    "min_length": 0,
    "min_new_tokens": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
    "sequence_bias": None,
    "num_beams": 1,
    "guidance_scale": None,
    "epsilon_cutoff": 0.0,
    "exponential_decay_length_penalty": None,
    "renormalize_logits": False,
    "num_return_sequences": 1,
    "max_new_tokens": None,
    "watermarking_config": None,
    "penalty_alpha": None,
    "dola_layers": None,
}
