"""The layer map holds: import-linter's contracts pass and no file of the project is part of an import cycle.

The graph is built with ``grimp`` (import-linter's own engine); every import statement counts, also
the ones inside functions, so a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("plumbing", "custom_metrics", "datasets_build", "models", "lm_eval_tasks", "multiturn", "triangulation")
LAYERS = ("plumbing", "custom_metrics", "datasets_build", "models", ("lm_eval_tasks", "multiturn"), "triangulation")


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's algorithm over direct imports; components of more than one module (or a self-import)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(root: str) -> None:  # iterative, so deep graphs cannot overflow the recursion limit
        nonlocal counter
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.find_modules_directly_imported_by(node):
                    found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True)  # function-level imports count; type hints do not run


def test_no_import_cycle_between_files(graph):
    assert strongly_connected(graph) == []


def test_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for name in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(name)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.z")
    graph.add_import(importer="a.z", imported="a.x")
    assert strongly_connected(graph) == [["a.x", "a.y", "a.z"]]


def test_a_cycle_through_a_function_level_import_is_found(tmp_path, monkeypatch):
    """grimp counts imports inside functions (and skips ``if TYPE_CHECKING:``), so a lazy import cannot hide a cycle."""
    package = tmp_path / "lazycycle"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from lazycycle import b\n")
    (package / "b.py").write_text("def f():\n    from lazycycle import a\n\n    return a\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from lazycycle import d\n")
    (package / "d.py").write_text("from lazycycle import c\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = grimp.build_graph("lazycycle", exclude_type_checking_imports=True, cache_dir=None)
    assert strongly_connected(found) == [["lazycycle.a", "lazycycle.b"]]


def test_layers_import_only_downwards(graph):
    """The same rule as the import-linter contract, checked on the graph (also when lint-imports is absent)."""
    rank = {}
    for level, layer in enumerate(LAYERS):
        for package in layer if isinstance(layer, tuple) else (layer,):
            rank[package] = level
    bad = []
    for module in graph.modules:
        top = module.split(".")[0]
        for imported in graph.find_modules_directly_imported_by(module):
            other = imported.split(".")[0]
            if other != top and (rank[other] > rank[top] or rank[other] == rank[top]):
                bad.append(f"{module} -> {imported}")
    assert sorted(bad) == []


def test_plumbing_imports_nothing_of_the_project(graph):
    for module in graph.find_children("plumbing") | {"plumbing"}:
        outside = {m for m in graph.find_modules_directly_imported_by(module) if not m.startswith("plumbing")}
        assert outside == set(), module


def test_lint_imports_contracts_pass():
    exe = shutil.which("lint-imports")
    assert exe, "import-linter is a test dependency (pip install -e '.[test]')"
    proc = subprocess.run([exe], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "0 broken" in proc.stdout


def test_runner_and_tasks_never_read_upstream_copies():
    """Only the dataset builders read ``$TRIANGULATE_UPSTREAM``: no runner or task module names it."""
    offenders = []
    for package in ("multiturn", "lm_eval_tasks", "custom_metrics"):
        for path in (REPO / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if "upstream_dir" in text or "upstream_root" in text or "TRIANGULATE_UPSTREAM" in text:
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
