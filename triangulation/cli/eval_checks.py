"""``triangulate eval``'s checks before lm-eval starts: unknown ``--tasks`` names and missing local models are
one line within seconds, before lm-eval indexes its ~14,000 task files (half a minute) or loads a model
(missing local models: :func:`models.args.check_local_model`).

The task check never refuses a name lm-eval knows: a name is unknown only when it occurs nowhere in the text
of lm-eval's task files or the include paths' files (every task, group and tag name lm-eval indexes is written
in one of them, whole or as a prefix of its prompt variants), a superset test that reads the files as text
(about a second) instead of parsing them. Names lm-eval resolves otherwise (a YAML path, a glob) pass
through to lm-eval's own check.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterable
from pathlib import Path

from plumbing.errors import unknown_names

#: files in a task tree that hold no task, group or tag name (lm-eval reads YAML, with or without an extension)
NOT_TASK_FILES = (".py", ".pyc", ".md", ".json", ".jsonl", ".csv", ".txt", ".tsv", ".parquet", ".png", ".ipynb")
#: ``task: name`` / ``group: name`` / ``tag: name`` and list items: the names offered as suggestions
NAME_LINE = re.compile(r"^\s*(?:-\s*|(?:task|group|tag):\s*)['\"]?([A-Za-z0-9_.+()\-]+)['\"]?\s*$", re.M)
LISTING = "list the known ones with `triangulate eval ls tasks`"


def lm_eval_task_dir() -> Path:
    spec = importlib.util.find_spec("lm_eval")
    return Path(spec.origin).parent / "tasks" if spec and spec.origin else Path()


def task_file_text(folders: Iterable[Path]) -> str:
    """The text of every file under ``folders`` that may hold a task, group or tag name."""
    parts = []
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if not name.endswith(NOT_TASK_FILES):
                    try:
                        parts.append(Path(root, name).read_text(encoding="utf-8", errors="replace"))
                    except OSError:
                        continue
    return "\n".join(parts)


def passes_through(name: str) -> bool:
    """Names lm-eval resolves without its index: globs and paths to task files or folders."""
    return any(c in name for c in "*?[") or os.path.exists(name)


def check_task_names(tasks: str | list | None, include_paths: list[str]) -> None:
    """``UserError`` naming each ``--tasks`` name that no task file mentions, with its closest known names."""
    names = tasks if isinstance(tasks, list) else [t.strip() for t in str(tasks or "").split(",") if t.strip()]
    names = [n for n in names if not passes_through(n)]
    if not names:
        return
    text = task_file_text([lm_eval_task_dir(), *map(Path, include_paths)])
    unknown = [n for n in names if n not in text]
    if unknown:
        raise unknown_names("task(s)", unknown, set(NAME_LINE.findall(text)), LISTING)
