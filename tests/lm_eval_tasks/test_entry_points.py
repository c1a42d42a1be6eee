"""The installed distribution's lm-eval plugin entry points resolve the way lm-eval's loader resolves them.

lm-eval 0.4.13 has no plugin loader; EleutherAI/lm-evaluation-harness PR #4015 adds one for tasks (group
``lm_eval.tasks``: the value is an import target, ``pkg`` or ``pkg:attr``; ``TaskManager`` scans the
directory of that package recursively, after the built-in tasks and before ``--include_path``) and the
merged PR #4013 one for models (group ``lm_eval.models``: ``name = "module:Class"``, registered as a lazy
placeholder that the class's own ``@register_model`` upgrades only when the value is exactly
``f"{cls.__module__}:{cls.__name__}"``). :func:`resolve_task_dir` and :func:`load_model_plugin` are those
two loaders, vendored, so the test says what an lm-eval with the PRs will do with our package.

The entry points are read from the *installed* metadata (``importlib.metadata``): after changing them in
``pyproject.toml``, reinstall (``pip install -e .``), as CI does.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import re
from pathlib import Path

import pytest

from lm_eval_tasks import TASKS_DIR

TASKS_GROUP = "lm_eval.tasks"  # PR #4015: lm_eval/tasks/manager.py TASKS_ENTRY_POINT_GROUP
MODELS_GROUP = "lm_eval.models"  # PR #4013: lm_eval/api/registry.py get_model -> load_plugins("lm_eval.models", ...)
OUR_MODELS = {"random": "models.chance:RandomLM", "hf-prefix-cache": "models.prefix_cache:PrefixCacheHFLM"}


def our_entry_points(group: str) -> dict[str, str]:
    """name -> value of the installed ``triangulate`` distribution's entry points in ``group``."""
    dist = md.distribution("triangulate")
    eps = {ep.name: ep.value for ep in dist.entry_points if ep.group == group}
    assert eps, f"the installed triangulate has no {group!r} entry points: reinstall it (`pip install -e .`) after editing pyproject.toml"
    return eps


def resolve_task_dir(value: str) -> Path | None:
    """PR #4015's ``_resolve_task_dir``: the package's directory, or the directory of a plain module's file."""
    module_name = value.split(":", 1)[0].strip()
    if not module_name:
        return None
    spec = importlib.util.find_spec(module_name)
    if spec is None:
        spec = getattr(importlib.import_module(module_name), "__spec__", None)
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if locations:
        return Path(locations[0]).resolve()
    if spec.origin and spec.origin != "built-in":
        return Path(spec.origin).resolve().parent
    return None


def shipped_names() -> tuple[set[str], set[str], set[str]]:
    """(tasks, groups, tags) declared by the YAMLs in our task folder (what a TaskManager must index)."""
    tasks, groups, tags = set(), set(), set()
    for path in TASKS_DIR.rglob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        if m := re.search(r"^group:\s*(\S+)\s*$", text, flags=re.M):
            groups.add(m.group(1))
        elif m := re.search(r"^task:\s*(\S+)\s*$", text, flags=re.M):
            tasks.add(m.group(1))
        if m := re.search(r"^tag:\s*\n((?:\s+-\s*\S+\s*\n)+)", text, flags=re.M):
            tags |= set(re.findall(r"-\s*(\S+)", m.group(1)))
    return tasks, groups, tags


def test_task_entry_point_resolves_to_our_task_folder():
    eps = our_entry_points(TASKS_GROUP)
    assert eps == {"triangulate": "lm_eval_tasks"}
    # the loader enumerates the group over every installed distribution: ours is among them
    assert ("triangulate", "lm_eval_tasks") in {(ep.name, ep.value) for ep in md.entry_points(group=TASKS_GROUP)}
    assert resolve_task_dir(eps["triangulate"]) == TASKS_DIR


def test_task_manager_on_the_resolved_folder_knows_every_shipped_task_and_group():
    from lm_eval.tasks import TaskManager

    folders = [resolve_task_dir(v) for v in our_entry_points(TASKS_GROUP).values()]
    assert all(folders)
    tm = TaskManager(include_path=[str(f) for f in folders], include_defaults=False)
    tasks, groups, tags = shipped_names()
    assert len(tasks) >= 150 and {"globalgroup", "lm_pragmatics", "natural_plan"} <= groups, "the YAML scan found too little"
    assert "globalgroup_zh" in tm.all_subtasks and "connections" in tm.all_subtasks
    assert tasks - set(tm.all_subtasks) == set(), "shipped tasks lm-eval did not index (unparseable YAML?)"
    assert groups - set(tm.all_groups) == set()
    assert tags - set(tm.all_tags) == set()
    assert Path(tm.task_index["globalgroup_zh"].yaml_path).resolve().is_relative_to(TASKS_DIR)


@pytest.mark.parametrize("name", sorted(OUR_MODELS))
def test_model_entry_points_load_and_upgrade_like_pr_4013(name):
    from lm_eval.api.model import LM
    from lm_eval.api.registry import Registry, model_registry

    eps = our_entry_points(MODELS_GROUP)
    assert eps == OUR_MODELS
    ep = next(e for e in md.entry_points(group=MODELS_GROUP) if e.name == name and e.value == OUR_MODELS[name])
    fresh: Registry = Registry("model")  # PR #4013's load_plugins: registry.register(ep.name, target=ep)
    fresh.register(ep.name, target=ep)
    cls = fresh.get(name)  # materialises the EntryPoint: imports the module, whose @register_model runs
    assert isinstance(cls, type) and issubclass(cls, LM)
    # PR #4013 upgrades the placeholder to the decorated class only on this exact match (else ValueError)
    assert f"{cls.__module__}:{cls.__name__}" == ep.value
    assert model_registry.get(name) is cls  # the class's own @register_model(name) ran: same alias
