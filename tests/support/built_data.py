"""One built-data folder per test process, shared by the tests that play or evaluate built datasets.

Every dataset is built once, with the real builders, from the upstream snapshot into a temporary
folder (about 10 s); tests point ``TRIANGULATE_DATA`` at it (:func:`use_built_data`, or the
``built_data`` fixture of tests/conftest.py).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path

from lm_eval_tasks import TASKS_DIR


@cache
def built_data_root(upstream: str) -> Path:
    """Build every registered dataset from ``upstream`` into a temporary folder (once per process)."""
    from datasets_build.registry import builders

    os.environ["TRIANGULATE_UPSTREAM"] = upstream
    root = Path(tempfile.mkdtemp(prefix="triangulate-tasks-data-"))
    atexit.register(shutil.rmtree, root, True)
    for name, build in builders().items():
        build(root / name)
    return root


def use_built_data(upstream: Path, monkeypatch) -> Path:
    """Point ``TRIANGULATE_DATA`` at the built folder for one test; returns the folder."""
    root = built_data_root(str(upstream))
    monkeypatch.setenv("TRIANGULATE_DATA", str(root))
    _clear_prompt_caches()
    return root


def _clear_prompt_caches() -> None:
    from datasets_build import prompts

    for fn in (prompts.canprop_templates, prompts.connections_template):
        fn.cache_clear()


@cache
def task_manager(include_defaults: bool = True):
    """lm-eval's TaskManager with our task folder, as `triangulate eval` builds it (cached per process).

    ``include_defaults=False`` skips indexing lm-eval's thousands of built-in YAMLs (much faster).
    """
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(TASKS_DIR), include_defaults=include_defaults)
