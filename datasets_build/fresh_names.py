"""A fresh twin's task name: shared by the twins' generator (:mod:`datasets_build.matched`) and the side runner's
``*_fresh`` games (:mod:`multiturn.games.clem_fresh`), so that registering a game's tasks loads no data library."""

from __future__ import annotations

FRESH_SUFFIX = "_fresh"


def twin(task: str) -> str:
    return task + FRESH_SUFFIX


def published_of(task: str) -> str | None:
    """``globalgroup_zh`` for ``globalgroup_zh_fresh``; None for a task that is no fresh twin."""
    return task[: -len(FRESH_SUFFIX)] if task.endswith(FRESH_SUFFIX) else None
