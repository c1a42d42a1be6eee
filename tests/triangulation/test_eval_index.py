"""`triangulate eval` on our tasks only builds lm-eval's task index from our folder alone (triangulation.cli.eval_index)."""

from __future__ import annotations

import argparse

from lm_eval_tasks import TASKS_DIR
from triangulation.cli.eval_index import only_our_tasks, own_task_index


def test_only_our_tasks_skip_lm_evals_own_index(tmp_path):
    ours = [str(TASKS_DIR)]
    assert only_our_tasks("connections,lm_pragmatics_irony_seed_0", ours)
    assert only_our_tasks(["connections", "lm_pragmatics"], ours)  # a group of ours
    assert not only_our_tasks("connections,hellaswag", ours)  # one of lm-eval's: the full index
    assert not only_our_tasks("connections", [*ours, str(tmp_path)])  # a user's folder may build on lm-eval's
    assert not only_our_tasks(None, ours)
    import lm_eval.tasks as lm_tasks

    full = lm_tasks.TaskManager
    with own_task_index(argparse.Namespace(tasks="connections", include_path=ours)) as own:
        index = lm_tasks.TaskManager(include_path=str(TASKS_DIR)).all_tasks
        assert own and "connections" in index and "hellaswag" not in index
    assert lm_tasks.TaskManager is full
    with own_task_index(argparse.Namespace(tasks="hellaswag", include_path=ours)) as own:
        assert not own and lm_tasks.TaskManager is full
