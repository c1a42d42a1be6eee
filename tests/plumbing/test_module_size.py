"""House rule (issue 28 item 7): no module of the packages over 400 lines unless docs/ARCHITECTURE.md's "Large modules"
list names it (a module holding one concern); a module holding more than one is split instead."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("plumbing", "custom_metrics", "datasets_build", "models", "lm_eval_tasks", "multiturn", "triangulation")
MAX_LINES = 400
SECTION = "## Large modules"


def long_modules(root: Path = REPO, limit: int = MAX_LINES) -> dict[str, int]:
    """``{path: lines}`` for every .py of the packages longer than ``limit`` lines."""
    out = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                out[path.relative_to(root).as_posix()] = lines
    return out


def allowed_modules(architecture: str) -> set[str]:
    """The modules the "Large modules" section of docs/ARCHITECTURE.md names (``- `path`: why``)."""
    body = architecture.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^- `([^`]+\.py)`", body, re.MULTILINE))


def test_no_module_over_400_lines_unless_listed_as_one_concern():
    allowed = allowed_modules((REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    unlisted = {path: n for path, n in long_modules().items() if path not in allowed}
    assert unlisted == {}, "split these by concern, or name each in docs/ARCHITECTURE.md's 'Large modules' with why it holds one"
    assert sorted(p for p in allowed if not (REPO / p).is_file()) == []  # the list names modules that exist


def test_the_check_finds_a_long_module_and_reads_the_list(tmp_path):
    (tmp_path / "multiturn").mkdir()
    (tmp_path / "multiturn" / "short.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    (tmp_path / "multiturn" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    assert long_modules(tmp_path) == {"multiturn/long.py": MAX_LINES + 1}
    text = f"# x\n{SECTION}\n\nintro `a.py`\n\n- `multiturn/long.py`: one concern.\n\n## Next\n\n- `other.py`: not this list\n"
    assert allowed_modules(text) == {"multiturn/long.py"}
