"""Imports live at the top of a module; an import inside a function is allowed only where it keeps a heavy or optional
dependency off the import path (issue 28, docs/ARCHITECTURE.md "Rules that keep it so").

A function-level ``import`` / ``from ... import`` is allowed only for

(a) a module of a heavy or optional third-party package, named in ``HEAVY`` (heavy: importing it takes over
    ~100 ms, measured with ``python -X importtime`` / a timed ``import``; optional: not among pyproject's required
    dependencies), or
(b) one of our own modules whose import pulls in such a package at module import time: the test computes the
    target's top-level import closure (every module-level import of the target, of its parent packages and,
    transitively, of every own module they name; ``if TYPE_CHECKING:`` blocks do not run and do not count) and
    accepts the import only if that closure reaches a package of ``HEAVY``, so the exception cannot be claimed
    for a light module, or
(c) ``if TYPE_CHECKING:`` blocks, which are not function-level anyway.

Stdlib and light third-party imports (json, re, csv, hashlib, yaml, jieba, ...) inside functions are never allowed:
they cost nothing at the top and hide a module's dependencies from the reader and from grimp's layer checks.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("plumbing", "custom_metrics", "datasets_build", "models", "lm_eval_tasks", "multiturn", "triangulation")

#: heavy or optional third-party packages, by top-level name. The figure is the best of 5 timed
#: ``import X`` in a fresh interpreter on the shared 2-core development machine (issue 28's notes);
#: "optional" = not in pyproject's ``dependencies`` (an extra, or not declared at all).
HEAVY: dict[str, str] = {
    "torch": "5.0 s",
    "vllm": "optional (not installed here)",
    "inspect_ai": "4.8 s, optional (extra: inspect)",
    "sklearn": "3.0-4.6 s (sklearn.cluster / .metrics / .decomposition)",
    "transformers": "2.7 s",
    "lm_eval": "0.09 s for the bare package; 0.5-4 s for the submodules we import (api.model, tasks, loggers, utils)",
    "datasets": "2.6 s",
    "accelerate": "4.0 s",
    "nltk": "5.5 s (nltk.corpus, nltk.stem.snowball)",
    "wandb": "1.7 s, optional (extra: test)",
    "pandas": "1.2 s",
    "huggingface_hub": "1.1 s for HfApi, 0.25 s for huggingface_hub.utils (the bare package is lazy)",
    "openpyxl": "0.65 s",
    "matplotlib": "0.62 s",
    "wordfreq": "0.38 s",
    "lemminflect": "0.06-0.38 s (pulls numpy)",
    "gguf": "0.35 s",
    "numpy": "0.26 s",
    "fasttext": "0.24 s",
    "scipy": "0.24 s",
    "submitit": "0.22 s",
    "pyarrow": "0.21 s",
    "tqdm": "0.22 s (tqdm.auto)",
    "clemcore": "optional (extra: bench)",
    "langdetect": "optional (extra: battery)",
    "immutabledict": "optional (extra: battery)",
}

#: (file, imported module) pairs still imported inside a function though neither rule allows it, each with its reason.
ALLOWED_FOR_NOW: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class FunctionImport:
    module: str  #: the importing module
    line: int
    target: str  #: the module imported (``from a import b``: ``a.b`` where that is a module, else ``a``)


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def own_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((REPO / package).rglob("*.py"))}


def absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from`` import reads from (relative imports resolved against ``module``)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The modules an import statement loads: ``from a import b`` loads ``a`` and, where ``a.b`` is one of ours, ``a.b``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    source = absolute(node, module, is_package)
    return [source] + [f"{source}.{alias.name}" for alias in node.names if f"{source}.{alias.name}" in known]


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements that run when the module is imported: outside functions and ``if TYPE_CHECKING:``."""
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif isinstance(node, ast.If) and is_type_checking(node):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))
    return found


def function_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: dict[int, ast.Import | ast.ImportFrom] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.update({id(n): n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))})
    return sorted(found.values(), key=lambda n: n.lineno)


