"""Which GPUs each suite model runs on, and which models run at once (``triangulate suite --gpus``).

The node's GPUs come from ``--gpus 0,1,...``, else ``CUDA_VISIBLE_DEVICES``, else every GPU that
``nvidia-smi -L`` lists; a machine without any has none, and its models run one after another on
whatever device their ``model_args`` name. Each model needs ``gpus:`` GPUs (default 1). Models are
placed largest first (GPUs needed, then size) into *waves*: the models of one wave run at once on
disjoint GPUs, the next wave starts when the previous one is done. A model needing more GPUs than the
node has is a one-line error before anything starts. Each model's cells (and its server) see only
their GPUs through ``CUDA_VISIBLE_DEVICES``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from plumbing.errors import UserError
from triangulation.suite.spec import ModelSpec

SMI_LINE = re.compile(r"^GPU (\d+):", re.MULTILINE)


@dataclass(frozen=True)
class Placement:
    model: ModelSpec
    gpus: tuple[str, ...] | None  # device ids for CUDA_VISIBLE_DEVICES; () = none visible; None = no GPU inventory
    wave: int  # models of one wave run at once


def parse_gpus(value: str) -> list[str]:
    """``"0,1,3"`` -> ``["0", "1", "3"]`` (ids or UUIDs as CUDA_VISIBLE_DEVICES takes them); ``""`` -> none."""
    ids = [g.strip() for g in value.split(",") if g.strip()]
    dup = sorted({g for g in ids if ids.count(g) > 1})
    if dup:
        raise UserError(f"--gpus: GPU {dup[0]} is listed twice")
    return ids


def nvidia_smi_gpus() -> list[str]:
    """The indices ``nvidia-smi -L`` lists (none when it is missing or fails)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return SMI_LINE.findall(out)


def gpu_inventory(flag: str | None, env: Mapping[str, str] | None = None) -> list[str]:
    """The GPUs the suite may use: ``--gpus``, else ``CUDA_VISIBLE_DEVICES``, else ``nvidia-smi -L``."""
    env = os.environ if env is None else env
    if flag is not None:
        return parse_gpus(flag)
    if env.get("CUDA_VISIBLE_DEVICES") is not None:
        return parse_gpus(env["CUDA_VISIBLE_DEVICES"])
    return nvidia_smi_gpus()


def place(models: Sequence[ModelSpec], gpus: Sequence[str], need: Mapping[str, int] | None = None) -> list[Placement]:
    """Waves of models on disjoint GPUs, largest first (first fit); in the suite's model order.

    ``need`` overrides a model's ``gpus:`` by name (SLURM's ``gpus_per_model``). With no GPUs at all
    every model is its own wave (one after another, as on a CPU machine).
    """
    need = dict(need or {})
    wants = {m.name: need.get(m.name, m.gpu_count) for m in models}
    if not gpus:
        return [Placement(m, None, i) for i, m in enumerate(models)]
    too_big = [m for m in models if wants[m.name] > len(gpus)]
    if too_big:
        m = too_big[0]
        raise UserError(
            f"model {m.name} needs {wants[m.name]} GPUs but this node has {len(gpus)} ({','.join(gpus) or 'none'}); lower its `gpus:`"
        )
    order = sorted(range(len(models)), key=lambda i: (-wants[models[i].name], -(models[i].size or 0), i))
    free: list[list[str]] = []  # per wave: its GPUs not yet taken, in --gpus order
    placed: dict[int, Placement] = {}
    for i in order:
        m, n = models[i], wants[models[i].name]
        wave = next((k for k, left in enumerate(free) if len(left) >= n), None)
        if wave is None:
            free.append(list(gpus))
            wave = len(free) - 1
        taken, free[wave] = free[wave][:n], free[wave][n:]
        placed[i] = Placement(m, tuple(taken), wave)
    return [placed[i] for i in range(len(models))]


def waves(placements: Sequence[Placement]) -> list[list[Placement]]:
    """Placements grouped by wave, waves in order."""
    out: dict[int, list[Placement]] = {}
    for p in placements:
        out.setdefault(p.wave, []).append(p)
    return [out[k] for k in sorted(out)]


def gpu_env(placement: Placement, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a model's cells: ``base`` (default this process's) with its GPUs visible only."""
    env = dict(os.environ if base is None else base)
    if placement.gpus is not None:  # on a GPU node: its own GPUs only (none for a `gpus: 0` model)
        env["CUDA_VISIBLE_DEVICES"] = ",".join(placement.gpus)
    return env
