"""Issue 30 items 12 and 14: numbers a user gives are checked once, at parse time, with one line each
(``--limit nan|inf|1e400``, a 30-digit ``--seed``, ``--request_timeout nan``; a suite's ``limit: .nan``,
``.inf``, ``0``, ``batch_size: -3``, ``timeout: -5``), a 300-character model name gets a folder the file system
accepts, and ``--tasks ,`` is one line."""

from __future__ import annotations

import pytest

from tests.triangulation.test_suite import write_suite
from triangulation.cli.main import main
from triangulation.suite.spec import load_suite

PLAY = ["play", "--model", "random", "--tasks", "wcst"]


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--limit", "nan"], "--limit"),
        (["--limit", "inf"], "--limit"),
        (["--limit", "1e400"], "--limit"),
        (["--limit", "0"], "--limit"),
        (["--seed", "1" + "0" * 29], "--seed"),
        (["--seed", "1e29"], "--seed"),
        (["--request_timeout", "nan"], "--request_timeout"),
        (["--request_timeout", "-5"], "--request_timeout"),
    ],
)
def test_play_numbers_are_refused_at_parse_time_in_one_line(tmp_path, capsys, flags, named):
    with pytest.raises(SystemExit) as exc:
        main([*PLAY, *flags, "--output_path", str(tmp_path / "out")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0] and "must be a number" in err[0], err
    assert not (tmp_path / "out").exists()  # refused before anything ran


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"limit": float("nan")}, "limit must be a number > 0, got nan"),
        ({"limit": float("inf")}, "limit must be a number > 0, got inf"),
        ({"limit": 0}, "limit must be a number > 0, got 0"),
        ({"batch_size": -3}, "batch_size must be a number >= 1 (an integer), got -3"),
        ({"batch_size": "-3"}, "batch_size must be a number >= 1 (an integer)"),
        ({"timeout": -5}, "timeout must be a number > 0, got -5"),
        ({"timeout": float("nan")}, "timeout must be a number > 0, got nan"),
        ({"seed": 10**29}, "seed must be a number from 0 to 4294967295 (an integer)"),
    ],
)
def test_suite_numbers_are_refused_in_one_line(tmp_path, entry, message):
    from plumbing.errors import UserError

    path = write_suite(tmp_path, {"models": [{"name": "a"}], "tasks": [{"play": "wcst", **entry}]})
    with pytest.raises(UserError) as exc:
        load_suite(path)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_suite_model_batch_size_is_checked_and_auto_kept(tmp_path):
    from plumbing.errors import UserError

    with pytest.raises(UserError, match="batch_size must be a number >= 1"):
        load_suite(write_suite(tmp_path, {"models": [{"name": "a", "batch_size": -3}], "tasks": [{"play": "wcst"}]}))
    suite = load_suite(
        write_suite(tmp_path, {"models": [{"name": "a", "batch_size": "auto:4"}], "tasks": [{"play": "wcst", "batch_size": 2}]})
    )
    assert suite.models[0].batch_size == "auto:4" and suite.tasks[0].options["batch_size"] == 2


def test_play_with_a_300_character_model_name_writes_a_short_folder(tmp_path, capsys):
    name = "m" * 300
    argv = [*PLAY, "--model_args", f"model={name}", "--limit", "1", "--output_path", str(tmp_path)]
    assert main(argv) == 0
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(folder.name.encode()) <= 200 and folder.name.startswith("m" * 100)
    assert list(folder.glob("results_*.json")) and list(folder.glob("episodes_wcst.jsonl"))
    capsys.readouterr()
    assert main(argv) == 0 and "nothing left to play" in capsys.readouterr().out  # the same folder again
    assert main(["view", str(tmp_path), "--out", str(tmp_path / "pages")]) == 0
    pytest.importorskip("inspect_ai")
    assert main(["export", "inspect", str(tmp_path), "--out", str(tmp_path / "logs")]) == 0  # the log's file name fits too
    assert [len(p.name.encode()) <= 255 for p in (tmp_path / "logs").iterdir()] == [True]


@pytest.mark.parametrize("tasks", [",", " , ,"])
def test_play_tasks_naming_no_task_is_one_line(tmp_path, capsys, tasks):
    assert main(["play", "--model", "random", "--tasks", tasks, "--output_path", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "names no task" in err[0]
