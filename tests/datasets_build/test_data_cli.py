"""`triangulate data build` end to end (cheap dataset) and the loaders' errors."""

from __future__ import annotations

import re

import pytest

from datasets_build.load import load_connections, load_globalgroup
from plumbing.errors import UserError
from triangulation.cli.main import main


def test_build_prints_configs_rows_seconds_and_wall_time(upstream, tmp_path, capsys):
    out = tmp_path / "data"
    assert main(["data", "build", "--datasets", "connections", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"^connections\s+configs=\s*1 rows=\s*441\s+\d+\.\d s", printed, re.M), printed
    assert re.search(r"built 1 dataset\(s\) in \d+\.\d s wall time", printed)
    assert sorted(p.name for p in out.iterdir()) == [".triangulate-build", "connections"]  # no temporary folder left; the build stamps
    assert len(load_connections(path=out / "connections")["test"]) == 438


def test_loaders_find_the_build_under_triangulate_data(upstream, tmp_path, monkeypatch):
    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path))
    with pytest.raises(UserError, match="triangulate data build"):
        load_connections()
    with pytest.raises(UserError, match="triangulate data build"):
        load_globalgroup("en_4x4", some_lm_eval_metadata=1)  # lm-eval passes **metadata
    assert main(["data", "build", "--datasets", "connections"]) == 0
    assert len(load_connections(version=1.0)["fewshot"]) == 3
    with pytest.raises(UserError, match="unknown connections config 'nope'.*available: default"):
        load_connections("nope")


def test_unknown_dataset_is_one_line_error(capsys):
    assert main(["data", "build", "--datasets", "connections,nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("triangulate: error: unknown dataset nope; available:") and "\n" not in err