class Project:
    """Our modules, their parsed sources and the top-level import closure of each."""

    def __init__(self, sources: dict[str, str], packages: set[str]):
        self.sources, self.packages = sources, packages
        self.trees = {name: ast.parse(text) for name, text in sources.items()}
        self._closure: dict[str, frozenset[str]] = {}

    @classmethod
    def from_repo(cls) -> Project:
        paths = own_modules()
        packages = {name for name, path in paths.items() if path.name == "__init__.py"}
        return cls({name: path.read_text(encoding="utf-8") for name, path in paths.items()}, packages)

    def loads(self, name: str) -> list[str]:
        """``name`` and its parent packages (importing ``a.b.c`` runs ``a`` and ``a.b`` first)."""
        parts = name.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]

    def direct(self, module: str) -> set[str]:
        known = set(self.trees)
        names = set()
        for node in top_level_imports(self.trees[module]):
            for target in imported_names(node, module, module in self.packages, known):
                names.update(self.loads(target))
        return names

    def closure(self, module: str) -> frozenset[str]:
        """Every module (ours and third-party, dotted) that importing ``module`` imports at module level."""
        if module not in self._closure:
            seen, todo = set(), self.loads(module)
            while todo:
                name = todo.pop()
                if name in seen:
                    continue
                seen.add(name)
                if name in self.trees:
                    todo.extend(self.direct(name) - seen)
            self._closure[module] = frozenset(seen)
        return self._closure[module]

    def heavy_reached(self, module: str) -> set[str]:
        return {name.split(".")[0] for name in self.closure(module)} & set(HEAVY)

    def allowed(self, target: str) -> bool:
        if target.split(".")[0] in HEAVY:
            return True  # rule (a)
        return target.split(".")[0] in PACKAGES and bool(self.heavy_reached(target))  # rule (b)

    def offenders(self) -> list[FunctionImport]:
        """Function-level imports that neither rule allows (an import is allowed if anything it loads is)."""
        known, bad = set(self.trees), []
        for module, tree in sorted(self.trees.items()):
            for node in function_imports(tree):
                names = imported_names(node, module, module in self.packages, known)
                if not any(self.allowed(name) for name in names):
                    bad.append(FunctionImport(module, node.lineno, names[-1]))
        return bad


def test_function_level_imports_are_heavy_or_optional_only():
    paths = own_modules()
    bad = []
    for found in Project.from_repo().offenders():
        path = str(paths[found.module].relative_to(REPO))
        if (path, found.target) not in ALLOWED_FOR_NOW:
            bad.append(f"{path}:{found.line} imports {found.target} inside a function: neither heavy nor optional, move it to the top")
    assert bad == [], "\n".join(bad)


def toy(**sources: str) -> Project:
    """A project of the given modules (``a__b`` -> ``a.b``); ``a`` and any ``x`` with an ``x.y`` are packages."""
    named = {name.replace("__", "."): text for name, text in sources.items()}
    packages = {n.rsplit(".", 1)[0] for n in named if "." in n}
    return Project({**{p: "" for p in packages if p not in named}, **named}, packages)


def test_the_check_flags_stdlib_and_light_imports_and_allows_heavy_ones(monkeypatch):
    monkeypatch.setattr("tests.plumbing.test_function_imports.PACKAGES", ("a",))
    project = toy(a__m="def f():\n    import json\n    from torch import nn\n    import yaml\n")
    assert [(o.line, o.target) for o in project.offenders()] == [(2, "json"), (4, "yaml")]


def test_the_own_module_exception_is_verified_on_the_top_level_closure(monkeypatch):
    monkeypatch.setattr("tests.plumbing.test_function_imports.PACKAGES", ("a",))
    project = toy(
        a__light="import json\n\ndef f():\n    import torch\n",  # torch only inside a function: a.light stays light
        a__hints="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch\n",  # type hints do not run
        a__heavy="from a import middle\n",  # heavy through a.middle's top-level import
        a__middle="import sklearn.metrics\n",
        a__user="def f():\n    from a import light\n\ndef g():\n    from a.hints import x\n\ndef h():\n    from a import heavy\n",
    )
    assert [(o.module, o.line, o.target) for o in project.offenders()] == [("a.user", 2, "a.light"), ("a.user", 5, "a.hints")]
    assert project.heavy_reached("a.heavy") == {"sklearn"}
