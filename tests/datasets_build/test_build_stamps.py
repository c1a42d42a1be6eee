"""`triangulate data build` skips a dataset whose inputs did not change (issue 32): a second build of an
unchanged source is a no-op; a changed upstream file, a damaged output folder or --rebuild build it again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from triangulation.cli.main import main


@pytest.fixture
def splat_upstream(upstream, tmp_path, monkeypatch) -> Path:
    """A private copy of upstream ``splat`` (the smallest source) as $TRIANGULATE_UPSTREAM."""
    root = tmp_path / "upstream"
    shutil.copytree(Path(upstream) / "splat", root / "splat")
    monkeypatch.setenv("TRIANGULATE_UPSTREAM", str(root))
    return root


def build(out: Path, capsys, *extra: str) -> str:
    assert main(["data", "build", "--datasets", "splat", "--out", str(out), *extra]) == 0
    return capsys.readouterr().out


def test_an_unchanged_dataset_is_skipped_and_a_changed_input_rebuilds_it(splat_upstream, tmp_path, capsys):
    out = tmp_path / "data"
    assert "built 1 dataset(s) in" in build(out, capsys)
    parquet = next((out / "splat").rglob("*.parquet"))
    before = parquet.stat().st_mtime_ns
    second = build(out, capsys)
    assert "splat" in second and "unchanged since its last build" in second and "built 0 dataset(s) in" in second
    assert parquet.stat().st_mtime_ns == before  # nothing written

    source = next(p for p in (splat_upstream / "splat").rglob("*") if p.is_file())
    os.utime(source, ns=(source.stat().st_atime_ns, source.stat().st_mtime_ns + 10**9))  # an upstream file changed
    assert "built 1 dataset(s) in" in build(out, capsys)
    assert "1 unchanged since their last build" in build(out, capsys)

    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = out / f".splat.building-{dead.pid}-deadbeef"  # left by a killed build
    stale.mkdir()
    assert "1 unchanged since their last build" in build(out, capsys) and not stale.exists()  # removed though nothing was rebuilt

    next((out / "splat").rglob("*.parquet")).unlink()  # the output folder was damaged
    assert "built 1 dataset(s) in" in build(out, capsys)
    assert "built 1 dataset(s) in" in build(out, capsys, "--rebuild")


def test_a_code_change_rebuilds(splat_upstream, tmp_path, capsys, monkeypatch):
    from datasets_build import stamps

    out = tmp_path / "data"
    build(out, capsys)
    monkeypatch.setattr(stamps, "code_fingerprint", lambda: "other builder code")
    assert "built 1 dataset(s) in" in build(out, capsys)
