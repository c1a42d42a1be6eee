"""Tokens per second of a model on an engine and a GPU: the throughput table of the cost model
(:mod:`triangulation.suite.estimate`), each number with its source, and the machine a run is measured on.

A replica's **prefill** rate (prompt tokens/s, compute-bound) is the GPUs' dense bf16 peak x the engine's
model-FLOPs utilisation over the ``2 x parameters`` FLOPs a token costs; its **decode** rate (generated
tokens/s, memory-bound) is ``batch`` sequences per step, a step reading the weights once (``2 bytes x
parameters``) at the GPUs' HBM bandwidth x the engine's bandwidth utilisation, and never more than the
prefill rate (the compute roof). Tensor parallelism adds each GPU's peak and bandwidth
(:data:`TP_EFFICIENCY` of them). No number here is fitted to another estimate: the GPU figures are the
vendor's datasheets, the batch bound is vLLM's own default, and the two utilisations are stated
assumptions (:data:`ENGINES`) that a run on the same hardware replaces with its measured rates
(:mod:`triangulation.suite.calibration`).
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Gpu:
    name: str
    bf16_flops: float  # dense bf16 tensor FLOP/s
    hbm_bytes_s: float  # HBM bandwidth, bytes/s
    source: str


#: NVIDIA datasheets (dense figures; the sparsity ones are twice these)
GPUS: dict[str, Gpu] = {
    "H100": Gpu(
        "H100 SXM5 80GB", 989.4e12, 3.35e12, "NVIDIA H100 Tensor Core GPU datasheet (SXM5: bf16 989.4 TFLOPS dense, HBM3 3.35 TB/s)"
    ),
    "H200": Gpu("H200 SXM 141GB", 989.4e12, 4.8e12, "NVIDIA H200 Tensor Core GPU datasheet (bf16 989.4 TFLOPS dense, HBM3e 4.8 TB/s)"),
    "A100": Gpu(
        "A100 SXM4 80GB", 312e12, 2.039e12, "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM: bf16 312 TFLOPS dense, HBM2e 2,039 GB/s)"
    ),
}


@dataclass(frozen=True)
class Engine:
    mfu: float  # prefill: share of the bf16 peak reached
    mbu: float  # decode: share of the HBM bandwidth reached per step
    max_batch: int  # sequences decoded together at most
    source: str


#: the two utilisations are assumptions (no GPU measurement of ours yet; a run's markers replace them)
ENGINES: dict[str, Engine] = {
    "vllm": Engine(
        0.5,
        0.7,
        1024,
        "assumed MFU 0.5 and bandwidth utilisation 0.7 (not measured here); max_batch: vLLM 0.32's default max_num_seqs "
        "for the OpenAI server on a >= 70 GiB non-A100 GPU (vllm/engine/arg_utils.py, _default_max_num_seqs)",
    ),
    "hf": Engine(
        0.3,
        0.5,
        64,
        "assumed MFU 0.3 (padded batches, no fused attention) and bandwidth utilisation 0.5; max_batch 64 assumed for batch_size auto",
    ),
}
TP_EFFICIENCY = 0.85  # assumed: tensor parallelism's all-reduces cost about 15%
BYTES_PER_PARAM = 2  # bf16 weights (suites/triangulating.yaml: dtype=bfloat16)


@dataclass(frozen=True)
class Rates:
    """One replica's throughput: prompt tokens/s, generated tokens/s at full batch and at batch 1, and where each
    number comes from (``"table"`` or ``"measured: ..."``)."""

    prefill: float
    decode: float
    decode_single: float
    sources: dict[str, str] = field(default_factory=dict)

    def with_measured(self, prefill: float | None, decode_single: float | None, why: str) -> Rates:
        """These rates with the measured ones: ``decode_single``, one sequence's generated tokens/s, sets the
        batch-1 rate, and the full-batch rate keeps the table's ratio to it (at most the prefill rate)."""
        sources = dict(self.sources)
        if prefill:
            sources["prefill"] = f"measured: {why}"
        if decode_single:
            sources["decode"] = f"measured: {why}"
        prefill = prefill or self.prefill
        if not decode_single:
            return Rates(prefill, self.decode, self.decode_single, sources)
        return Rates(prefill, min(self.decode * decode_single / self.decode_single, prefill), decode_single, sources)


def table_rates(engine: str, gpu: str, size_b: float, gpus: int) -> Rates:
    """The table's rates of one replica of a ``size_b``-billion-parameter model on ``gpus`` GPUs of kind ``gpu``."""
    g, e = GPUS[gpu], ENGINES["hf" if engine == "hf" else "vllm"]
    # hf with parallelize=True runs layer by layer: its GPUs hold the weights, one works at a time
    scale = 1.0 if engine == "hf" or gpus <= 1 else gpus * TP_EFFICIENCY
    params = size_b * 1e9
    prefill = g.bf16_flops * scale * e.mfu / (2 * params)
    step = BYTES_PER_PARAM * params / (g.hbm_bytes_s * scale * e.mbu)  # seconds per decode step
    decode = min(e.max_batch / step, prefill)
    sources = {"prefill": f"table: {g.source}; {e.source}", "decode": f"table: {g.source}; {e.source}"}
    return Rates(prefill, decode, 1 / step, sources)


@functools.cache
def hardware() -> str:
    """The machine a run is measured on: its first GPU's name (``nvidia-smi``), else the CPU model and cores."""
    exe = shutil.which("nvidia-smi")
    if exe:
        try:
            out = subprocess.run([exe, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout
            names = [line.strip() for line in out.splitlines() if line.strip()]
            if names:
                return f"gpu: {names[0]}"
        except (OSError, subprocess.TimeoutExpired):
            pass
    return f"cpu: {_cpu_model()} x{os.cpu_count() or 1}"


def _cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_kind(name: str | None) -> str:
    """The table's GPU for a hardware string (``"gpu: NVIDIA H100 80GB HBM3"`` -> ``H100``); H100 by default."""
    for kind in GPUS:
        if name and kind in name:
            return kind
    return "H100"
