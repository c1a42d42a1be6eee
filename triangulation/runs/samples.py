"""Per-sample records of lm-eval ``--log_samples`` files (and play episode files) as flat rows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from plumbing.run_folder import is_samples_file
from triangulation.runs.results_io import Run


def response_text(record: dict[str, Any]) -> str:
    """The model's (filtered) response of a sample: ``filtered_resps[0]``, unwrapped from nested lists."""
    value: Any = record.get("filtered_resps", record.get("resps", ""))
    while isinstance(value, list):
        value = value[0] if value else ""
    return "" if value is None else str(value)


def sample_records(runs: Iterable[Run], task_prefix: str, exclude: tuple[str, ...] = ()) -> list[tuple[str, str, dict[str, Any]]]:
    """(model, task, record) for every lm-eval logged sample (:func:`plumbing.run_folder.is_samples_file`;
    play's episode files are not samples) of tasks named ``task_prefix``... except those starting with an
    ``exclude`` prefix."""
    out = []
    for run in runs:
        for task, path in sorted(run.samples.items()):
            if not is_samples_file(path) or not task.startswith(task_prefix) or task.startswith(exclude):
                continue
            out.extend((run.model, task, rec) for rec in run.records.get(task, []))
    return out
