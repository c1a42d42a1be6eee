"""lm-eval's own command (issue 32): `triangulate tasks-dir` prints the task folder, and the README's
`lm_eval` lines are true on lm-eval 0.4.13 (no plugin loader: our tasks need --include_path)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lm_eval_tasks import TASKS_DIR
from triangulation.cli.main import main

REPO = Path(__file__).resolve().parents[2]


def test_tasks_dir_prints_the_task_folder(capsys):
    assert main(["tasks-dir"]) == 0
    printed = Path(capsys.readouterr().out.strip())
    assert printed == TASKS_DIR and (printed / "globalgroup").is_dir()


def test_readme_claims_plain_lm_eval_only_for_a_plugin_loading_lm_eval():
    """Outside the plugin section, every `lm_eval ... --tasks` of ours names the include path."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    plugin = text.index("### lm-eval plugin")
    outside = text[:plugin] + text[text.index("\n## ", plugin) :]
    for line in re.findall(r"`?lm_eval [^`\n]*--tasks[^`\n]*", outside):
        assert '--include_path "$(triangulate tasks-dir)"' in line, line
    assert 'lm_eval --include_path "$(triangulate tasks-dir)" --tasks globalgroup_zh' in text[:plugin]


@pytest.mark.slow  # lm-eval indexes its ~14,000 task files (~30 s idle) in each run
def test_the_readme_lm_eval_line_runs_and_plain_random_is_unknown(readme_lm_eval_run, tmp_path):
    """The README's line on SmolLM2 (the session's one run, tests/support/shared_runs.py; test_tasks_e2e checks its
    scores), then plain lm-eval refuses our `random` model (no plugin loader on 0.4.13)."""
    ran, out = readme_lm_eval_run
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "globalgroup_zh" in ran.stdout and list(out.rglob("results_*.json"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    lm_eval = shutil.which("lm_eval") or str(Path(sys.executable).with_name("lm_eval"))
    plain = subprocess.run(
        [lm_eval, "--model", "random", "--tasks", "hellaswag"], env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path
    )
    assert plain.returncode != 0 and "no model for this name found" in plain.stderr + plain.stdout
