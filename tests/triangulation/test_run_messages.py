"""Issue 30 item 17: a failed ``export inspect`` leaves no empty ``--out``; a damaged results file is named in the
message of every command that stops on it (``score`` no longer writes a newer results file without the run's
config from it); ``score`` on a run still being played (episodes, no results file yet) says so, not "no results"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from triangulation.cli.main import main

PLAY = ["play", "--model", "random", "--tasks", "wcst", "--limit", "2", "--seed", "1"]


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("played")
    assert main([*PLAY, "--output_path", str(out)]) == 0
    return out


def _one_error(capsys) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("triangulate")]
    assert len(err) == 1, err
    return err[0]


def test_a_failed_export_leaves_no_empty_out(tmp_path, capsys):
    pytest.importorskip("inspect_ai")
    (tmp_path / "empty").mkdir()
    assert main(["export", "inspect", str(tmp_path / "empty"), "--out", str(tmp_path / "logs")]) == 2
    _one_error(capsys)
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("command", ["score", "export"])
def test_a_damaged_results_file_is_named(played, tmp_path, capsys, command):
    if command == "export":
        pytest.importorskip("inspect_ai")
    run = tmp_path / "run"
    shutil.copytree(played, run)
    (results,) = (run / "random").glob("results_*.json")
    # score: malformed JSON; export: a results file with no config (what score wrote from a damaged one before)
    results.write_text('{"results": {"wcst": ' if command == "score" else '{"results": {"wcst": {}}}', encoding="utf-8")
    argv = ["score", str(run)] if command == "score" else ["export", "inspect", str(run), "--out", str(tmp_path / "logs")]
    capsys.readouterr()
    assert main(argv) == 2
    assert str(results) in _one_error(capsys)
    assert [p.name for p in (run / "random").glob("results_*.json")] == [results.name]  # nothing newer written


def test_score_during_a_play_says_the_run_is_unfinished(played, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(played, run)
    for path in (run / "random").glob("results_*.json"):
        path.unlink()  # what a run still playing (or killed) looks like: episodes, no results file yet
    capsys.readouterr()
    assert main(["score", str(run)]) == 2
    err = _one_error(capsys)
    assert "no results_*.json yet" in err and "episodes_*.jsonl" in err and "still running" in err
