"""lm-eval's task index for ``triangulate eval``: our task folder alone when every ``--tasks`` name is ours.

lm-eval indexes its whole task tree (thousands of YAML files) before every run: 31.6 s on this 2-core machine
under load 8, against 0.3 s for our folder alone (``benchmarks/README.md``). A suite cell pays it on every
start, a SLURM job on every requeued leg. Our folder builds on nothing of lm-eval's (no ``include:`` or group
member outside it), so a run of our tasks only builds lm-eval's ``TaskManager`` without the defaults
(``include_defaults=False``); a run naming any other task, a file or a folder of the user's keeps the full index.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from lm_eval_tasks import TASKS_DIR


def task_names(tasks: str | list | None) -> list[str]:
    items = tasks if isinstance(tasks, list) else [tasks] if tasks else []
    return [n.strip() for item in items for n in str(item).split(",") if n.strip()]


def only_our_tasks(tasks: str | list | None, include_path: list[str] | None) -> bool:
    """Every ``--tasks`` name is a task, group or tag of our folder, and no other folder is included."""
    names = task_names(tasks)
    if not names or [str(p) for p in include_path or []] != [str(TASKS_DIR)]:
        return False
    from triangulation.suite import task_index  # lm-eval's task index: lm_eval

    ours = task_index.task_manager(False).task_index
    return all(n in ours for n in names)


@contextlib.contextmanager
def own_task_index(args: Any) -> Iterator[bool]:
    """While lm-eval runs ``args``: its ``TaskManager`` without the default tasks when :func:`only_our_tasks`
    (yields whether it did)."""
    if not only_our_tasks(getattr(args, "tasks", None), getattr(args, "include_path", None)):
        yield False
        return
    import lm_eval.tasks as lm_tasks

    full = lm_tasks.TaskManager

    class OwnTaskManager(full):  # type: ignore[misc, valid-type]
        def __init__(self, *a: Any, **kw: Any) -> None:
            kw["include_defaults"] = False
            super().__init__(*a, **kw)

    lm_tasks.TaskManager = OwnTaskManager
    try:
        yield True
    finally:
        lm_tasks.TaskManager = full
