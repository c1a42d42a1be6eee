"""String literals of upstream code, read with :mod:`ast` (upstream code is parsed, never executed).

Some prompts that define a published benchmark live only in the authors' code: the n-back system
messages and grid strings in Gong et al.'s notebooks, SPLAT's judge puzzle template and "ready"
message in ``puzzle_arena.py``. The builders derive them from those files with these helpers.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

from plumbing.errors import UserError


def parse_python(source: str, where: str) -> ast.Module:
    """Parse Python source; IPython magics (``%``/``!`` lines) are blanked first."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError as exc:
        raise UserError(f"{where}: cannot parse as Python ({exc.msg}, line {exc.lineno})") from exc


def notebook_cells(path: Path) -> list[ast.Module]:
    """The parsed code cells of a Jupyter notebook, in order (cells that are not Python are skipped)."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError) as exc:
        raise UserError(f"{path}: not a readable notebook ({exc})") from exc
    parsed = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        try:
            parsed.append(parse_python(source, f"{path} cell {index}"))
        except UserError:
            continue
    return parsed


def string_assignments(tree: ast.AST) -> dict[str, str]:
    """``NAME = "literal"`` assignments (the last one wins), and ``NAME = "literal" % (...)`` templates."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod):
                value = value.left
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found[node.targets[0].id] = value.value
    return found


def message_literals(tree: ast.AST, role: str) -> Iterator[str]:
    """The ``content`` of every dict literal ``{"role": role, "content": "literal"}``, in source order."""
    nodes = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Dict)), key=lambda n: (n.lineno, n.col_offset))
    for node in nodes:
        items = {k.value: v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        role_node, content = items.get("role"), items.get("content")
        if (
            isinstance(role_node, ast.Constant)
            and role_node.value == role
            and isinstance(content, ast.Constant)
            and isinstance(content.value, str)
        ):
            yield content.value
