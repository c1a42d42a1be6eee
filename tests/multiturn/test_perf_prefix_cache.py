"""Prefix KV reuse (models/prefix_cache.py): pool rules, runner selection, vLLM model_args, and
identical greedy replies to plain HFLM on SmolLM2 (slow)."""

from __future__ import annotations

import argparse

import pytest
import torch
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM

from models import loading as backends
from models.args import prefix_cache_enabled
from models.loading import runner_model_args
from models.prefix_cache import (
    PrefixCacheHFLM,
    PrefixPool,
    cache_nbytes,
    common_prefix_length,
    runner_lm_class,
)
from models.ref import ModelRef
from multiturn.engine.settings import PlaySettings


class _Layer:
    def __init__(self, n: int):
        self.keys = torch.zeros(1, 1, n, 2)
        self.values = torch.zeros(1, 1, n, 2)


class FakeCache:
    """Quacks like a DynamicCache: ``layers`` with keys/values, ``get_seq_length``, ``crop(-k)``."""

    def __init__(self, n: int):
        self.layers = [_Layer(n)]

    def get_seq_length(self) -> int:
        return self.layers[0].keys.shape[2]

    def crop(self, tokens_to_remove: int) -> None:
        assert tokens_to_remove < 0
        for layer in self.layers:
            layer.keys = layer.keys[..., :tokens_to_remove, :]
            layer.values = layer.values[..., :tokens_to_remove, :]


def t(*ids: int) -> torch.Tensor:
    return torch.tensor(ids, dtype=torch.long)


def test_common_prefix_length():
    assert common_prefix_length(t(1, 2, 3), t(1, 2, 4, 5)) == 2
    assert common_prefix_length(t(1, 2), t(1, 2, 3)) == 2
    assert common_prefix_length(t(9), t(1, 2)) == 0
    assert common_prefix_length(t(), t(1)) == 0


def test_pool_picks_longest_prefix_and_reuses_own_episode_in_place():
    pool = PrefixPool(max_entries=4)
    a, b = FakeCache(6), FakeCache(6)
    pool.add(t(1, 2, 3, 4, 5, 6), a, prompt_len=4)  # episode A: prompt 1..4, reply 5 6
    pool.add(t(1, 2, 7, 8, 9, 10), b, prompt_len=4)  # episode B shares only 1 2
    # A's next prompt: its previous prompt, part of its reply, then a new message
    cache, n = pool.take(t(1, 2, 3, 4, 5, 11, 12))
    assert cache is a and n == 5 and cache.get_seq_length() == 5
    assert len(pool) == 1  # taken in place: A's old entry is gone, B stays


def test_pool_copies_when_only_a_shared_system_prefix_matches():
    pool = PrefixPool()
    a = FakeCache(5)
    pool.add(t(1, 2, 3, 4, 5), a, prompt_len=4)
    cache, n = pool.take(t(1, 2, 9, 9))
    assert n == 2 and cache is not a and cache.get_seq_length() == 2
    assert len(pool) == 1 and a.get_seq_length() == 5  # the other episode's cache is intact


def test_pool_leaves_one_token_to_prefill_and_ignores_misses():
    pool = PrefixPool()
    pool.add(t(1, 2, 3), FakeCache(3), prompt_len=3)
    cache, n = pool.take(t(1, 2, 3))  # the same prompt again (a retry): keep len-1 tokens
    assert n == 2 and cache.get_seq_length() == 2
    assert pool.take(t(7, 8)) == (None, 0)


def test_pool_lru_eviction_and_memory_cap():
    pool = PrefixPool(max_entries=2)
    for i in range(3):
        pool.add(t(10 + i, 1, 2), FakeCache(3), prompt_len=2)
    assert len(pool) == 2 and pool.take(t(10, 1, 2, 5)) == (None, 0)  # the oldest went first
    per_entry = cache_nbytes(FakeCache(3))
    capped = PrefixPool(max_entries=10, max_bytes=2 * per_entry)
    for i in range(5):
        capped.add(t(20 + i, 1, 2), FakeCache(3), prompt_len=2)
    assert len(capped) == 2 and capped.nbytes <= 2 * per_entry
    capped.add(t(1, 2, 3, 4), FakeCache(400), prompt_len=4)  # larger than the cap: not stored
    assert len(capped) == 2


def test_runner_selects_prefix_cache_for_hf_with_opt_out(monkeypatch):
    monkeypatch.delenv("TRIANGULATE_PREFIX_CACHE", raising=False)
    assert prefix_cache_enabled() is True
    assert runner_lm_class("hf") is PrefixCacheHFLM and runner_lm_class("huggingface") is PrefixCacheHFLM
    assert runner_lm_class("vllm") is None and runner_lm_class("local-chat-completions") is None
    assert runner_lm_class("hf", enabled=False) is None
    assert runner_lm_class("hf", overrides={"hf": object}) is None
    monkeypatch.setenv("TRIANGULATE_PREFIX_CACHE", "0")  # no longer a switch: only --no_prefix_cache turns it off
    assert runner_lm_class("hf") is PrefixCacheHFLM
    assert runner_lm_class("hf", enabled=True) is PrefixCacheHFLM


def test_registered_in_lm_eval_registry():
    from lm_eval.api.registry import get_model

    assert get_model("hf-prefix-cache") is PrefixCacheHFLM


