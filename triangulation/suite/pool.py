"""The node's GPU pool (``triangulate suite --gpus``): its GPUs, whether a model fits them, and the models run on
them as GPUs free up.

The node's GPUs come from ``--gpus 0,1,...``, else ``CUDA_VISIBLE_DEVICES``, else every GPU that
``nvidia-smi -L`` lists (:func:`gpu_inventory`); a machine without any has none. A model needing more GPUs
than the node has is one line before anything starts (:func:`triangulation.suite.gpu_fit.check_fits`). :func:`run_pool` runs the models at
run time by the rule the plan schedules them with (:func:`triangulation.suite.placement.schedule`): the real
models, their real durations; each start takes free GPUs at once, each end frees them at once.
On a cluster SLURM places the jobs instead (``--executor slurm``); the pool is for one node.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from plumbing.errors import UserError
from triangulation.suite.gpu_fit import check_fits

SMI_LINE = re.compile(r"^GPU (\d+):", re.MULTILINE)


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


def run_pool(
    order: Sequence[tuple[str, int]],
    gpus: Sequence[str],
    start: Callable[[str, list[str]], Any],
    on_event: Callable[[str, str, list[str]], None] | None = None,
) -> dict[str, Any]:
    """Run ``start(name, gpu_ids)`` for each ``(name, gpus_needed)`` of ``order`` (priority order) in a thread
    of its own as soon as that many GPUs are free (a later entry that fits starts before an earlier one that
    does not); freed GPUs are handed out at once. Returns each name's result; the first exception raised by
    a ``start`` is re-raised once the running ones end. ``on_event(kind, name, gpu_ids)``: "start"/"end".
    The calling thread only waits (with a timeout, so Ctrl-C and SIGTERM reach it)."""
    check_fits(dict(order), gpus)
    free = list(gpus)
    waiting = list(order)
    ended: queue.Queue = queue.Queue()
    results: dict[str, Any] = {}
    errors: list[BaseException] = []
    running = 0

    def work(name: str, ids: list[str]) -> None:
        try:
            results[name] = start(name, ids)
        except BaseException as exc:  # noqa: BLE001  (re-raised in the calling thread)
            errors.append(exc)
        finally:
            ended.put((name, ids))

    while waiting or running:
        for name, need in list(waiting):
            if need <= len(free) and not errors:
                ids, free = free[:need], free[need:]
                waiting.remove((name, need))
                running += 1
                if on_event is not None:
                    on_event("start", name, ids)
                threading.Thread(target=work, args=(name, ids), name=f"suite-{name}", daemon=True).start()
        if errors and not running:
            break
        name, ids = _next_end(ended)
        running -= 1
        free = [g for g in gpus if g in set(free) | set(ids)]  # back in the node's order
        if on_event is not None:
            on_event("end", name, ids)
    if errors:
        raise errors[0]
    return results


def _next_end(ended: queue.Queue) -> tuple[str, list[str]]:
    while True:
        try:
            return ended.get(timeout=0.5)
        except queue.Empty:
            continue
