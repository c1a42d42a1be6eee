"""lm-eval's task index as the suite reads it: the task manager with our task folder, and the leaf tasks of a group."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from lm_eval_tasks import TASKS_DIR


@functools.cache
def task_manager() -> Any:
    """lm-eval's task index with our task folder (as `triangulate eval` builds it), once per process."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=[str(TASKS_DIR)])


def leaf_tasks(task_dict: Any) -> list[Any]:
    out: list[Any] = []
    for value in task_dict.values():
        if isinstance(value, dict):
            out += leaf_tasks(value)
        elif value is not None and hasattr(value, "build_all_requests"):
            out.append(value)
    return out


def eval_leaves(tasks: Sequence[str]) -> list[str]:
    """The leaf tasks of lm-eval tasks, groups and tags, from lm-eval's task index (no data is read)."""
    index = task_manager().task_index
    out: list[str] = []
    for name in tasks:
        out += _leaves(name, index, 0)
    return out


def _leaves(name: str, index: Any, depth: int) -> list[str]:
    entry = index.get(name)
    if entry is None or depth > 8:
        return [name]
    kind, cfg = entry.kind.name, entry.cfg or {}
    if kind == "TAG":
        members = [n for n, e in index.items() if name in (e.tags or set()) and n != name]
    elif kind == "GROUP":
        members = [t if isinstance(t, str) else t.get("task") for t in cfg.get("task", [])]
    else:
        return [name]
    return [leaf for m in members if isinstance(m, str) for leaf in _leaves(m, index, depth + 1)]