def test_vllm_model_args_turn_prefix_caching_on_unless_set(monkeypatch):
    monkeypatch.delenv("TRIANGULATE_PREFIX_CACHE", raising=False)
    assert runner_model_args("vllm", {"pretrained": "m", "tensor_parallel_size": 2}) == {
        "pretrained": "m",
        "tensor_parallel_size": 2,
        "enable_prefix_caching": True,
    }
    assert runner_model_args("vllm", {"enable_prefix_caching": False}) == {"enable_prefix_caching": False}
    assert runner_model_args("vllm", {"pretrained": "m"}, enabled=False) == {"pretrained": "m"}
    assert runner_model_args("hf", {"pretrained": "m"}) == {"pretrained": "m"}


def test_vllm_samples_with_plays_seed_unless_model_args_set_one():
    """Issue 43 item 7: vLLM samples in its engine process, out of reach of the runner's torch.manual_seed;
    lm-eval's ``vllm`` seeds it with 1234 whatever ``--seed`` says unless model_args carry the seed."""
    assert runner_model_args("vllm", {"pretrained": "m"}, seed=7)["seed"] == 7
    assert runner_model_args("vllm", {"pretrained": "m", "seed": 3}, seed=7)["seed"] == 3
    assert "seed" not in runner_model_args("hf", {"pretrained": "m"}, seed=7)  # hf: torch.manual_seed in process
    args = argparse.Namespace(
        model="vllm",
        model_args="pretrained=m",
        tasks="nback_verbal_1",
        seed=11,
        device=None,
        max_live=None,
        model_b=None,
        model_args_b=None,
        judge_model=None,
        judge_model_args=None,
        limit=None,
        gen_kwargs=None,
        judge_gen_kwargs=None,
        task_args=None,
        batch_size=None,
        request_timeout=None,
        retries=4,
    )
    assert PlaySettings.from_args(args, {"player"}).backend.args_dict()["seed"] == 11


class _RecordingLM(LM):
    seen: dict = {}

    @classmethod
    def create_from_arg_obj(cls, arg_dict, additional_config=None):
        cls.seen = dict(arg_dict)
        return cls()

    def generate_until(self, requests, disable_tqdm=False):
        return ["" for _ in requests]

    def loglikelihood(self, requests, disable_tqdm=False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError


def test_load_lm_rewrites_vllm_model_args_without_importing_vllm(monkeypatch):
    monkeypatch.delenv("TRIANGULATE_PREFIX_CACHE", raising=False)
    monkeypatch.setitem(backends._LM_CLASS_OVERRIDES, "vllm", _RecordingLM)

    def load(model_args: str, prefix_cache: bool | None = None) -> ModelRef:
        backend = backends.resolve_model(ModelRef.parse("vllm", model_args), prefix_cache=prefix_cache)
        backends.load_lm(backend, prefix_cache=prefix_cache)
        return backend

    backend = load("pretrained=org/m,tensor_parallel_size=2")
    assert backend.model == "vllm" and _RecordingLM.seen["enable_prefix_caching"] is True and backend.args["enable_prefix_caching"] is True
    load("pretrained=org/m,enable_prefix_caching=False")
    assert _RecordingLM.seen["enable_prefix_caching"] is False
    load("pretrained=org/m", prefix_cache=False)
    assert "enable_prefix_caching" not in _RecordingLM.seen


@pytest.mark.slow
def test_greedy_replies_identical_to_plain_hflm_on_nback(smollm2, upstream, built_data):
    """A few 3-back turns: each turn's prompt through plain HFLM and through the prefix cache (with
    history drafts, since the requests are greedy), with and without stop sequences."""
    from multiturn.registry import get_task

    cached = PrefixCacheHFLM(pretrained=smollm2.model, tokenizer=smollm2.tokenizer, device="cpu", batch_size=1)
    task = get_task("nback_verbal_3")
    instances = task.instances(0)[:2]
    games = [task.make_game(inst, 0) for inst in instances]
    kwargs = [
        {"do_sample": False, "temperature": 0.0, "max_gen_toks": 4},
        {"do_sample": False, "temperature": 0.0, "max_gen_toks": 6, "until": ["\n", "m"]},
    ]
    for turn in range(5):
        for i, game in enumerate(games):  # interleaved episodes, as the lockstep engine sends them
            request = game.next_request()
            prompt = smollm2.apply_chat_template(request.messages)
            gen = kwargs[(turn + i) % 2]
            [plain] = smollm2.generate_until([Instance("generate_until", {}, (prompt, dict(gen)), 0)], disable_tqdm=True)
            [reply] = cached.generate_until([Instance("generate_until", {}, (prompt, dict(gen)), 0)], disable_tqdm=True)
            assert reply == plain, (turn, i)
            if "until" in gen:
                assert "\n" not in reply and "m" not in reply
            game.on_reply(plain)
    assert cached.stats["requests"] == 10
    assert cached.stats["lookup_requests"] == 10  # greedy: decoded with history drafts
    # from the second turn on most of each prompt comes from the episode's cache
    assert cached.stats["reused_tokens"] > 0.6 * cached.stats["prompt_tokens"]
    assert 1 <= len(cached.prefix_pool) <= 2


class _Stop(Exception):
    pass


@pytest.mark.parametrize("flag, expected", [([], None), (["--no_prefix_cache"], False)])
def test_play_flag_reaches_load_lm(monkeypatch, flag, expected):
    from triangulation.cli.main import main

    seen = {}

    def fake_load_lm(backend, **kwargs):
        seen.update(kwargs)
        raise _Stop

    monkeypatch.setattr("multiturn.cli.load_lm", fake_load_lm)  # play loads through the name it imported
    with pytest.raises(_Stop):
        main(["play", "--tasks", "nback_verbal_1", *flag])
    assert seen["prefix_cache"] is expected
