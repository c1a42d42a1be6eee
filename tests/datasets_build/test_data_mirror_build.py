"""`triangulate data build` from a clean machine: every pinned file through a loopback raw-file mirror.

The mirror (tests/support/mirror.py) serves the files of ../shared/upstream at the manifests' commits;
``TRIANGULATE_UPSTREAM`` is unset, ``TRIANGULATE_SOURCE_URL`` points at the mirror and the cache starts
empty. The built folders must equal, byte for byte, a build from ``TRIANGULATE_UPSTREAM``; the tasks
then run on the mirror build. The build from ``TRIANGULATE_UPSTREAM`` records every file the builders
open (an audit hook): each must be pinned in a manifest.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from datasets_build import sources
from datasets_build.manifest import load_manifest, manifest_names
from tests.support.mirror import manifest_files, serve

pytestmark = pytest.mark.slow

_OPENED: set[str] | None = None


def _record_opens(event: str, args: tuple) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.add(os.path.realpath(os.fsdecode(args[0])))


sys.addaudithook(_record_opens)  # inert unless _OPENED is a set


def _build(out: Path) -> None:
    from triangulation.cli.main import main

    assert main(["data", "build", "--out", str(out)]) == 0


@pytest.fixture(scope="module")
def upstream_build(upstream, tmp_path_factory):
    """Every dataset built from TRIANGULATE_UPSTREAM, and the upstream files the builders opened."""
    global _OPENED
    out = tmp_path_factory.mktemp("from-upstream")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRIANGULATE_UPSTREAM", str(upstream))
        _OPENED = set()
        try:
            _build(out)
            opened = {p for p in _OPENED if p.startswith(str(upstream.resolve()) + os.sep)}
        finally:
            _OPENED = None
    return out, opened


@pytest.fixture(scope="module")
def mirror_build(upstream, tmp_path_factory):
    """Every dataset built with no TRIANGULATE_UPSTREAM, from a cold cache, through the loopback mirror."""
    out = tmp_path_factory.mktemp("from-mirror")
    cache = tmp_path_factory.mktemp("cache")
    with serve(manifest_files(upstream)) as mirror, pytest.MonkeyPatch.context() as mp:
        mp.delenv("TRIANGULATE_UPSTREAM", raising=False)
        mp.setenv("TRIANGULATE_SOURCE_URL", mirror.url)
        mp.setenv("TRIANGULATE_CACHE", str(cache))
        sources.reset()
        _build(out)
        hits = sum(mirror.hits.values())
    return out, cache, hits


def _tree(root: Path) -> dict[str, bytes]:
    """The built datasets' files (the build stamps, which record where the sources came from, left out)."""
    from datasets_build.stamps import STAMP_DIR

    files = (p for p in sorted(root.rglob("*")) if p.is_file() and STAMP_DIR not in p.relative_to(root).parts)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def test_mirror_build_is_byte_identical_to_the_upstream_build(upstream_build, mirror_build):
    ours, theirs = _tree(upstream_build[0]), _tree(mirror_build[0])
    assert sorted(ours) == sorted(theirs)
    assert any(name.endswith(".parquet") for name in ours)
    assert [name for name in ours if ours[name] != theirs[name]] == []


def test_mirror_build_fetched_each_pinned_file_of_the_builders_once(mirror_build):
    from datasets_build.registry import builders

    expected = sum(len(load_manifest(name).files) for name in builders())
    assert mirror_build[2] == expected
    assert not list(mirror_build[1].rglob("*.part"))


def test_every_file_the_builders_open_is_pinned(upstream, upstream_build):
    pinned = {(upstream / name / f.path).resolve().as_posix() for name in manifest_names() for f in load_manifest(name).files}
    lists = {(upstream / name / "MISSING.txt").resolve().as_posix() for name in manifest_names() if load_manifest(name).absent}
    opened = upstream_build[1]
    assert len(opened) > 600
    assert sorted(p for p in opened if p not in pinned | lists) == []


def test_play_and_eval_run_on_the_mirror_build(mirror_build, tmp_path, monkeypatch, capsys):
    from tests.support.built_data import _clear_prompt_caches
    from tests.support.engine_helpers import register_test_task_and_model
    from triangulation.cli.main import main

    monkeypatch.delenv("TRIANGULATE_UPSTREAM", raising=False)
    monkeypatch.setenv("TRIANGULATE_DATA", str(mirror_build[0]))
    _clear_prompt_caches()
    register_test_task_and_model()
    play = ["play", "--model", "scripted-count", "--tasks", "nback_verbal_1,taboo", "--limit", "1", "--output_path", str(tmp_path / "play")]
    assert main(play) == 0, capsys.readouterr().err
    played = capsys.readouterr().out
    assert "nback_verbal_1" in played and "taboo" in played
    assert main(["eval", "--model", "dummy", "--tasks", "globalgroup_zh", "--limit", "1", "--output_path", str(tmp_path / "eval")]) == 0
    assert "globalgroup_zh" in capsys.readouterr().out
    assert list((tmp_path / "eval").rglob("results_*.json")), "lm-eval wrote no results"
