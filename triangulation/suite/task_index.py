"""lm-eval's task index, read once per process, and its group trees built by lm-eval's own factory: the one
reader of the index and the one GROUP/TAG walker, for the suite's plan, the split merge, the preflight, the
served endpoint's choice and `triangulate eval`.

A group's tree (its subgroups, TAG members expanded, inline subgroups named ``parent::name``) is built by
lm-eval 0.4.13's ``TaskFactory`` itself, with one change: a leaf task becomes a :class:`LeafRef` (its name
and the overrides its group passes it) instead of a ``ConfigurableTask``, so no YAML of a leaf is read and
no dataset is loaded. The split cells of a group are the tree's leaves, and merging their results calls
lm-eval's own ``aggregate_groups`` over the same tree (:mod:`triangulation.suite.split`), so a merged group
equals the unsplit run's by construction.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from lm_eval.api.group import Group
from lm_eval.api.task import Task
from lm_eval.tasks import TaskManager
from lm_eval.tasks import _factory as lm_factory

from lm_eval_tasks import TASKS_DIR
from lm_eval_tasks.index_cache import install_index_cache

# keys a group may pass its leaves that change nothing a leaf computes or reports (its name, metadata, tags)
_NEUTRAL_OVERRIDES = frozenset({"task", "metadata", "tag"})


@functools.cache
def task_manager(full: bool = True, include: tuple[str, ...] = ()) -> Any:
    """lm-eval's task index with our task folder (as `triangulate eval` builds it), once per process;
    ``full``: lm-eval's own tasks too; ``include``: a suite's own task folders or files (its ``include_path:``),
    after ours, as ``triangulate eval --include_path`` adds them."""
    install_index_cache()
    return TaskManager(include_path=[str(TASKS_DIR), *include], include_defaults=full)


def leaf_tasks(task_dict: Any) -> list[Any]:
    out: list[Any] = []
    for value in task_dict.values():
        if isinstance(value, dict):
            out += leaf_tasks(value)
        elif value is not None and hasattr(value, "build_all_requests"):
            out.append(value)
    return out


class LeafRef(Task):
    """A leaf task of a group tree, by name: what lm-eval's factory would build, without building it.
    ``entry``: the index entry it is built from; ``inline``: instead, the config of a task defined inside its
    group's list (no index entry of its own)."""

    def __init__(self, name: str, overrides: dict[str, Any], entry: Any = None, inline: dict[str, Any] | None = None) -> None:
        # no Task.__init__: it loads the data
        self.name = name
        self.overrides = {k: v for k, v in overrides.items() if k not in _NEUTRAL_OVERRIDES}
        self.entry = entry
        self.inline = inline

    @property
    def task_name(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"LeafRef({self.name!r})"


LeafRef.__abstractmethods__ = frozenset()  # a stand-in, never evaluated: none of Task's methods is called on it


class UnbuildableTree(Exception):
    """A group whose leaves, run one by one, would not compute what the group computes."""


class _TreeFactory(lm_factory.TaskFactory):
    """lm-eval's factory, building :class:`LeafRef` leaves."""

    def _build_task(self, entry: Any, overrides: dict[str, Any] | None) -> Task:
        overrides = overrides or {}
        return LeafRef(str(overrides.get("task") or entry.name), overrides, entry=entry)


def _inline_task(config: dict[str, Any]) -> Task:
    return LeafRef(str(config.get("task")), {}, inline=dict(config))


@contextlib.contextmanager
def _leaves_by_reference() -> Iterator[None]:
    """While a tree is built: an inline task (one defined inside a group's list) becomes a :class:`LeafRef`
    holding its config instead of loading its data (lm-eval's factory builds those with ``ConfigurableTask``
    directly)."""
    original = lm_factory.ConfigurableTask
    lm_factory.ConfigurableTask = _inline_task  # type: ignore[assignment, misc]
    try:
        yield
    finally:
        lm_factory.ConfigurableTask = original  # type: ignore[misc]


@functools.cache
def _tree_cached(name: str, include: tuple[str, ...] = ()) -> tuple[Any, str | None]:
    index = _index_with(name, include)
    entry = index.get(name)
    if entry is None:
        return None, None
    try:
        with _leaves_by_reference():
            built = _TreeFactory().build(entry, overrides=None, registry=dict(index))
    except (ValueError, TypeError, KeyError, OSError) as exc:  # lm-eval cannot build the tree either
        return None, f"lm-eval cannot build its tree ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
    return built, None


def _index_with(name: str, include: tuple[str, ...] = ()) -> dict[str, Any]:
    """Our tasks' (and ``include``'s) index when it knows ``name`` (fast), else lm-eval's whole index (its own
    tasks too). ``include`` everywhere below: a suite's ``include_path:`` (:func:`task_manager`)."""
    ours = task_manager(False, include).task_index
    return ours if name in ours else task_manager(True, include).task_index


def entry(name: str, include: tuple[str, ...] = ()) -> Any:
    """lm-eval's index entry of a task, group or tag (kind, yaml_path, cfg, tags); None when no index knows it."""
    return _index_with(name, include).get(name)


def tree(name: str, include: tuple[str, ...] = ()) -> Group | list[Task] | Task | None:
    """The tree lm-eval builds for ``name`` (a Group, a TAG's list of leaves, or one leaf); None when
    ``name`` is not in the index. Raises :class:`UnbuildableTree` when lm-eval cannot build it."""
    built, refusal = _tree_cached(name, tuple(include))
    if refusal:
        raise UnbuildableTree(refusal)
    return built


def leaves(name: str, include: tuple[str, ...] = ()) -> list[LeafRef]:
    """The leaf tasks of a task, group or tag, in lm-eval's order (a name not in the index is its own leaf)."""
    if entry(name, include) is None:
        return [LeafRef(name, {})]
    built = tree(name, include)
    if isinstance(built, Group):
        return list(built.get_all_tasks())
    return list(built) if isinstance(built, list) else [built]


def groups(name: str, include: tuple[str, ...] = ()) -> dict[str, Group]:
    """Every group of ``name``'s tree, flat by name, as lm-eval's ``TaskManager.load`` collects them."""
    built = tree(name, include)
    if not isinstance(built, Group):
        return {}
    return {built.name: built} | {g.name: g for g in built.get_all_groups()}


@dataclass(frozen=True)
class Resolved:
    """One task name looked up once in lm-eval's task index (:func:`resolve`): whether the index knows it, its leaf
    tasks in lm-eval's order (a name the index does not know is its own leaf) and the groups of its tree (:func:`groups`:
    what a split group's merge aggregates), or why lm-eval cannot build its tree (then no leaves and no groups). A
    suite's eval entry holds one per task name (``TaskEntry.resolved``)."""

    name: str
    known: bool
    leaves: tuple[LeafRef, ...] = ()
    refusal: str | None = None
    groups: dict[str, Group] = field(default_factory=dict, compare=False)

    @property
    def entries(self) -> list[Any]:
        """The index entries of the named leaf tasks (inline tasks have none)."""
        return [leaf.entry for leaf in self.leaves if leaf.entry is not None]

    @property
    def output_types(self) -> set[str] | None:
        """The ``output_type``s of its leaves (``unknown`` where lm-eval's tree cannot tell); None when the index
        does not know the name."""
        if not self.known:
            return None
        if self.refusal is not None:
            return {"unknown"}
        return {str(_leaf_config(leaf).get("output_type") or "unknown") for leaf in self.leaves}

    @property
    def split_refusal(self) -> str | None:
        """Why ``split: true`` cannot run it as one cell per leaf and merge it back faithfully (None: it can). A leaf
        run alone must compute what it computes inside the group: refused when the group passes a leaf options of
        its own (``num_fewshot``, a prompt, ...) or defines a task inline."""
        if self.refusal is not None:
            return self.refusal
        for leaf in self.leaves:
            if leaf.inline is not None:
                return f"its member {leaf.task_name!r} is a task defined inline in the group, not a task of its own"
            if leaf.overrides:
                return f"the group passes its member {leaf.task_name!r} options of its own ({', '.join(sorted(leaf.overrides))})"
        return None


@functools.cache
def resolve(name: str, include: tuple[str, ...] = ()) -> Resolved:
    """``name`` (a task, group or tag) looked up in the index and its tree built, once per process (:class:`Resolved`)."""
    if entry(name, include) is None:
        return Resolved(name, False, (LeafRef(name, {}),))
    try:
        return Resolved(name, True, tuple(leaves(name, include)), groups=groups(name, include))
    except UnbuildableTree as exc:
        return Resolved(name, True, refusal=str(exc))


def output_types(name: str, include: tuple[str, ...] = ()) -> set[str] | None:
    """The ``output_type``s of the leaves of a task, group or tag (:attr:`Resolved.output_types`)."""
    return resolve(name, include).output_types


def _leaf_config(leaf: LeafRef) -> dict[str, Any]:
    if leaf.inline is not None:
        return leaf.inline | leaf.overrides
    return ((leaf.entry.cfg or {}) if leaf.entry is not None else {}) | leaf.overrides


def eval_leaves(tasks: Sequence[str], include: tuple[str, ...] = ()) -> list[str]:
    """The leaf tasks of lm-eval tasks, groups and tags, from lm-eval's task index (no data is read), each
    once (a leaf in two subgroups is evaluated once, as lm-eval does)."""
    return list(dict.fromkeys(leaf.task_name for name in tasks for leaf in leaves(name, include)))


def split_refusal(name: str, include: tuple[str, ...] = ()) -> str | None:
    """Why ``split: true`` cannot run lm-eval group/tag ``name`` as one cell per leaf (:attr:`Resolved.split_refusal`)."""
    return resolve(name, include).split_refusal
