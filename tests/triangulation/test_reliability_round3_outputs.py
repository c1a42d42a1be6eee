"""Issue 39 items 1, 14 and 16: an ``--out`` never deletes what is not ours, a report is swapped in whole, and
``data generate --count`` / ``--matched`` are checked.

``test_user_files_survive_every_command_with_an_out`` plants a user's files in one folder and runs every command
that takes an ``--out``/``--output_path`` at it: nothing of the user's is removed; the commands that replace their
folder whole (``data generate``, ``report``) refuse it in one line.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from tests.datasets_build.test_data_sources import serve
from triangulation.cli.main import main

USER_FILES = {"notes.txt": "my notes\n", "sub/thesis.tex": "\\documentclass{article}\n"}


def _plant(folder: Path) -> None:
    for name, text in USER_FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")


def _intact(folder: Path) -> bool:
    return all((folder / name).is_file() and (folder / name).read_text(encoding="utf-8") == text for name, text in USER_FILES.items())


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("triangulate: error:") and "\n" not in err and "Traceback" not in err, err
    return err


def _generate(out) -> list[str]:
    return ["data", "generate", "--benchmark", "globalgroup", *"--subset hi --groups 3 --size 4 --count 2 --out".split(), str(out)]


def test_data_generate_never_deletes_what_is_at_out(upstream, tmp_path, capsys, monkeypatch):
    """Item 1 (fails on the old main: the folder, the file and the working directory's contents were removed, and
    ``/proc/nope`` was a traceback)."""
    user = tmp_path / "user"
    user.mkdir()
    _plant(user)
    assert main(_generate(user)) == 2
    assert "holds files that triangulate did not write" in _one_line_error(capsys) and _intact(user)
    monkeypatch.chdir(user)
    assert main(_generate(".")) == 2
    _one_line_error(capsys)
    assert _intact(user)
    a_file = tmp_path / "a_file"
    a_file.write_text("keep", encoding="utf-8")
    assert main(_generate(a_file)) == 2
    assert "is not a folder" in _one_line_error(capsys) and a_file.read_text(encoding="utf-8") == "keep"
    assert main(_generate("/proc/nope")) == 2
    _one_line_error(capsys)
    if os.path.exists("/dev/null"):
        assert main(_generate("/dev/null")) == 2
        _one_line_error(capsys)
        assert not Path("/dev/null").is_dir()
    ours = tmp_path / "ours"  # a folder generate wrote, and an empty one, are replaced
    assert main(_generate(ours)) == 0
    assert main(_generate(ours)) == 0
    (tmp_path / "empty").mkdir()
    assert main(_generate(tmp_path / "empty")) == 0


def test_data_generate_count_and_matched_are_checked(upstream, tmp_path, capsys):
    """Item 16 (fails on the old main: ``--count -3`` gave 297 games, ``0`` all 300, ``100000`` 300, and
    ``--matched`` with ``--benchmark`` ignored ``--benchmark``)."""
    for count in ("-3", "0", "1.5"):
        argv = _generate(tmp_path / "g")
        argv[argv.index("--count") + 1] = count
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "--count" in capsys.readouterr().err
    matched = ["data", "generate", "--matched", "globalgroup_zh", "--out", str(tmp_path / "m")]
    assert main([*matched, "--count", "100000"]) == 2
    err = _one_line_error(capsys)
    assert "--count must be a number from 1 to" in err and "published" in err
    assert main([*matched, "--benchmark", "globalgroup", "--count", "2"]) == 2
    assert "not both" in _one_line_error(capsys)
    assert not (tmp_path / "m").exists()


def _play(out: Path) -> list[str]:
    return ["play", "--model", "random", "--tasks", "wcst", "--limit", "2", "--output_path", str(out)]


def test_a_report_is_swapped_in_whole(tmp_path, capsys):
    """Item 14 (fails on the old main: the earlier report's ``published_vs_fresh.csv`` stayed beside the new report,
    and a folder of the user's was written into)."""
    runs = tmp_path / "runs"
    assert main(_play(runs)) == 0
    out = tmp_path / "report"
    assert main(["report", str(runs), "--out", str(out)]) == 0
    (out / "published_vs_fresh.csv").write_text("model,delta\nold,1\n", encoding="utf-8")  # an earlier report's section
    (tmp_path / ".report.building-999999999-dead").mkdir()  # what a killed report left (its process is gone)
    assert main(["report", str(runs), "--out", str(out)]) == 0
    assert (out / "report.html").is_file() and not (out / "published_vs_fresh.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report", "runs"]  # no temporary or old folder left, a killed one's gone
    user = tmp_path / "user"
    user.mkdir()
    _plant(user)
    capsys.readouterr()
    assert main(["report", str(runs), "--out", str(user)]) == 2
    assert "holds files that triangulate did not write" in _one_line_error(capsys)
    assert _intact(user) and not (user / "report.html").exists()


def test_user_files_survive_every_command_with_an_out(upstream, built_data, tmp_path, capsys):
    """Done means: a user's files in one folder, every command with an ``--out``/``--output_path`` run at it."""
    user = tmp_path / "user"
    user.mkdir()
    _plant(user)
    runs = tmp_path / "runs"
    assert main(_play(runs)) == 0
    suite = tmp_path / "s.yaml"
    suite.write_text("models:\n  - name: chance\n    model: random\ntasks:\n  - play: wcst\n    limit: 1\n", encoding="utf-8")
    archive = gzip.compress(b"fake fastText model")
    writes = [  # commands that add files beside the user's
        _play(user),
        ["eval", "--model", "random", "--tasks", "globalgroup_zh", "--limit", "1", "--output_path", str(user)],
        ["view", str(runs), "--out", str(user)],
        ["export", "inspect", str(runs), "--out", str(user)],
        ["data", "build", "--datasets", "connections", "--out", str(user)],
        ["suite", str(suite), "--output_path", str(user)],
    ]
    for argv in writes:
        assert main(argv) == 0, argv
        assert _intact(user), argv
    with serve({"/cc.xx.300.bin.gz": archive}) as mirror:
        assert main(["data", "fasttext", "xx", "--out", str(user), "--base-url", mirror.url]) == 0
    assert _intact(user)
    capsys.readouterr()
    for argv in (_generate(user), ["report", str(runs), "--out", str(user)]):  # commands that replace their folder
        assert main(argv) == 2, argv
        _one_line_error(capsys)
        assert _intact(user), argv
