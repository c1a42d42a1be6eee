"""House rule: no product function over 80 lines (every .py of the six packages, nested functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("plumbing", "custom_metrics", "datasets_build", "models", "lm_eval_tasks", "multiturn", "triangulation")
MAX_LINES = 80


def long_functions(root: Path = REPO, limit: int = MAX_LINES) -> list[str]:
    """``path:line name (N lines)`` for every function or method of the packages longer than ``limit``
    lines (from ``def``, decorators excluded, to its last line)."""
    out = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > limit:
                        out.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)")
    return out


def test_no_product_function_is_over_80_lines():
    assert long_functions() == []


def test_the_check_finds_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "multiturn").mkdir()
    (tmp_path / "multiturn" / "m.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}\n", encoding="utf-8")
    assert long_functions(tmp_path) == [f"{Path('multiturn', 'm.py')}:5 long ({MAX_LINES + 1} lines)"]
