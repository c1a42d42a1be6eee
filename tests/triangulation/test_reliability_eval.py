"""Issue 23 for `triangulate eval`, `view` and `report`: hostile bytes in stored records (item 4) and an output
path that cannot be written, refused before any model call (item 6)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from triangulation.cli.main import main


def test_eval_refuses_an_unwritable_output_path_before_any_model_call(tmp_path, capsys):
    started = time.time()
    code = main(["eval", "--model", "random", "--tasks", "globalgroup_zh", "--limit", "1", "--output_path", "/proc/x/out"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--output_path /proc/x/out is not a writable folder" in err[0]
    assert time.time() - started < 60


def _episode_file(root: Path) -> Path:
    """A stored play run whose record holds JSON-escaped lone surrogates (as another tool may write them)."""
    folder = root / "m"
    folder.mkdir(parents=True)
    record = {
        "id": "0",
        "task": "nback_verbal_1",
        "transcript": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "m \ud800 \udfff"}],
        "scores": {"accuracy": 1.0},
    }
    (folder / "episodes_nback_verbal_1.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")  # ensure_ascii: \ud800
    results = {"results": {"nback_verbal_1": {"accuracy,none": 1.0}}, "config": {"model": "m", "model_args": ""}, "model_name": "m\udc80"}
    (folder / "results_2026-01-01T00-00-00.json").write_text(json.dumps(results), encoding="utf-8")
    return folder


def test_view_and_report_survive_lone_surrogates_in_stored_records(tmp_path):
    _episode_file(tmp_path / "runs")
    assert main(["view", str(tmp_path / "runs"), "--out", str(tmp_path / "view")]) == 0
    assert "m \ufffd \ufffd" in (tmp_path / "view" / "nback_verbal_1.html").read_text(encoding="utf-8")
    assert main(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "report.html").stat().st_size > 0


@pytest.mark.slow
def test_eval_log_samples_with_a_lone_surrogate_in_the_reply(tmp_path, built_data):
    from tests.support.fake_chat import FakeChatServer

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with FakeChatServer('"m \\ud800"') as server:
        code = main(
            ["eval", "--model", "local-chat-completions", "--model_args", f"model=fake,base_url={server.url()},tokenizer_backend=None"]
            + ["--apply_chat_template", "--tasks", "globalgroup_zh", "--limit", "1", "--log_samples", "--output_path", str(tmp_path)]
        )
    assert code == 0
    [samples] = list(tmp_path.rglob("samples_globalgroup_zh_*.jsonl"))
    [sample] = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    assert sample["replaced_surrogates"] >= 1 and "\ufffd" in json.dumps(sample["resps"], ensure_ascii=False)


LAUGHS = (
    "models: [{model: random}]\ntasks:\n  - play: wcst\n    gen_kwargs:\n      a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"      {c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
)


@pytest.mark.parametrize(
    "text, words",
    [
        (LAUGHS, "aliases expand"),  # 10^9 values once expanded, from 1 KB
        ("models: &m [{model: random, model_args: {k: *m}}]\ntasks: [{play: wcst}]\n", "recursive alias"),
        ("models: [{model: random}]\ntasks: [{play: wcst}]\n#" + "x" * (1 << 20) + "\n", "at most"),
    ],
)
def test_hostile_suite_files_are_refused_fast_with_one_line(tmp_path, capsys, text, words):
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    started = time.time()
    assert main(["suite", str(path), "--output_path", str(tmp_path / "o"), "--dry_run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and time.time() - started < 10


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--limit", "0"], "--limit must be positive"),
        (["--limit", "-1"], "--limit must be positive"),
        (["--limit", "1", "--metadata", "{bad"], "Invalid JSON"),
        (["--limit", "1", "--model_args", "seed=abc"], "seed must be an integer"),
        (["--limit", "1", "--model_args", "sed=3"], "takes only model_args seed=N, not sed"),
    ],
)
def test_eval_argument_mistakes_are_one_line(capsys, argv, words):
    code = main(["eval", "--model", "random", "--tasks", "globalgroup_zh", *argv])
    err = [line for line in capsys.readouterr().err.strip().splitlines() if "triangulate" in line or "Traceback" in line]
    assert code == 2 and len(err) == 1 and words in err[0], err


def _damaged_run(root: Path) -> Path:
    """A play run whose record has an Infinity score, calls that are not a list and no instance."""
    folder = root / "m"
    folder.mkdir(parents=True)
    record = {
        "id": "0",
        "task": "wcst",
        "transcript": [{"role": "user", "content": "hi"}],
        "scores": {"accuracy": float("inf")},
        "calls": 5,
    }
    (folder / "episodes_wcst.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    results = {
        "results": {"wcst": {"accuracy,none": float("inf"), "accuracy_stderr,none": "N/A"}},
        "config": {"model": "m", "model_args": ""},
        "n-samples": {"wcst": {"original": 1, "effective": 1}},
    }
    (folder / "results_2026-01-01T00-00-00.json").write_text(json.dumps(results), encoding="utf-8")
    return folder


def test_infinity_scores_and_malformed_calls_are_no_traceback(tmp_path, capsys):
    _damaged_run(tmp_path / "runs")
    assert main(["view", str(tmp_path / "runs"), "--out", str(tmp_path / "view")]) == 0
    assert main(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "report")]) == 0
    assert main(["score", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "kept their stored scores" in out and "not a list" in out


def _run_with(root: Path, task: str, reply: str) -> None:
    folder = root / "m"
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "id": "0",
        "task": task,
        "transcript": [{"role": "user", "content": "q"}, {"role": "assistant", "content": reply}],
        "scores": {"accuracy": 1.0},
    }
    (folder / f"episodes_{task}.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    results = {"results": {task: {"accuracy,none": 1.0}}, "config": {"model": "m", "model_args": ""}}
    (folder / "results_2026-01-01T00-00-00.json").write_text(json.dumps(results), encoding="utf-8")


def test_viewer_shows_control_characters_isolates_bidi_and_keeps_its_index(tmp_path):
    _run_with(tmp_path / "runs", "index", "abc\u202edcba\x07 \u0645\u0631\u062d\u0628\u0627")
    assert main(["view", str(tmp_path / "runs"), "--out", str(tmp_path / "view")]) == 0
    index = (tmp_path / "view" / "index.html").read_text(encoding="utf-8")
    assert "<table>" in index and "task_index.html" in index  # the task page did not overwrite the index
    page = (tmp_path / "view" / "task_index.html").read_text(encoding="utf-8")
    assert "\x07" not in page and "&lt;U+0007&gt;" in page  # a control character is shown, not sent raw
    assert "<pre dir='auto'>abc\u202edcba" in page  # an override stays inside its isolated element
    assert "\u0645\u0631\u062d\u0628\u0627" in page  # ordinary right-to-left text is kept


def test_a_failed_view_or_report_leaves_no_empty_out(tmp_path):
    (tmp_path / "empty").mkdir()
    assert main(["view", str(tmp_path / "empty"), "--out", str(tmp_path / "v")]) == 2
    assert main(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "r")]) == 2
    assert not (tmp_path / "v").exists() and not (tmp_path / "r").exists()


def test_a_model_named_dot_dot_stays_inside_the_output_path():
    from models.ref import ModelRef

    assert ModelRef.parse("random", "pretrained=..").folder == "model"
    assert ModelRef.parse("random", "pretrained=.").folder == "model"
