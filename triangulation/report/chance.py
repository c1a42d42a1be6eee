"""Analytic chance levels of multiple-choice lm-eval tasks: guessing one of k options is right with probability 1/k.

For a task whose samples are lm-eval ``multiple_choice`` records (one loglikelihood request per option in
``arguments``), the chance level of ``acc``/``acc_norm`` is the mean over its items of ``1 / k`` (k = that item's
options); a group's is the mean over its members' items. The leaderboard file normalises by this level
instead of the chance player's score on the same few items, which is a noisy estimate of it (5 items of
``lm_pragmatics`` can all be wrong by luck: the chance row scored 0 and every model's normalised score was its raw
score).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from triangulation.runs.results_io import Run

#: the metrics whose chance level is 1/k (an accuracy over k options)
CHOICE_METRICS = ("acc", "acc_norm")


def options_per_item(run: Run, task: str) -> list[int]:
    """k for each item of a multiple-choice task in ``run`` (members of a group pooled); [] when not multiple choice."""
    config = run.configs.get(task) or {}
    if config.get("output_type") == "multiple_choice":  # lm-eval's samples: one record per item
        return [
            len(r["arguments"]) for r in run.records.get(task, []) if isinstance(r.get("arguments"), (list, Mapping)) and r["arguments"]
        ]
    members = run.group_subtasks.get(task, [])
    per_member = [options_per_item(run, m) for m in members if m != task]
    return [k for ks in per_member for k in ks] if per_member and all(per_member) else []


def analytic_chance(runs: list[Run], metrics: Mapping[str, Any]) -> dict[str, float]:
    """benchmark -> mean 1/k over its items, for the multiple-choice benchmarks scored by an accuracy."""
    out: dict[str, float] = {}
    for run in runs:
        for task in run.results:
            if task in out or str(metrics.get(task, "")).split(",")[0] not in CHOICE_METRICS:
                continue
            ks = options_per_item(run, task)
            if ks and min(ks) > 0:
                level = sum(1.0 / k for k in ks) / len(ks)
                if math.isfinite(level):
                    out[task] = level
    return out
