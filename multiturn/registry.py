"""Play tasks and groups by name, on :class:`plumbing.registry.Registry`.

Each test family registers its tasks at import with ``@register("name")`` (a ``TaskSpec`` class or
a factory) and its groups with ``register_group``. The families are found, not listed
(:func:`family_modules`): every module of the ``multiturn.games`` package, and every module an
installed package declares under the entry-point group ``triangulate.games``. A found family that
fails to import is an error.

Task options (``triangulate play --task_args KEY=VALUE ...``) are the factory's keyword-only
parameters: ``get_task(name, task_args)`` passes each task the options it declares, and
:func:`check_task_args` rejects an option that none of the selected tasks declares.

Adding a task (one module of ``multiturn/games/``, nothing else to edit): ``multiturn/games/README.md``, the one
recipe, with a complete example. A game of another package registers the same way; its ``pyproject.toml`` names
the module under the ``triangulate.games`` entry-point group.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
import pkgutil
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from models.forms import register_reply_form
from multiturn.game import CostHints, Request, TaskSpec
from plumbing.errors import UserError, unknown_names
from plumbing.registry import Registry

#: the package whose every module is a game family (found by name: the registry never imports a game statically)
GAMES_PACKAGE = "multiturn.games"
#: entry-point group through which an installed package adds game modules
ENTRY_POINT_GROUP = "triangulate.games"


def family_modules() -> list[str]:
    """Every module of :data:`GAMES_PACKAGE` and of its packages (sorted; a name part starting with ``_`` is
    skipped), then the modules of the ``triangulate.games`` entry points."""
    spec = importlib.util.find_spec(GAMES_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    found = pkgutil.walk_packages(folders, prefix=f"{GAMES_PACKAGE}.")
    builtin = sorted(m.name for m in found if not any(part.startswith("_") for part in m.name.split(".")))
    plugins = [ep.module for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)]
    return builtin + [m for m in plugins if m not in builtin]


TaskFactory = Callable[..., TaskSpec]


@dataclass(frozen=True)
class Group:
    """A named list of tasks; ``aggregate({member: {metric: value}}) -> {metric: value}`` replaces the
    plain mean of the members' metrics in the results JSON (e.g. a benchmark-wide score)."""

    members: tuple[str, ...]
    aggregate: Callable[[dict], dict] | None = None


TASKS: Registry[TaskFactory] = Registry("play task", family_modules)
GROUPS: Registry[Group] = Registry("play group", family_modules)


def register(name: str) -> Callable[[TaskFactory], TaskFactory]:
    """Decorator: register a ``TaskSpec`` subclass or factory under ``name``, the task's one name.

    The task states no name of its own: :func:`get_task` sets ``task.name`` from the registration. A class
    (or the class a ``functools.partial`` wraps) that is not a ``TaskSpec``, or that states another name, is
    refused here, at import; a factory's task is checked the same way when built."""

    def wrap(factory: TaskFactory) -> TaskFactory:
        cls = _factory_class(factory)
        if cls is not None:
            _check_task_class(name, cls)
        TASKS.add(name, factory)
        return factory

    return wrap


def _factory_class(factory: Any) -> type | None:
    """The class a factory builds when it says so (a class, or a ``functools.partial`` of one); None for a function."""
    target = getattr(factory, "func", factory)
    return target if inspect.isclass(target) else None


def _check_task_class(name: str, cls: type) -> None:
    """``TypeError`` unless ``cls`` is a ``TaskSpec`` subclass stating no name other than ``name``."""
    if not issubclass(cls, TaskSpec):
        raise TypeError(f"@register({name!r}): {cls.__qualname__} is not a multiturn.game.TaskSpec subclass")
    _check_stated_name(f"@register({name!r}): {cls.__qualname__}", name, cls.name)


def _check_stated_name(who: str, name: str, stated: str | None) -> None:
    """``TypeError`` when a task states a name other than its registration ``name``."""
    if stated and stated != name:
        raise TypeError(f"{who} states name = {stated!r}; a task's name is its registration: drop the name")


def _named_task(name: str, task: Any) -> TaskSpec:
    """The task a factory registered as ``name`` built, named ``name`` (``TypeError`` for another object or name)."""
    if not isinstance(task, TaskSpec):
        raise TypeError(f"play task {name!r}: its factory returned {type(task).__qualname__}, not a multiturn.game.TaskSpec")
    _check_stated_name(f"play task {name!r}: its factory's task", name, task.name)
    task.name = name
    return task


def register_group(name: str, members: list[str], aggregate: Callable[[dict], dict] | None = None) -> None:
    GROUPS.add(name, Group(tuple(members), aggregate))


