"""Read results folders written by ``lm_eval --output_path`` and ``triangulate play --output_path``.

Both write ``<dir>/<model>/results_<date>.json`` in lm-eval's shape: ``results[task]["<metric>,<filter>"]``,
``configs[task]``, ``group_subtasks`` and ``config.model_args`` (a dict from lm_eval's CLI, a string
from its Python API). lm_eval adds ``samples_<task>_<date>.jsonl`` with ``--log_samples``; play adds
``episodes_<task>.jsonl``. Models are identified from ``config``, never from folder names.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plumbing.errors import UserError

#: model_args keys naming the model, in lm-eval's own order (evaluation_tracker._get_model_name).
MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")
NON_METRIC_KEYS = {"alias", "name", "sample_len", "samples", " "}


@dataclass
class Run:
    """One results JSON: the model it scored and every task's metrics."""

    model: str
    path: Path
    date: str
    results: dict[str, dict[str, Any]]
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    group_subtasks: dict[str, list[str]] = field(default_factory=dict)
    samples: dict[str, Path] = field(default_factory=dict)  # task -> samples / episodes JSONL
    n_samples: dict[str, int] = field(default_factory=dict)  # task -> samples scored (lm-eval's ``n-samples``, effective)
    n_total: dict[str, int] = field(default_factory=dict)  # task -> samples of the whole task (``n-samples``, original)

    def top_level_tasks(self, max_members: int = 12) -> list[str]:
        """Tasks to list as benchmarks: a group of more than ``max_members`` tasks (mmlu's subjects,
        bbh's 24 tasks) stands for its members; smaller groups (the seven clembench games, the
        GlobalGroup subsets) are listed with their members. A group of seed replicas (``<group>_seed_<k>``, the
        lm_pragmatics prompt orders) stands for them too: their spread is the group's seed spread, not a benchmark."""
        members = {
            t
            for g, subs in self.group_subtasks.items()
            if g in self.results and (len(subs) > max_members or seed_replicas(g, subs))
            for t in subs
        }
        return [t for t in self.results if t not in members]


def seed_replicas(group: str, members: list[str]) -> bool:
    """True when every member of ``group`` is ``<group>_seed_<k>``: one benchmark run under several seeds."""
    import re

    return bool(members) and all(re.fullmatch(rf"{re.escape(group)}_seed_\d+", m) for m in members)


def parse_model_args(model_args: Any) -> dict[str, str]:
    """``config.model_args`` as a dict: lm_eval's CLI stores a dict, its Python API a ``k=v,k2=v2`` string."""
    if model_args is None:
        return {}
    if isinstance(model_args, Mapping):
        return {str(k): str(v) for k, v in model_args.items()}
    if isinstance(model_args, str):
        out: dict[str, str] = {}
        for part in model_args.split(","):
            if "=" in part:
                k, v = part.split("=", 1)
                out[k.strip()] = v.strip()
        return out
    raise UserError(f"config.model_args has an unexpected type {type(model_args).__name__}")


def model_id(config: Mapping[str, Any]) -> str:
    """The model a results file scored, from ``config`` (not from the folder name).

    The first of peft/delta/pretrained/model/path/engine in ``model_args`` (lm-eval's rule), a GGUF
    model's name when ``gguf_file`` is given (:func:`multiturn.backends.loading.gguf_model_name`: the
    folder name, ``SmolLM2-135M-Instruct-Q4_1``), the last path component when the value is a local path
    (``/x/y/Llama-3-8B`` -> ``Llama-3-8B``; hub ids ``org/name`` stay whole); else ``config.model``.
    """
    from multiturn.backends.loading import gguf_model_name

    args = parse_model_args(config.get("model_args"))
    if args.get("gguf_file"):
        return gguf_model_name(args["gguf_file"])
    for key in MODEL_KEYS:
        value = args.get(key)
        if value:
            value = value.rstrip("/")
            if value.startswith(("/", "./", "../", "~")) or value.count("/") > 1:
                value = value.rsplit("/", 1)[-1]
            return value
    name = config.get("model_name") or config.get("model")
    if not name:
        raise UserError("results file has no config.model_args or config.model to identify the model")
    return str(name)


