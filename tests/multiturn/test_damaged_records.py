"""Issue 30 item 11: a damaged line in an episodes file (raw non-UTF-8 bytes, JSON nested 200,000 deep,
``"instance": "x"``, ``"scores": ["a", 1]``) is one line naming file:line in every reader (``score``, ``view``,
``report``, ``export inspect`` and a resuming ``play``), never a traceback; the same damage on the last line
of raw bytes or deep nesting is a torn line (skipped and counted)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from triangulation.cli.main import main

PLAY = ["play", "--model", "random", "--tasks", "wcst", "--limit", "3", "--seed", "1"]


def _damaged(line: bytes, kind: str) -> bytes:
    if kind == "bytes":
        return line[:30] + b"\xff\xfe" + line[30:]
    if kind == "deep":
        return b'{"id": "x", "a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    record = json.loads(line)
    record["instance" if kind == "instance" else "scores"] = "x" if kind == "instance" else ["a", 1]
    return (json.dumps(record) + "\n").encode()


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("played")
    assert main([*PLAY, "--output_path", str(out)]) == 0
    return out


def _command(name: str, run: Path, tmp: Path) -> list[str]:
    return {
        "score": ["score", str(run)],
        "view": ["view", str(run), "--out", str(tmp / "out")],
        "report": ["report", str(run), "--out", str(tmp / "out")],
        "export": ["export", "inspect", str(run), "--out", str(tmp / "out")],
        "play": [*PLAY, "--output_path", str(run)],
    }[name]


@pytest.mark.parametrize("kind", ["bytes", "deep", "instance", "scores"])
@pytest.mark.parametrize("command", ["score", "view", "report", "export", "play"])
def test_a_damaged_episode_line_is_one_line_naming_file_and_line(played, tmp_path, capsys, kind, command):
    if command == "export":
        pytest.importorskip("inspect_ai")
    run = tmp_path / "run"
    shutil.copytree(played, run)
    episodes = run / "random" / "episodes_wcst.jsonl"
    lines = episodes.read_bytes().splitlines(keepends=True)
    episodes.write_bytes(lines[0] + _damaged(lines[1], kind) + lines[2])
    capsys.readouterr()
    assert main(_command(command, run, tmp_path)) == 2
    # the error line alone (a once-per-process "triangulate: note:", e.g. on missing fastText vectors, may come first)
    err = [
        line
        for line in capsys.readouterr().err.splitlines()
        if line.startswith("triangulate") and not line.startswith("triangulate: note:")
    ]
    assert len(err) == 1 and f"{episodes}:2:" in err[0], err
    assert "Traceback" not in err[0] and not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["bytes", "deep"])
def test_the_same_damage_on_the_last_line_is_a_torn_line(played, tmp_path, kind):
    from multiturn.engine.record import read_episodes

    run = tmp_path / "run"
    shutil.copytree(played, run)
    episodes = run / "random" / "episodes_wcst.jsonl"
    lines = episodes.read_bytes().splitlines(keepends=True)
    episodes.write_bytes(lines[0] + lines[1] + _damaged(lines[2], kind))
    records = read_episodes(episodes)
    assert len(records) == 2 and records.skipped == 1 and records.lines == [1, 2]
