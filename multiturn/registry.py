"""Task names -> ``TaskSpec`` factories, and task groups.

Each test family registers its tasks at import with ``@register("name")`` (a class or a
zero-argument factory) and its groups with ``register_group``. ``FAMILY_MODULES`` lists the
families the registry imports on first lookup.
"""

from __future__ import annotations

import importlib
from typing import Callable

from multiturn.game import TaskSpec
from plumbing.errors import UserError

FAMILY_MODULES: tuple[str, ...] = (
    "multiturn.nback",
    "multiturn.flexibility",
    "multiturn.clem",
    "multiturn.splat",
    "multiturn.connections_interactive",
)

_TASKS: dict[str, Callable[[], TaskSpec]] = {}
_GROUPS: dict[str, list[str]] = {}
_GROUP_AGGREGATORS: dict[str, Callable[[dict], dict]] = {}
_loaded = False


def register(name: str):
    """Decorator: register a TaskSpec subclass or factory under ``name``."""

    def wrap(factory):
        if name in _TASKS:
            raise ValueError(f"task {name!r} registered twice")
        _TASKS[name] = factory
        return factory

    return wrap


def register_factory(name: str, factory: Callable[[], TaskSpec]) -> None:
    register(name)(factory)


def register_group(name: str, members: list[str], aggregate: Callable[[dict], dict] | None = None) -> None:
    """Register a group; ``aggregate({member: {metric: value}}) -> {metric: value}`` replaces the plain
    mean of the members' metrics in the results JSON (e.g. clembench's clemscore)."""
    _GROUPS[name] = list(members)
    if aggregate is not None:
        _GROUP_AGGREGATORS[name] = aggregate


def group_aggregator(name: str) -> Callable[[dict], dict] | None:
    """The group's own aggregation, if it registered one."""
    _load_families()
    return _GROUP_AGGREGATORS.get(name)


def _load_families() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module_name in FAMILY_MODULES:
        try:
            importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:  # a family that exists but fails to import is a bug
                raise


def task_names() -> list[str]:
    _load_families()
    return sorted(_TASKS)


def group_names() -> dict[str, list[str]]:
    _load_families()
    return {k: list(v) for k, v in _GROUPS.items()}


def expand(names: list[str]) -> list[str]:
    """Expand groups, keep order, drop repeats; unknown names raise one UserError listing them."""
    _load_families()
    out: list[str] = []
    unknown: list[str] = []
    for name in names:
        members = _GROUPS.get(name, [name])
        for member in members:
            if member not in _TASKS:
                unknown.append(member)
            elif member not in out:
                out.append(member)
    if unknown:
        raise UserError(
            f"unknown task(s): {', '.join(unknown)}; known tasks: {', '.join(sorted(_TASKS))}; groups: {', '.join(sorted(_GROUPS))}"
        )
    return out


def get_task(name: str) -> TaskSpec:
    return _TASKS[expand([name])[0]]()
