"""History drafts on a reused cache (models/lookup_decoding.py): the draft rule, and greedy output
equal to transformers' ``generate`` on a small real Llama (random weights, built from a config)."""

from __future__ import annotations

import pytest
import torch

from models.lookup_decoding import find_draft, greedy_lookup_generate


def test_draft_follows_the_latest_occurrence_of_the_longest_tail():
    #        0  1  2  3  4  5  6  7  8  9
    tokens = [5, 6, 7, 1, 5, 6, 8, 2, 5, 6]
    assert find_draft(tokens, max_draft=3) == [8, 2, 5]  # "5 6" last seen at 4 -> 8 2 5
    assert find_draft(tokens, max_draft=1) == [8]
    assert find_draft([1, 2, 3, 9, 2, 3], max_draft=4, max_ngram=3) == [9, 2, 3]  # "2 3" at 1
    assert find_draft([1, 2, 3, 4], max_draft=4) == []  # nothing repeats
    assert find_draft([4, 4], max_draft=4) == [4]  # a run: the 1-gram "4" at 0 is followed by 4
    assert find_draft([], max_draft=4) == [] and find_draft([1, 1], max_draft=0) == []


def test_draft_prefers_longer_ngrams():
    tokens = [1, 2, 3, 7, 9, 3, 8, 2, 3]
    # "2 3" occurs at 1 (then 7), "3" alone last at 5 (then 8): the 2-gram wins
    assert find_draft(tokens, max_draft=1, max_ngram=2) == [7]
    assert find_draft(tokens, max_draft=1, max_ngram=1) == [8]


@pytest.fixture(scope="module")
def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=48,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=47,
        pad_token_id=0,
    )
    return LlamaForCausalLM(config).eval()


def _reference(model, context, max_new_tokens):
    out = model.generate(context, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=0, eos_token_id=47)
    return out[0].tolist()


@pytest.mark.parametrize("seed", range(6))
def test_equals_plain_greedy_generate_and_leaves_generate_cache_layout(tiny_llama, seed):
    from transformers import DynamicCache

    gen = torch.Generator().manual_seed(seed)
    motif = torch.randint(1, 40, (6,), generator=gen)
    context = torch.cat([motif.repeat(5), torch.randint(1, 40, (3,), generator=gen)])[None]  # repetitive history
    expected = _reference(tiny_llama, context, 24)
    for cached in (0, context.shape[1] // 2, context.shape[1] - 1):
        cache = DynamicCache(config=tiny_llama.config)
        if cached:
            with torch.inference_mode():
                tiny_llama(input_ids=context[:, :cached], past_key_values=cache, use_cache=True)
        out = greedy_lookup_generate(tiny_llama, context, cache, cached, 24, {47}, lambda g: False)
        assert out[0].tolist() == expected, (seed, cached)
        assert cache.get_seq_length() == out.shape[1] - 1


def test_stops_at_eos_max_tokens_and_stop_check(tiny_llama):
    from transformers import DynamicCache

    context = torch.tensor([[3, 4, 5, 3, 4, 5, 3, 4]])
    full = greedy_lookup_generate(tiny_llama, context, DynamicCache(config=tiny_llama.config), 0, 10, set(), lambda g: False)
    generated = full[0, context.shape[1] :].tolist()
    assert len(generated) == 10 and full[0].tolist() == _reference(tiny_llama, context, 10)[: full.shape[1]]
    eos = generated[3]
    cut = greedy_lookup_generate(tiny_llama, context, DynamicCache(config=tiny_llama.config), 0, 10, {eos}, lambda g: False)
    assert cut[0, context.shape[1] :].tolist() == generated[: generated.index(eos) + 1]
    cache = DynamicCache(config=tiny_llama.config)
    stopped = greedy_lookup_generate(tiny_llama, context, cache, 0, 10, set(), lambda g: len(g) >= 2)
    assert stopped[0, context.shape[1] :].tolist() == generated[:2] and cache.get_seq_length() == stopped.shape[1] - 1
    none = greedy_lookup_generate(tiny_llama, context, DynamicCache(config=tiny_llama.config), 0, 0, set(), lambda g: False)
    assert none.tolist() == context.tolist()
