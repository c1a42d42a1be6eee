"""No import cycle hides behind a package init (issue 28): importing ``a.b.c`` runs ``a/b/__init__.py`` first, an edge
grimp's graph (``test_layers.py``, function-level imports included) does not draw. A package init that imports a module
of its own package inside a function closed such a cycle (``triangulation.report``'s ``make_report`` shim:
report -> make -> build -> sections -> report). So a package init imports its own package's modules at module level
only, where the usual cycle check sees them."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("plumbing", "custom_metrics", "datasets_build", "models", "lm_eval_tasks", "multiturn", "triangulation")


def lazy_own_imports(source: str, package: str) -> list[str]:
    """The modules of ``package`` that its init (``source``) imports inside a function."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom):
                names = [package if inner.level else inner.module or ""]
            elif isinstance(inner, ast.Import):
                names = [alias.name for alias in inner.names]
            else:
                continue
            found += [n for n in names if n == package or n.startswith(package + ".")]
    return found


def test_no_package_init_imports_its_own_modules_lazily():
    offenders = {}
    for name in PACKAGES:
        for init in sorted((REPO / name).rglob("__init__.py")):
            package = ".".join(init.parent.relative_to(REPO).parts)
            if lazy := lazy_own_imports(init.read_text(encoding="utf-8"), package):
                offenders[str(init.relative_to(REPO))] = lazy
    assert offenders == {}


def test_the_check_sees_the_old_report_shim():
    shim = "def make_report(*a, **k):\n    from triangulation.report.make import make_report\n\n    return make_report(*a, **k)\n"
    assert lazy_own_imports(shim, "triangulation.report") == ["triangulation.report.make"]
    assert lazy_own_imports("from triangulation.report import make\n", "triangulation.report") == []  # module level: seen by grimp
