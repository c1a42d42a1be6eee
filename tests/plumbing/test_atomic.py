"""The one atomic writer (issue 28): whole files replace the old one in one rename, no temporary file is left
behind (also when writing fails), and appended lines are flushed one by one; every former hand-written site uses it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from plumbing import atomic, jsonio

ROOT = Path(__file__).resolve().parents[2]


def test_write_text_replaces_the_file_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "sub" / "a.json"
    atomic.write_text(path, "old")
    assert atomic.write_text(path, "new ü") == path and path.read_text(encoding="utf-8") == "new ü"
    assert sorted(p.name for p in path.parent.iterdir()) == ["a.json"]


def test_a_failed_write_keeps_the_old_file_and_no_temporary_file(tmp_path):
    path = tmp_path / "a.jsonl"
    atomic.write_text(path, "kept\n")

    def lines():
        yield "half\n"
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        atomic.write_lines(path, lines())
    assert path.read_text(encoding="utf-8") == "kept\n" and [p.name for p in tmp_path.iterdir()] == ["a.jsonl"]


def test_surrogateescape_round_trips_bytes_read_that_way(tmp_path):
    path = tmp_path / "raw.jsonl"
    path.write_bytes(b'{"a": "\xff"}\n')
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    atomic.write_text(path, text.replace("a", "b"), errors="surrogateescape")
    assert path.read_bytes() == b'{"b": "\xff"}\n'


def test_json_goes_through_the_one_encoder(tmp_path):
    path = jsonio.write_json(tmp_path / "r.json", {"x": "\ud800", "n": 1}, indent=1, sort_keys=True)
    assert path.read_text(encoding="utf-8") == '{\n "n": 1,\n "x": "\ufffd"\n}'


def test_appended_lines_are_flushed_one_by_one(tmp_path):
    path = tmp_path / "e" / "episodes.jsonl"
    with atomic.LineAppender(path) as lines:
        lines.write('{"id": 1}')
        assert path.read_text(encoding="utf-8") == '{"id": 1}\n'  # readable before the writer closes
        lines.write('{"id": 2}')
    assert jsonio.read_jsonl(path) == [{"id": 1}, {"id": 2}]


#: the modules that once held hand-written temp-file-then-rename writers
FORMER_SITES = (
    "multiturn/engine/results.py",
    "multiturn/engine/store.py",
    "multiturn/engine/turns.py",
    "triangulation/suite/runner.py",
    "triangulation/suite/slurm.py",
    "triangulation/cli/eval.py",
    "plumbing/jsonio.py",
)


@pytest.mark.parametrize("module", FORMER_SITES)
def test_no_module_writes_a_temporary_file_by_hand(module):
    """No ``os.replace``/``fsync``/``.tmp`` name outside plumbing/atomic.py at the former sites (eval's ``os.replace``
    moves a finished file into another folder: allowed by name)."""
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("replace", "fsync")
    ]
    manual = [ast.unparse(c) for c in calls if ast.unparse(c.func) in ("os.replace", "os.fsync") and "target" not in ast.unparse(c)]
    temp_names = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith(".tmp")]
    assert not manual and not temp_names, (manual, temp_names)


def test_lone_surrogates_are_written_as_replacement_characters(tmp_path):
    """A string with lone surrogates (a broken server's text) is written, each one as U+FFFD, not refused."""
    path = atomic.write_text(tmp_path / "page.html", "a\ud800\udfffb")
    assert path.read_bytes() == "a\ufffd\ufffdb".encode()
    lines = atomic.write_lines(tmp_path / "x.jsonl", ["\udc00\n", "ok\n"])
    assert lines.read_text(encoding="utf-8") == "\ufffd\nok\n"
