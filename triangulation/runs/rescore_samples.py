"""Re-scoring an lm-eval run from its ``--log_samples`` files (:func:`plumbing.run_folder.samples_files`) with the current task code.

For every logged sample the stored raw responses (``resps``) go through the task's current filters and
``process_results`` (the same calls lm-eval's evaluator makes), and each metric is aggregated with the
task's current aggregation and its standard error as lm-eval computes it
(``lm_eval.api.metrics.stderr_for_metric``). No model is called. The result is an lm-eval results
payload (``results``, ``n-samples``, ``higher_is_better``, ...) for :mod:`triangulation.cli.score`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lm_eval_tasks import TASKS_DIR
from plumbing import run_folder
from plumbing.jsonio import read_jsonl


def load_task(name: str, metadata: Mapping[str, Any] | None = None):
    """The lm-eval task ``name`` as the current code defines it (our task folder on the include path)."""
    return load_tasks({name: metadata})[name]


def load_tasks(metadata: Mapping[str, Mapping[str, Any] | None]) -> dict[str, Any]:
    """The lm-eval tasks named by ``metadata``'s keys (task -> its run's metadata), loaded together: one
    task index per distinct metadata (lm-eval's own tasks indexed only when one of them is not ours), one
    ``load`` call for all the tasks that share it."""
    ours = set(_task_manager("{}", False).all_tasks)
    by_meta: dict[tuple[str, bool], list[str]] = {}
    for name, meta in metadata.items():
        kept = {k: v for k, v in (meta or {}).items() if k not in _PER_TASK_METADATA}
        by_meta.setdefault((json.dumps(kept, sort_keys=True, default=str), name not in ours), []).append(name)
    out: dict[str, Any] = {}
    for (meta, full), names in by_meta.items():
        out |= _task_manager(meta, full).load(names)["tasks"]
    return out


#: metadata keys lm-eval's factory writes into each task's config itself (not the run's ``--metadata``)
_PER_TASK_METADATA = frozenset({"config_source"})


@functools.lru_cache(maxsize=8)
def _task_manager(metadata_json: str, full: bool):
    """One lm-eval task index per metadata (building one reads every task folder: seconds; lm-eval's own
    thousands of YAML files too with ``full``)."""
    from lm_eval.tasks import TaskManager

    from lm_eval_tasks.index_cache import install_index_cache

    install_index_cache()
    metadata = json.loads(metadata_json)
    return TaskManager(include_path=str(TASKS_DIR), metadata=metadata or None, include_defaults=full)


def rescore_samples(task, samples: Sequence[Mapping[str, Any]], bootstrap_iters: int = 100000) -> dict[str, Any]:
    """``{"metrics", "stderr", "n", "higher_is_better"}`` of one task from its logged samples.

    Each sample's ``resps`` (one list of responses per request) is filtered by every filter ensemble of
    the task; the metrics of the ensemble named in the sample's ``filter`` are recomputed.
    """
    from lm_eval.api.metrics import stderr_for_metric

    per_filter: dict[str, dict[str, list]] = {}
    output_type = getattr(getattr(task, "config", None), "output_type", None) or getattr(task, "OUTPUT_TYPE", None)
    for sample in samples:
        requests = [
            SimpleNamespace(resps=[typed_response(output_type, x) for x in r], doc=sample["doc"], filtered_resps={})
            for r in sample["resps"]
        ]
        for ensemble in getattr(task, "_filters", []):
            ensemble.apply(requests)
        key = sample.get("filter", "none")
        filtered = [req.filtered_resps.get(key, req.resps[0] if req.resps else None) for req in requests]
        for metric, value in task.process_results(sample["doc"], filtered).items():
            per_filter.setdefault(key, {}).setdefault(metric, []).append(value)
    aggregations = task.aggregation()
    metrics: dict[str, Any] = {}
    stderr: dict[str, Any] = {}
    for key, by_metric in per_filter.items():
        for metric, values in by_metric.items():
            agg = aggregations[metric]
            metrics[f"{metric},{key}"] = agg(values)
            fn = stderr_for_metric(
                metric=agg, bootstrap_iters=min(bootstrap_iters, 100) if metric in ("bleu", "chrf", "ter") else bootstrap_iters
            )
            stderr[f"{metric}_stderr,{key}"] = fn(values) if fn is not None and len(values) > 1 else "N/A"
    return {"metrics": metrics, "stderr": stderr, "n": len(samples), "higher_is_better": task.higher_is_better()}


def typed_response(output_type: str | None, response: Any) -> Any:
    """One logged response as lm-eval's ``process_results`` receives it. lm-eval's ``--log_samples`` writes
    loglikelihood answers as strings (``["-7.46", "False"]``: its JSON dump stringifies tuples' items), so
    they are made ``(float, bool)`` again here, once, before any filter or metric sees them;
    ``loglikelihood_rolling``'s one number likewise. Generated text passes as it is."""
    if output_type in ("loglikelihood", "multiple_choice") and isinstance(response, (list, tuple)) and len(response) == 2:
        return float(response[0]), str(response[1]) == "True"
    if output_type == "loglikelihood_rolling":
        value = response[0] if isinstance(response, (list, tuple)) and len(response) == 1 else response
        return float(value)
    return response


def rescore_lm_eval_run(model_dir: Path, old: Mapping[str, Any], tasks: Sequence[str] | None = None) -> dict[str, Any]:
    """A new lm-eval results payload for every task of ``model_dir`` with a samples file (``old``: the
    run's newest results, kept for its config and each task's original sample count)."""
    payload: dict[str, Any] = {key: dict(old.get(key, {})) if isinstance(old.get(key), dict) else old.get(key) for key in old}
    payload["results"] = {}
    files = run_folder.samples_files(model_dir, tasks)
    loaded = load_tasks({name: (old.get("configs", {}).get(name) or {}).get("metadata") for name in files})
    for name, path in files.items():
        scored = rescore_samples(loaded[name], read_jsonl(path))
        entry = {"name": name, "alias": (old.get("results", {}).get(name) or {}).get("alias", name), "sample_len": scored["n"]}
        for key, value in scored["metrics"].items():
            entry[key] = value
            metric, filt = key.split(",", 1)
            entry[f"{metric}_stderr,{filt}"] = scored["stderr"].get(f"{metric}_stderr,{filt}", "N/A")
        payload["results"][name] = entry
        payload.setdefault("higher_is_better", {})[name] = scored["higher_is_better"]
        original = (old.get("n-samples", {}).get(name) or {}).get("original", scored["n"])
        payload.setdefault("n-samples", {})[name] = {"original": original, "effective": scored["n"]}
    payload.pop("groups", None)  # groups are not recomputed here; their members are
    payload["group_subtasks"] = {g: m for g, m in (old.get("group_subtasks") or {}).items() if all(t in payload["results"] for t in m)}
    return payload
