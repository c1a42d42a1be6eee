"""Every write goes through ``plumbing`` (issue 38, item 5): whole files through ``plumbing.atomic`` (or
``plumbing.jsonio`` / ``plumbing.csvio``, which call it), streamed downloads through ``atomic.part_path`` and
``atomic.promote``, folder swaps through ``atomic.swap_dir``. Before, the dataset stamps copied the atomic writer
by hand, the Hub folder swap was written out in ``datasets_build/hub.py``, and the suite's status and plan files
were written in place."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from plumbing import atomic

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("plumbing", "custom_metrics", "datasets_build", "models", "lm_eval_tasks", "multiturn", "triangulation")
PLAIN_WRITE = re.compile(r"\.write_text\(|\.write_bytes\(|os\.replace\(|os\.rename\(|shutil\.move\(|open\([^)]*[\"'](w|a|wb|ab|x)[\"']")
#: file -> why its plain writes are not whole files of ours
ALLOWED = {
    "plumbing/atomic.py": "the writer itself",
    "datasets_build/sources.py": "streams a download into its .part file (promoted by atomic.promote)",
    "datasets_build/fasttext_vectors.py": "streams the unpacked vectors into their .part file (promoted by atomic.promote)",
    "triangulation/suite/runner.py": "a cell's child process appends to its own log",
    "triangulation/suite/serve.py": "the server process appends to its own log",
    "triangulation/cli/eval.py": "moves lm-eval's finished results file into the model folder (a rename, not a write)",
}


def test_no_plain_writes_outside_plumbing():
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if PLAIN_WRITE.search(line)]
            lines = [line for line in lines if not re.search(r"(atomic|jsonio)\.write_(text|bytes)\(", line)]
            if lines and rel not in ALLOWED:
                found[rel] = lines
    assert found == {}


def test_promote_and_swap_dir(tmp_path):
    target = tmp_path / "file.bin"
    part = atomic.part_path(target)
    part.write_bytes(b"new")
    assert atomic.promote(part, target).read_bytes() == b"new" and not part.exists()
    final, new, old = tmp_path / "final", tmp_path / ".final.new", tmp_path / ".final.old"
    final.mkdir()
    (final / "a").write_text("old")
    new.mkdir()
    (new / "b").write_text("new")
    atomic.swap_dir(new, final, old)
    assert [p.name for p in final.iterdir()] == ["b"] and not old.exists() and not new.exists()


def test_a_failed_swap_puts_the_old_folder_back(tmp_path):
    final, old = tmp_path / "final", tmp_path / ".final.old"
    final.mkdir()
    (final / "a").write_text("old")
    with pytest.raises(OSError):
        atomic.swap_dir(tmp_path / "missing", final, old)
    assert (final / "a").read_text() == "old" and not old.exists()


def test_write_bytes_is_whole(tmp_path):
    path = atomic.write_bytes(tmp_path / "sub" / "x.bin", b"\x00\xff")
    assert path.read_bytes() == b"\x00\xff" and [p.name for p in path.parent.iterdir()] == ["x.bin"]