def find_results_files(root: Path) -> list[Path]:
    """Every ``results_*.json`` under ``root`` (a file is taken as is)."""
    root = Path(root)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise UserError(f"results path {root} does not exist")
    files = sorted(p for p in root.rglob("results_*.json") if p.is_file())
    if not files:
        raise UserError(f"no results_*.json under {root}; pass folders written by lm_eval/triangulate play --output_path")
    return files


def read_run(path: Path) -> Run:
    """Parse one results JSON; unreadable or foreign files raise a one-line UserError."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"cannot read results file {path}: {exc.__class__.__name__}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise UserError(f"{path} is not an lm-eval results file (no 'results' object)")
    config = data.get("config") or {}
    if not isinstance(config, dict):
        raise UserError(f"{path}: 'config' is not an object")
    date = Path(path).stem.removeprefix("results_")
    run = Run(
        model=model_id(config),
        path=Path(path),
        date=date,
        results={str(k): v for k, v in {**(data.get("groups") or {}), **data["results"]}.items() if isinstance(v, dict)},
        configs={str(k): v for k, v in (data.get("configs") or {}).items() if isinstance(v, dict)},
        group_subtasks={str(k): list(v) for k, v in (data.get("group_subtasks") or {}).items() if isinstance(v, list)},
        n_samples=_n_samples(data.get("n-samples")),
        n_total=_n_samples(data.get("n-samples"), "original"),
    )
    folder = Path(path).parent
    for task in run.results:
        for candidate in (folder / f"samples_{task}_{date}.jsonl", folder / f"episodes_{task}.jsonl"):
            if candidate.is_file():
                run.samples[task] = candidate
                break
    return run


def _n_samples(entry: Any, which: str = "effective") -> dict[str, int]:
    """lm-eval's ``n-samples`` ({task: {"original": N, "effective": M}}) -> {task: M} (``which="original"``: N)."""
    out: dict[str, int] = {}
    for task, counts in (entry or {}).items() if isinstance(entry, dict) else ():
        value = counts.get(which, counts.get("original")) if isinstance(counts, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            out[str(task)] = value
    return out


def metric_values(task_results: Mapping[str, Any]) -> dict[str, float]:
    """``{"metric,filter": v}`` -> ``{metric: v}`` (filter ``none`` preferred; stderr and strings dropped)."""
    out: dict[str, float] = {}
    preferred: dict[str, bool] = {}
    for key, value in task_results.items():
        if key in NON_METRIC_KEYS or "_stderr" in key or isinstance(value, (str, bool)) or value is None:
            continue
        if not isinstance(value, (int, float)):
            continue
        metric, _, filt = key.partition(",")
        is_none = filt in ("", "none")
        if metric not in out or (is_none and not preferred[metric]):
            out[metric] = float(value)
            preferred[metric] = is_none
    return out


def main_metric(task: str, run: Run, overrides: Mapping[str, Any] | None = None) -> tuple[str, float]:
    """The main metric of ``task`` in ``run`` and its value.

    ``overrides`` maps task-name patterns (fnmatch) to a metric name or a list of names (their mean,
    e.g. IFEval's prompt- and instruction-level strict accuracy, seed 003 App. E.2.1). Otherwise the
    first metric of the task's ``metric_list``, else the first metric in the results.
    """
    from fnmatch import fnmatchcase

    values = metric_values(run.results.get(task, {}))
    for pattern, wanted in (overrides or {}).items():
        if fnmatchcase(task, pattern):
            names = [wanted] if isinstance(wanted, str) else list(wanted)
            if all(n in values for n in names):
                return "+".join(names), sum(values[n] for n in names) / len(names)
    for item in run.configs.get(task, {}).get("metric_list") or []:
        name = item.get("metric") if isinstance(item, dict) else None
        if isinstance(name, str) and name in values:
            return name, values[name]
    if values:
        name = next(iter(values))
        return name, values[name]
    return "", math.nan
