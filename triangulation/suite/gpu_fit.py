"""Does each model fit its GPUs? The preflight's memory check: the GPUs and their memory (``nvidia-smi``, or a SLURM
partition's GPU type), a model's parameters and bytes per weight (its dtype or quantization), and the fit with room
for vLLM's KV cache (:func:`memory_problem`); and the GPU count, a model needing more GPUs than the node has
(:func:`fit_problems`, :func:`check_fits`)."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from plumbing.errors import UserError
from triangulation.runs.model_size import model_size_b
from triangulation.suite.spec import ModelSpec

#: room for the KV cache and activations on top of the weights (a share of the weights' bytes)
KV_HEADROOM = 0.2
GPU_MEMORY_UTILIZATION = 0.9  # vLLM's default --gpu-memory-utilization
DTYPE_BYTES = {"float32": 4, "fp32": 4, "float": 4, "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2, "int8": 1, "fp8": 1}
#: bytes per weight of a quantization scheme (vLLM's ``--quantization``, transformers' ``load_in_8bit``/``load_in_4bit``,
#: or the scheme in the checkpoint's name: ``...-FP8``, ``...-AWQ``): 8-bit schemes 1 byte, 4-bit schemes half a byte
QUANT_BYTES = {
    "fp8": 1.0,
    "int8": 1.0,
    "w8a8": 1.0,
    "fbgemm_fp8": 1.0,
    "awq": 0.5,
    "gptq": 0.5,
    "int4": 0.5,
    "w4a16": 0.5,
    "mxfp4": 0.5,
    "nvfp4": 0.5,
    "bitsandbytes": 0.5,
}
#: memory per GPU of the GPU types SLURM names in its generic resources (``gpu:h100:8``): the vendors' datasheets
SLURM_GPU_GB = {
    "h100": 80,
    "h200": 141,
    "b200": 180,
    "gh200": 96,
    "l40s": 48,
    "l40": 48,
    "a10": 24,
    "a6000": 48,
    "a100_80gb": 80,
    "a100-80gb": 80,
}


SINFO_GPUS = re.compile(r"gpu(?::[^:,(]+)?:(\d+)")


def gpu_memory_mib(ids: list[str]) -> dict[str, int]:
    """Each GPU's total memory (MiB) by index, from ``nvidia-smi`` (none when it is missing or fails)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return {}
    argv = [exe, "--query-gpu=index,memory.total", "--format=csv,noheader,nounits"]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    rows = [ln.split(",") for ln in out.splitlines() if ln.count(",") == 1]
    memory = {i.strip(): int(float(m)) for i, m in rows if m.strip().replace(".", "").isdigit()}
    return {i: memory[i] for i in ids if i in memory} if ids else memory


def sinfo_gres(partition: str | None) -> str | None:
    """``sinfo``'s generic resources of the partition's nodes (``gpu:h100:8(S:0-1)`` lines); None without ``sinfo``."""
    exe = shutil.which("sinfo")
    if exe is None:
        return None
    argv = [exe, "-h", "-o", "%G", *(["-p", partition] if partition else [])]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None


def slurm_node_gpus(partition: str | None) -> int | None:
    """GPUs of the partition's largest node (``sinfo``'s generic resources), None when ``sinfo`` is missing."""
    out = sinfo_gres(partition)
    return None if out is None else max([int(n) for n in SINFO_GPUS.findall(out)], default=0)


def slurm_gpu_memory_mib(partition: str | None) -> dict[str, int]:
    """{GPU type: MiB} of the partition's nodes from ``sinfo``'s generic resources (``gpu:h100:8``) and the
    datasheet table :data:`SLURM_GPU_GB`; {} when ``sinfo`` is missing or a type is not known (then nothing is judged)."""
    types = {m.lower() for m in re.findall(r"gpu:([A-Za-z0-9_.-]+):\d+", sinfo_gres(partition) or "")}
    if not types or not types <= set(SLURM_GPU_GB):
        return {}
    return {t: int(SLURM_GPU_GB[t] * 1000 / 1.048576) for t in types}


def model_params_b(model: ModelSpec) -> float | None:
    if model.size is not None:
        return model.size

    return None if model.ref.given is None else model_size_b(model.ref.args)


def weight_bytes(model: ModelSpec) -> tuple[float, str]:
    """(bytes per weight, what says so): a quantization in ``serve_args`` (``--quantization fp8``) or ``model_args``
    (``quantization=``, ``load_in_8bit``/``load_in_4bit``) or the checkpoint's name (``...-FP8``), else its dtype."""
    args = model.ref.args
    flags = list(model.serve_args)
    for i, flag in enumerate(flags):
        name, eq, value = flag.partition("=")
        if name in ("--quantization", "-q"):
            scheme = (value if eq else (flags[i + 1] if i + 1 < len(flags) else "")).lower()
            if scheme in QUANT_BYTES:
                return QUANT_BYTES[scheme], f"--quantization {scheme}"
    scheme = str(args.get("quantization") or "").lower()
    if scheme in QUANT_BYTES:
        return QUANT_BYTES[scheme], f"quantization={scheme}"
    for key, size in (("load_in_4bit", 0.5), ("load_in_8bit", 1.0)):
        if str(args.get(key, "")).lower() in ("true", "1"):
            return size, key
    name = str(args.get("pretrained") or args.get("model") or "").lower()
    for scheme in QUANT_BYTES:
        if re.search(rf"(^|[-_./]){re.escape(scheme)}($|[-_./])", name):
            return QUANT_BYTES[scheme], f"{scheme} checkpoint"
    dtype = str(args.get("dtype") or "bfloat16").replace("torch.", "")
    return float(DTYPE_BYTES.get(dtype, 2)), dtype


def memory_problem(model: ModelSpec, gpus: int, gpu_mib: int) -> str | None:
    """A one-line problem when ``model`` (params x dtype bytes x (1 + KV headroom)) does not fit ``gpus`` GPUs."""
    params = model_params_b(model)
    if params is None:
        return None
    per_weight, dtype = weight_bytes(model)
    need_gb = params * per_weight * (1 + KV_HEADROOM)
    usable_gb = GPU_MEMORY_UTILIZATION * gpu_mib * 1.048576 / 1000  # MiB -> GB (1e9 bytes)
    if need_gb <= gpus * usable_gb:
        return None
    least = math.ceil(need_gb / usable_gb)
    return (
        f"model {model.name} does not fit: {params:g}B parameters x {per_weight:g} bytes ({dtype}) + {KV_HEADROOM:.0%} "
        f"KV headroom = {need_gb:.0f} GB > {gpus} GPU(s) x {usable_gb:.0f} GB ({GPU_MEMORY_UTILIZATION:.0%} of {gpu_mib} MiB); "
        f"it needs at least {least} GPUs (`gpus: {least}`)"
    )


def fit_problems(needs: Mapping[str, int], gpus: Sequence[str]) -> list[str]:
    """One line per model needing more GPUs than the node has (``needs``: GPUs per model name, as the pool places them:
    each model's ``gpus:``, default 1): what the preflight lists and :func:`check_fits` raises."""
    return [
        f"model {name} needs {n} GPUs but this node has {len(gpus)} ({','.join(gpus) or 'none'}); lower its `gpus:`"
        for name, n in needs.items()
        if n > len(gpus)
    ]


def check_fits(needs: Mapping[str, int], gpus: Sequence[str]) -> None:
    """A model needing more GPUs than the node has (:func:`fit_problems`): one line, before anything starts."""
    if too_big := fit_problems(needs, gpus):
        raise UserError(too_big[0])
