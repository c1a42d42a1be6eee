"""A model's size in billions of parameters, for seed 003 Figure 1 (accuracy by model size).

Counted from the model's own files, never guessed from its name: the tensors of a GGUF file
(``gguf_file`` in the model_args, inside ``pretrained``) or the shapes in the headers of a local
folder's ``*.safetensors`` files (the header only is read, not the weights). Hub ids that are not on
disk and API models have no files here: give their ``size:`` in the suite file.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def gguf_parameters(path: Path) -> int:
    """Total elements of the tensors in a GGUF file (the ``gguf`` package reads the header lazily)."""
    import gguf

    return sum(int(t.n_elements) for t in gguf.GGUFReader(str(path)).tensors)


def safetensors_parameters(path: Path) -> int:
    """Total elements of the tensors named in one ``.safetensors`` file's JSON header."""
    with open(path, "rb") as fh:
        (length,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(length))
    return sum(math.prod(v["shape"]) for k, v in header.items() if k != "__metadata__" and isinstance(v, dict))


def model_size_b(args: Mapping[str, Any]) -> float | None:
    """Billions of parameters of the model ``args`` (parsed model_args) name, or None when its files are not local."""
    folder = Path(args["pretrained"]).expanduser() if args.get("pretrained") else None
    if args.get("gguf_file"):
        gguf_path = Path(args["gguf_file"]).expanduser()
        if not gguf_path.is_absolute() and folder is not None:
            gguf_path = folder / gguf_path
        return gguf_parameters(gguf_path) / 1e9 if gguf_path.is_file() else None
    if folder is not None and folder.is_dir():
        files = sorted(folder.glob("*.safetensors"))
        if files:
            return sum(safetensors_parameters(f) for f in files) / 1e9
    return None
