"""Robustness (issue 7): the `triangulate` command line under user mistakes and with credentials.

Every user error exits non-zero with one line that says what to do, never a traceback (run as real
subprocesses, started together because each pays the CLI's import time). A fake API key in
``--model_args`` and in the environment never reaches results, transcripts or logs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from multiturn.engine.record import read_episodes
from plumbing import run_folder

REPO = Path(__file__).resolve().parents[2]
TRIANGULATE = [sys.executable, "-m", "triangulation"]
LEAKY = [sys.executable, str(REPO / "tests" / "support" / "robust_helpers.py")]

FAKE_KEY = "sk-test-FAKE0123456789abcdef"
FAKE_ENV_KEY = "sk-test-FAKEENV0123456789"
FAKE_URL_PASSWORD = "pw-FAKE-5678"
FAKES = (FAKE_KEY, FAKE_ENV_KEY, FAKE_URL_PASSWORD, "FAKE")


def _env(upstream: Path | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TRIANGULATE_UPSTREAM", "TRIANGULATE_DATA")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["HF_HUB_OFFLINE"] = "1"
    if upstream is not None:
        env["TRIANGULATE_UPSTREAM"] = str(upstream)
        if (Path(upstream) / "nback").is_dir():  # the real upstream copy: play reads the datasets built from it
            from tests.support.built_data import built_data_root

            env["TRIANGULATE_DATA"] = str(built_data_root(str(upstream)))
    env.update(extra)
    return env


#: progress bars (tqdm) and lm-eval's own INFO/WARNING log lines are not error output
_NOISE = re.compile(r"(\d+%\|)|(^\d{4}-\d{2}-\d{2}[: ]\d{2}:\d{2}:\d{2} (INFO|WARNING|DEBUG))|(^For example --metadata)")


def error_lines(stderr: str) -> list[str]:
    lines = [line for chunk in stderr.splitlines() for line in chunk.split("\r")]
    return [line for line in lines if line.strip() and not _NOISE.search(line)]


def assert_one_line_user_error(proc: subprocess.CompletedProcess, must_say: str) -> None:
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, lines
    assert re.match(r"^triangulate( \w+)?: error: ", lines[0]), lines[0]
    assert must_say in lines[0], lines[0]


@pytest.fixture(scope="module")
def cases(upstream, tmp_path_factory):
    """Start every user-error command at once; returns name -> CompletedProcess (plus the paths used)."""
    tmp = tmp_path_factory.mktemp("robust_cli")
    empty_data = tmp / "no_data"
    empty_data.mkdir()
    empty_model = tmp / "not_a_model"
    empty_model.mkdir()
    empty_upstream = tmp / "empty_upstream"
    empty_upstream.mkdir()
    corrupt = tmp / "corrupt_results" / "m"
    corrupt.mkdir(parents=True)
    (corrupt / "results_2026-01-01T00-00-00.json").write_text('{"results": {"wcst": ', encoding="utf-8")
    not_results = tmp / "not_results" / "m"
    not_results.mkdir(parents=True)
    (not_results / "results_2026-01-01T00-00-00.json").write_text("[1, 2, 3]", encoding="utf-8")
    (tmp / "no_results_inside").mkdir()
    a_file = tmp / "a_file"
    a_file.write_text("not a folder", encoding="utf-8")
    good = tmp / "good_results" / "m"
    good.mkdir(parents=True)
    (good / "results_2026-01-01T00-00-00.json").write_text(
        json.dumps({"results": {"wcst": {"accuracy,none": 0.5}}, "config": {"model": "hf", "model_args": "pretrained=m"}}), encoding="utf-8"
    )
    commands: dict[str, tuple[list[str], dict[str, str]]] = {
        "play_unknown_task": (["play", "--model", "dummy", "--tasks", "wcst,nosuchtask"], _env(upstream)),
        "play_unknown_model": (["play", "--model", "nosuchmodel", "--tasks", "wcst"], _env(upstream)),
        "play_model_args_syntax": (["play", "--model", "dummy", "--model_args", "garbage", "--tasks", "wcst"], _env(upstream)),
        "play_model_not_found": (
            [
                "play",
                "--model",
                "hf",
                "--model_args",
                f"pretrained={empty_model},api_key={FAKE_KEY}",
                "--tasks",
                "wcst",
                "--limit",
                "1",
                "--device",
                "cpu",
            ],
            _env(upstream),
        ),
        "play_bad_limit": (["play", "--model", "dummy", "--tasks", "wcst", "--limit", "-3"], _env(upstream)),
        "play_bad_timeout": (["play", "--model", "dummy", "--tasks", "wcst", "--request_timeout", "0"], _env(upstream)),
        "play_missing_data": (
            ["play", "--model", "dummy", "--tasks", "splat_easy", "--limit", "1"],
            _env(upstream, TRIANGULATE_DATA=str(empty_data)),
        ),
        "play_nback_not_built": (
            ["play", "--model", "dummy", "--tasks", "nback_verbal_1", "--limit", "1"],
            _env(None, TRIANGULATE_DATA=str(empty_data)),
        ),
        "play_clembench_not_built": (
            ["play", "--model", "dummy", "--tasks", "taboo", "--limit", "1"],
            _env(None, TRIANGULATE_DATA=str(empty_data)),
        ),
        "data_build_upstream_not_a_folder": (
            ["data", "build", "--datasets", "connections", "--out", str(tmp / "built1")],
            _env(tmp / "nowhere"),
        ),
        "data_build_upstream_empty": (["data", "build", "--datasets", "connections", "--out", str(tmp / "built2")], _env(empty_upstream)),
        "report_missing_folder": (["report", str(tmp / "nothing_here"), "--out", str(tmp / "rep1")], _env(upstream)),
        "report_corrupt_results": (["report", str(corrupt.parent), "--out", str(tmp / "rep2")], _env(upstream)),
        "report_not_results": (["report", str(not_results.parent), "--out", str(tmp / "rep3")], _env(upstream)),
        "report_no_results_inside": (["report", str(tmp / "no_results_inside"), "--out", str(tmp / "rep4")], _env(upstream)),
        "no_subcommand": ([], _env(upstream)),
        "play_output_path_is_a_file": (
            ["play", "--model", "dummy", "--tasks", "wcst", "--limit", "1", "--output_path", str(a_file)],
            _env(upstream),
        ),
        "report_out_is_a_file": (["report", str(good.parent), "--out", str(a_file)], _env(upstream)),
        "data_build_out_is_a_file": (["data", "build", "--datasets", "connections", "--out", str(a_file / "sub")], _env(upstream)),
    }
    procs = {
        name: subprocess.Popen(TRIANGULATE + argv, env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, (argv, env) in commands.items()
    }
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        out[name] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    out["_tmp"] = tmp
    return out


EXPECTED = {
    "play_unknown_task": "unknown task(s): 'nosuchtask'",
    "play_unknown_model": "unknown model 'nosuchmodel'",
    "play_model_args_syntax": "expected `key=value`",
    "play_model_not_found": "cannot load --model hf",
    "play_bad_limit": "--limit must be positive",
    "play_bad_timeout": "--request_timeout must be a positive",
    "play_missing_data": "triangulate data build",
    "play_nback_not_built": "triangulate data build",
    "play_clembench_not_built": "triangulate data build",
    "data_build_upstream_not_a_folder": "TRIANGULATE_UPSTREAM",
    "data_build_upstream_empty": "connections",
    "report_missing_folder": "does not exist",
    "report_corrupt_results": "cannot read results file",
    "report_not_results": "not an lm-eval results file",
    "report_no_results_inside": "no results_*.json",
    "no_subcommand": "triangulate --help",
    "play_output_path_is_a_file": "--output_path",
    "report_out_is_a_file": "--out",
    "data_build_out_is_a_file": "--out",
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_user_error_is_one_line_without_traceback(name, cases):
    assert_one_line_user_error(cases[name], EXPECTED[name])


def test_model_load_error_names_no_secret(cases):
    stderr = cases["play_model_not_found"].stderr
    assert FAKE_KEY not in stderr and "api_key=<redacted>" in stderr


def test_failed_builds_leave_no_half_dataset_folder(cases):
    """The dataset folder is built under a hidden temporary name and renamed at the end: nothing is left."""
    for out in ("built1", "built2"):
        root = cases["_tmp"] / out
        assert not root.exists() or list(root.iterdir()) == []


@pytest.mark.slow
def test_eval_unknown_task_and_missing_data_are_one_line_errors(upstream, tmp_path):
    """`triangulate eval` (lm-eval's CLI with our tasks): unknown task names and unbuilt data."""
    (tmp_path / "no_data").mkdir()
    runs = {
        "unknown": subprocess.Popen(
            TRIANGULATE + ["eval", "--model", "dummy", "--tasks", "nosuchtask_xyz"],
            env=_env(upstream),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
        "no_data": subprocess.Popen(
            TRIANGULATE + ["eval", "--model", "dummy", "--tasks", "globalgroup_en", "--limit", "1"],
            env=_env(upstream, TRIANGULATE_DATA=str(tmp_path / "no_data")),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
    }
    done = {}
    for name, proc in runs.items():
        stdout, stderr = proc.communicate(timeout=900)
        done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert_one_line_user_error(done["unknown"], "unknown task(s): 'nosuchtask_xyz'")
    assert "triangulate eval ls tasks" in error_lines(done["unknown"].stderr)[0]
    assert_one_line_user_error(done["no_data"], "triangulate data build")


# --- credentials ---------------------------------------------------------------------------------


def test_api_keys_never_reach_results_transcripts_or_logs(upstream, tmp_path):
    """`triangulate play` on a scripted backend that logs its key and raises errors quoting it and
    $OPENAI_API_KEY (tests/support/robust_helpers.py): no written file, stdout or stderr holds them."""
    out = tmp_path / "out"
    args = [
        "play",
        "--model",
        "scripted-leaky",
        "--model_args",
        f"api_key={FAKE_KEY},base_url=http://alice:{FAKE_URL_PASSWORD}@llm.example:8000/v1",
        "--tasks",
        "nback_verbal_1,wcst",
        "--limit",
        "2",
        "--output_path",
        str(out),
        "--verbosity",
        "DEBUG",
        "--retries",
        "2",
    ]
    started = time.perf_counter()
    proc = subprocess.run(
        LEAKY + args, env=_env(upstream, OPENAI_API_KEY=FAKE_ENV_KEY), cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 1, proc.stderr[-3000:]  # one episode failed on the backend: non-zero exit
    assert time.perf_counter() - started < 300

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.name.split("_")[0] for p in written}
    assert {"results", "episodes"} <= names
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        for fake in FAKES:
            assert fake not in text, f"{fake} in {path}"
    for stream in (proc.stdout, proc.stderr):
        for fake in FAKES:
            assert fake not in stream
    # the backend did try to leak: its log line and both kinds of error were scrubbed, not absent
    assert "api_key=<redacted>" in proc.stderr and "401 Unauthorized: key <redacted>" in proc.stderr
    assert "Bearer <redacted>" in proc.stderr and "http://alice:<redacted>@llm.example" in proc.stderr
    records = read_episodes(run_folder.episodes_path(out / "scripted-leaky", "nback_verbal_1"))
    failed = [r for r in records if r["failed"]]
    assert len(failed) == 1 and "Bearer <redacted>" in failed[0]["error"]
    [results] = (out / "scripted-leaky").glob("results_*.json")
    config = json.loads(results.read_text())["config"]
    assert "api_key=<redacted>" in config["model_args"] and "alice:" not in config["model_args"]


def test_play_request_timeout_end_to_end_then_the_same_command_completes(upstream, tmp_path):
    """`--request_timeout`: a backend call that never returns fails its episode, the run ends, and the same
    command later (backend healthy again) plays only that episode."""
    out = tmp_path / "out"
    args = [
        "play",
        "--model",
        "scripted-hang",
        "--tasks",
        "nback_verbal_1",
        "--limit",
        "3",
        "--output_path",
        str(out),
        "--request_timeout",
        "1",
        "--retries",
        "1",
        "--max_live",
        "1",
    ]
    started = time.perf_counter()
    first = subprocess.run(LEAKY + args, env=_env(upstream, ROBUST_HANG="1"), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert first.returncode == 1, first.stderr[-3000:]
    assert time.perf_counter() - started < 300
    jsonl = out / "scripted-hang" / "episodes_nback_verbal_1.jsonl"
    records = read_episodes(jsonl)
    assert [r["id"] for r in records if r["failed"]] == ["nback_verbal_1_block01"]
    assert "TimeoutError" in records[[r["id"] for r in records].index("nback_verbal_1_block01")]["error"]
    assert "1 of 3 episodes failed on backend errors (nback_verbal_1: 1)" in first.stderr and "Traceback" not in first.stderr
    summary = [line for line in first.stderr.splitlines() if "episodes failed on backend errors" in line]
    assert len(summary) == 1 and summary[0].endswith("resume with: triangulate " + " ".join(args))

    second = subprocess.run(LEAKY + args, env=_env(upstream, ROBUST_HANG="0"), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    records = read_episodes(jsonl)
    assert sorted(r["id"] for r in records) == [f"nback_verbal_1_block{i:02d}" for i in range(3)] and not any(r["failed"] for r in records)
    results = sorted((out / "scripted-hang").glob("results_*.json"))
    assert json.loads(results[-1].read_text())["n-samples"]["nback_verbal_1"]["effective"] == 3
