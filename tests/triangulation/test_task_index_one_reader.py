"""One reader of lm-eval's task index and one GROUP/TAG walker (issue 38, item 4).

The suite's plan and split merge, the preflight, the served endpoint's choice and `triangulate eval` all read
lm-eval's index through :mod:`triangulation.suite.task_index` (one ``TaskManager`` per process and kind) and walk
groups with the tree lm-eval's own factory builds. Before, the preflight and serve had walkers of their own that
skipped inline tasks and TAG members passed with overrides.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

from triangulation.suite import preflight, task_index
from triangulation.suite.cells import needs_completions
from triangulation.suite.spec import TaskEntry, load_suite

REPO = Path(__file__).resolve().parents[2]
#: the index reader, and the re-scorer, which loads tasks with a run's own metadata (a manager per run)
ALLOWED = {"triangulation/suite/task_index.py", "triangulation/runs/rescore_samples.py"}


def test_no_other_module_builds_a_task_manager():
    builders = []
    for path in sorted(REPO.glob("*/**/*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith(("tests/", "benchmarks/")) or rel in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "TaskManager":
                builders.append(rel)
    assert builders == []


def test_inline_subgroups_are_walked_by_the_one_tree():
    # mmlu_generative's categories are inline subgroups (dicts in its task list): the old walkers saw no leaf
    assert len(task_index.resolve("mmlu_generative").entries) == 57
    assert task_index.output_types("mmlu_generative") == {"generate_until"}
    assert not needs_completions(TaskEntry("g", "eval", ("mmlu_generative",)))  # generation only: the chat endpoint
    assert not task_index.resolve("no_such_task").known and task_index.output_types("no_such_task") is None


def test_preflight_checks_the_leaves_of_the_one_tree(monkeypatch):
    seen: list[str] = []
    monkeypatch.setattr(preflight, "missing_modules", lambda folder: [])
    monkeypatch.setattr(preflight, "dataset_path", lambda leaf: seen.append(leaf.name))
    suite = SimpleNamespace(tasks=[TaskEntry("g", "eval", ("mmlu_generative", "no_such_task"), {})])
    found = preflight.Findings()
    preflight.task_checks(suite, found)
    assert sorted(seen) == sorted(e.name for e in task_index.resolve("mmlu_generative").entries)
    assert found.problems == ["task entry g: lm-eval knows no task, group or tag 'no_such_task'"]


def test_an_entrys_task_names_are_looked_up_once_for_the_contamination_twins_and_the_preflight(tmp_path, monkeypatch):
    """A suite's eval entries hold their lookups (``TaskEntry.resolved``): the twins' group check at load and the preflight
    read them, and lm-eval's tree of each name is built once (before, each asked the index again)."""
    task_index.resolve.cache_clear()
    built: list[str] = []
    real = task_index.leaves
    monkeypatch.setattr(task_index, "leaves", lambda name, include=(): built.append(name) or real(name, include))
    monkeypatch.setattr(preflight, "missing_modules", lambda folder: [])
    monkeypatch.setattr(preflight, "dataset_path", lambda leaf: None)
    monkeypatch.setattr(preflight, "custom_dataset_problem", lambda leaf, loaded: None)
    path = tmp_path / "suite.yaml"
    path.write_text("models:\n  - name: a\ntasks:\n  - eval: globalgroup\n    num_fewshot: 0\ncontamination: [globalgroup_zh]\n")
    suite = load_suite(path)
    assert built == ["globalgroup"]  # the twin's group entry found by the group's leaves
    found = preflight.Findings()
    preflight.task_checks(suite, found)
    assert built == ["globalgroup", "globalgroup_zh_fresh"] and found.problems == []
    assert "globalgroup_zh" in {leaf.name for leaf in suite.tasks[0].resolved["globalgroup"].leaves}


def test_a_split_groups_trees_are_the_groups_its_entry_resolved(monkeypatch):
    """lm-eval's group trees a split merge aggregates come with the entry's one lookup (``Resolved.groups``): planning
    the split group asks the index nothing more."""
    from triangulation.suite.spec import Cell, ModelSpec
    from triangulation.suite.split import split_group

    entry = TaskEntry("mmlu_generative", "eval", ("mmlu_generative",), {"split": True})
    groups = entry.resolved["mmlu_generative"].groups
    assert "mmlu_generative::stem" in groups and set(groups) == set(task_index.groups("mmlu_generative"))
    monkeypatch.setattr(task_index, "tree", lambda *a: (_ for _ in ()).throw(AssertionError("the index asked again")))
    group = split_group(Cell(ModelSpec("m", None), entry))
    assert group is not None and len(group.subs) == 57 and group.trees == groups
