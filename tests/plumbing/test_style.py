"""The house style is checked in CI: ``ruff check`` (lint) and ``ruff format --check`` (format), as configured
in pyproject.toml, over the whole repository."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_passes(command):
    exe = shutil.which("ruff")
    assert exe, "ruff is a test dependency (pip install -e '.[test]')"
    proc = subprocess.run([exe, *command], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