def group_aggregator(name: str) -> Callable[[dict], dict] | None:
    """The group's own aggregation, if it registered one."""
    return GROUPS.get(name).aggregate if name in GROUPS else None


def task_names() -> list[str]:
    return TASKS.names()


def group_names() -> dict[str, list[str]]:
    """Each group's members: those it was registered with, then the tasks that declare it (``TaskSpec.groups``)."""
    joined: dict[str, list[str]] = {}
    for task in task_names():
        for group in task_facts(task).groups:
            joined.setdefault(group, []).append(task)
    return {name: list(dict.fromkeys([*group.members, *joined.get(name, [])])) for name, group in GROUPS.items().items()}


@dataclass(frozen=True)
class TaskFacts:
    """What a task declares on its class, read without building it (no data loaded): its name, the roles it sends
    requests for, the groups it joins, its cost hints (``None``: none declared) and its class."""

    name: str
    roles: tuple[str, ...]
    groups: tuple[str, ...]
    cost: CostHints | None
    task_class: type[TaskSpec] | None


def task_facts(name: str) -> TaskFacts:
    """The facts task ``name`` declares (its class's attributes; a factory that is a plain function declares the
    contract's defaults)."""
    cls = _factory_class(TASKS.get(name)) or TaskSpec
    return TaskFacts(name, tuple(cls.roles), tuple(cls.groups), cls.cost, None if cls is TaskSpec else cls)


def expand(names: list[str]) -> list[str]:
    """Expand groups, keep order, drop repeats; unknown names raise one UserError listing them."""
    groups = group_names()
    out: list[str] = []
    unknown: list[str] = []
    for name in names:
        for member in groups.get(name, [name]):
            if member not in TASKS:
                unknown.append(member)
            elif member not in out:
                out.append(member)
    if unknown:
        raise unknown_names("task(s)", unknown, [*task_names(), *groups], "list them all with `triangulate play --tasks list`")
    return out


def task_options(name: str) -> dict[str, Any]:
    """``{option: default}`` of a task: its factory's keyword-only parameters (``--task_args``)."""
    factory = TASKS.get(expand([name])[0])
    params = inspect.signature(factory).parameters.values()
    return {
        p.name: (None if p.default is inspect.Parameter.empty else p.default) for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def task_summary(name: str) -> str:
    """The first sentence of a task's own docstring (its class's, not inherited), else of its module's,
    for ``--tasks list``."""
    factory = TASKS.get(expand([name])[0])
    target = _factory_class(factory) or getattr(factory, "func", factory)
    doc = target.__dict__.get("__doc__") if inspect.isclass(target) else getattr(target, "__doc__", None)
    doc = doc or getattr(inspect.getmodule(target), "__doc__", None) or ""
    first = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    return re.sub(r":\w+:`", "`", first.split(". ")[0].rstrip(".:").replace("``", "`"))


def check_task_args(names: list[str], task_args: Mapping[str, Any] | None) -> None:
    """``UserError`` for an option that none of the tasks ``names`` (groups expanded) declares."""
    if not task_args:
        return
    tasks = expand(list(names))
    declared = {name: task_options(name) for name in tasks}
    unknown = [key for key in task_args if not any(key in opts for opts in declared.values())]
    if unknown:
        offered = "; ".join(f"{name}: {', '.join(opts)}" for name, opts in declared.items() if opts) or "none of them takes options"
        raise UserError(f"--task_args {', '.join(unknown)} is not an option of {', '.join(tasks)} ({offered})")


def get_task(name: str, task_args: Mapping[str, Any] | None = None) -> TaskSpec:
    """A fresh task named as registered; of ``task_args`` it receives the options it declares (recorded as
    ``task.task_args``)."""
    resolved = expand([name])[0]
    options = task_options(resolved)
    kwargs = {k: v for k, v in (task_args or {}).items() if k in options}
    task = _named_task(resolved, TASKS.get(resolved)(**kwargs))
    task.task_args = dict(kwargs)
    return task


@cache
def _play_task(name: str | None) -> TaskSpec | None:
    """The play task ``name`` with default options, or None when no play task has that name."""
    return get_task(name) if name and name in TASKS else None


def chance_reply(task: str | None, role: str | None, messages: list[dict[str, str]], rng: random.Random) -> str | None:
    """The chance player's reply form for a play task: its ``TaskSpec.chance_reply`` (None for other tasks)."""
    spec = _play_task(task)
    return None if spec is None else spec.chance_reply(Request(messages=messages, role=role or "player"), rng)


register_reply_form(chance_reply)
