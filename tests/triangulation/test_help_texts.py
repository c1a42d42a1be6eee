"""What a new user types first (issue 43, items 9 and 10): `--version`, `eval --help` about triangulate's own
flags, help without reST markup, `report --help` for every flag, `play --tasks list` with descriptions, and
`model-args` printing the embedded model's --model_args for plain `lm_eval`."""

from __future__ import annotations

import subprocess
import sys

import pytest

from models.default_model import GGUF_FILE, smollm2_dir


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "triangulation.cli.main", *args], capture_output=True, text=True, timeout=300)


def test_version_names_the_package_and_lm_eval():
    out = _cli("--version")
    assert out.returncode == 0 and out.stdout.startswith("triangulate ") and "lm-eval 0.4" in out.stdout


def test_eval_help_says_what_triangulate_adds_then_lm_evals_run_help():
    out = _cli("eval", "--help")
    assert out.returncode == 0
    text = out.stdout
    for flag in ("--rerun", "--model random", "no --model", "model-args"):
        assert flag in text, flag
    assert "--tasks" in text and "--model_args" in text  # lm-eval's `run` arguments, not its top-level help
    assert text.index("--rerun") < text.index("--model_args <arg=value>")


@pytest.mark.parametrize("command", ["", "report", "suite", "score", "view", "export", "play", "data", "tasks-dir", "probe", "model-args"])
def test_help_texts_carry_no_rest_markup(command):
    """Every help prints (a ``%`` in a help text is a format character to argparse: ``Min-K% Prob`` crashed it)."""
    out = _cli(*[c for c in (command,) if c], "--help")
    assert out.returncode == 0 and "``" not in out.stdout


def test_report_help_explains_title_and_out():
    text = _cli("report", "--help").stdout
    after = {flag: text.split(f"  {flag} ", 1)[1].split("\n  -", 1)[0] for flag in ("--title TITLE", "--out DIR")}
    assert all(len(v.strip()) > 10 for v in after.values()), after


def test_play_tasks_list_describes_each_task():
    text = _cli("play", "--tasks", "list").stdout
    lines = text.splitlines()
    i = lines.index("  wcst")
    assert lines[i + 1].startswith("      ") and ("Wisconsin" in lines[i + 1] or "WCST" in lines[i + 1])
    assert "A named test" not in text and ":mod:" not in text


def test_model_args_prints_the_embedded_models_args_for_lm_eval():
    out = _cli("model-args")
    assert out.returncode == 0
    assert out.stdout.strip() == f"pretrained={smollm2_dir()},gguf_file={GGUF_FILE},device=cpu"
