"""Results of ``triangulate play``: task summaries and the results JSON, built, written and found here.

A task's own files (episodes, turn log, settings, rank parts) belong to :class:`multiturn.engine.store.TaskStore`; this
module summarises the records, builds the results JSON (:func:`results_payload`) and owns the model folder's results
files: :func:`write_results` writes a new one, :func:`newest_results_of` finds the newest that reports given tasks.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from lm_eval.utils import handle_non_serializable

from models.loading import decoding_config
from multiturn.engine.settings import PlaySettings, scoring_version
from multiturn.game import TaskSpec
from multiturn.registry import group_aggregator, group_names
from plumbing import jsonio, run_folder
from plumbing.run_folder import EPISODE_IDS_KEY
from plumbing.stats import mean_of_keys

log = logging.getLogger(__name__)


def stderr_of_mean(values: Iterable[float]) -> float | str:
    """Standard error of the mean of the non-NaN values (sample std / sqrt(n)); "N/A" below two values."""
    kept = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if len(kept) < 2:
        return "N/A"
    mean = sum(kept) / len(kept)
    var = sum((v - mean) ** 2 for v in kept) / (len(kept) - 1)
    return math.sqrt(var / len(kept))


def summarize(task: TaskSpec, records: Sequence[Mapping[str, Any]], n_original: int) -> dict[str, Any]:
    """Task metrics from finished records (failed episodes left out and counted)."""
    ok = [r for r in records if not r.get("failed")]
    scores = [dict(r.get("scores", {})) for r in ok]
    metrics = task.aggregate(scores) if scores else {}
    stderr: dict[str, Any] = {}
    if type(task).aggregate is TaskSpec.aggregate:  # the default mean: its standard error is known
        for key in mean_of_keys(scores):
            stderr[key] = stderr_of_mean(s.get(key, float("nan")) for s in scores)
    return {
        "task": task.name,
        "metrics": metrics,
        "stderr": stderr,
        "higher_is_better": task.higher_is_better(),
        "config": task.config(),
        "version": scoring_version(task),
        "n_samples": {"original": n_original, "effective": len(ok)},
        "n_failed": len(records) - len(ok),
        "records": list(records),
    }


def play_payload(settings: PlaySettings, summaries: Mapping[str, Mapping[str, Any]], lm: Any, total_seconds: float) -> dict[str, Any]:
    """The results JSON of a ``triangulate play`` run, assembled here alone: the :func:`summarize` outputs of its tasks,
    the groups it asked for (each with its members' mean: :func:`results_payload`) and its ``config``: the settings'
    (:meth:`multiturn.engine.settings.PlaySettings.config`) and how the player's backend decoded
    (:func:`models.loading.decoding_config`, read when the run ends: the prefix cache can switch itself off mid-run)."""
    groups = group_names()
    config = {**settings.config(), **decoding_config(lm)}
    return results_payload(
        summaries,
        groups={name: groups[name] for name in settings.tasks if name in groups},
        config=config,
        model_name=config["model_name"],
        model_name_sanitized=settings.folder(),
        total_seconds=total_seconds,
    )


def results_payload(
    task_results: Mapping[str, Mapping[str, Any]],
    *,
    groups: Mapping[str, list[str]] | None = None,
    config: Mapping[str, Any],
    model_name: str,
    model_name_sanitized: str,
    total_seconds: float | None = None,
) -> dict[str, Any]:
    """The results JSON in lm-eval's shape from :func:`summarize` outputs (:func:`multiturn.engine.runner.run_task`).

    ``groups`` maps a requested group name to its members; its entry holds, for every metric all
    members report, the unweighted mean of the members' values (lm-eval's group mean).
    """
    results: dict[str, dict[str, Any]] = {}
    group_results: dict[str, dict[str, Any]] = {}
    out: dict[str, Any] = {
        "results": results,
        "groups": group_results,
        "group_subtasks": {},
        "configs": {},
        "versions": {},
        "n-shot": {},
        "higher_is_better": {},
        "n-samples": {},
        "config": dict(config),
        "date": datetime.now().timestamp(),
        "model_name": model_name,
        "model_name_sanitized": model_name_sanitized,
        "total_evaluation_time_seconds": str(total_seconds) if total_seconds is not None else None,
    }
    for task, res in task_results.items():
        n_ok = int(res.get("n_samples", {}).get("effective", 0))
        entry: dict[str, Any] = {"name": task, "alias": task, "sample_len": n_ok}
        for metric, value in res["metrics"].items():
            entry[f"{metric},none"] = value
            entry[f"{metric}_stderr,none"] = res.get("stderr", {}).get(metric, "N/A")
        entry["n_failed"] = res.get("n_failed", 0)
        if res.get("judge"):
            entry["judge"] = res["judge"]  # "self": the evaluated model was its own judge (the report marks it)
        errors = [r.get("error") for r in res.get("records", []) if r.get("failed") and r.get("error")]
        if errors:
            entry["first_error"] = errors[0]
        results[task] = entry
        out["configs"][task] = res.get("config", {})
        out["versions"][task] = res.get("version", 1.0)
        out["n-shot"][task] = 0
        out["higher_is_better"][task] = res.get("higher_is_better", {})
        out["n-samples"][task] = res.get("n_samples", {})
        if "records" in res:  # the episodes these numbers come from: a reader takes the same ones (issue 39 item 5)
            out.setdefault(EPISODE_IDS_KEY, {})[task] = [str(r["id"]) for r in res["records"] if not r.get("failed") and "id" in r]
    for group, members in (groups or {}).items():
        present = [m for m in members if m in task_results]
        if present:
            add_group(out, group, present, task_results)
    if not group_results:  # lm-eval writes `groups` only when a group has an aggregation
        del out["groups"]
    return out


def add_group(out: dict[str, Any], group: str, present: Sequence[str], task_results: Mapping[str, Mapping[str, Any]]) -> None:
    """Add group ``group`` of members ``present`` to the results payload ``out``, as lm-eval does: every
    metric all members report as the unweighted mean of their values, or the group's own rule."""
    results, group_results = out["results"], out.setdefault("groups", {})
    shared = [k for k in task_results[present[0]]["metrics"] if all(k in task_results[m]["metrics"] for m in present)]
    sizes = [int(task_results[m].get("n_samples", {}).get("effective", 0)) for m in present]
    entry = {"alias": group, "name": group, "sample_len": sum(sizes)}
    for metric in shared:
        vals = [task_results[m]["metrics"][metric] for m in present]
        ok = [float(v) for v in vals if isinstance(v, (int, float)) and not math.isnan(float(v))]
        entry[f"{metric},none"] = sum(ok) / len(ok) if len(ok) == len(vals) and ok else float("nan")
        entry[f"{metric}_stderr,none"] = "N/A"

    custom = group_aggregator(group)
    if custom is not None:  # the group's own rule (e.g. a benchmark-wide score) instead of the mean
        for metric, value in custom({m: dict(task_results[m]["metrics"]) for m in present}).items():
            entry[f"{metric},none"] = value
            entry[f"{metric}_stderr,none"] = "N/A"
            shared.append(metric)
    if shared:
        entry["sample_count"] = {f"{metric},none": sum(sizes) for metric in shared}
    # lm-eval 0.4.13 (evaluator_utils.EvalAcc.collect): every group's entry goes into `results`, and
    # a group with an aggregation also into `groups`; `group_subtasks` lists each group's members.
    results[group] = entry
    if shared:
        group_results[group] = dict(entry)
    out["group_subtasks"][group] = present
    hib = {}
    for m in present:
        hib.update(task_results[m].get("higher_is_better", {}))
    out["higher_is_better"][group] = {k: v for k, v in hib.items() if k in shared}
    out["versions"][group] = "N/A"  # lm-eval: a group without metadata.version
    out["n-shot"][group] = 0


# --- the model folder's results files --------------------------------------------------------------


def write_results(model_dir: Path, payload: Mapping[str, Any]) -> Path:
    """Write a new results JSON (:func:`plumbing.run_folder.new_results_path`) into ``model_dir`` with the atomic
    writer (:mod:`plumbing.atomic`), so a reader never sees a half-written results file; returns its path."""
    model_dir = Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    return jsonio.write_json(run_folder.new_results_path(model_dir), payload, indent=2, default=handle_non_serializable)


def newest_results_of(model_dir: Path, tasks: Sequence[str]) -> run_folder.ResultsFile | None:
    """The newest results file in ``model_dir`` that reports every one of ``tasks`` (lm-eval runs of the model share
    the folder), or None."""
    files = Path(model_dir).rglob(run_folder.RESULTS_GLOB)  # one scan: none when the folder is not there yet
    return next((f for f in run_folder.newest_first(files) if all(t in f.results for t in tasks)), None)
