"""The bottom layer: Registry, JSON/JSONL reading, means, paths."""

from __future__ import annotations

import math

import pytest

from plumbing.errors import UserError
from plumbing.jsonio import read_json, read_jsonl, torn_last_lines
from plumbing.output_dirs import ensure_output_dir
from plumbing.paths import dataset_dir, upstream_dir
from plumbing.registry import Registry
from plumbing.stats import mean_of_keys, nanmean


def test_registry_imports_listed_modules_and_fails_loudly_on_a_missing_one():
    reg: Registry[int] = Registry("thing", modules=("json", "no_such_module_for_triangulate"))
    with pytest.raises(ModuleNotFoundError):
        reg.names()


def test_registry_rejects_duplicates_and_names_known_entries():
    reg: Registry[int] = Registry("thing")
    reg.register("a")(1)
    reg.add("b", 2)
    with pytest.raises(ValueError, match="registered twice"):
        reg.add("a", 3)
    assert reg.names() == ["a", "b"] and "a" in reg and "c" not in reg
    with pytest.raises(UserError, match="unknown thing 'c'; known: a, b"):
        reg.get("c")


def test_read_jsonl_skips_and_counts_a_torn_last_line_and_names_file_and_line_of_any_other(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n{"a": 3', encoding="utf-8")
    records = read_jsonl(path)
    assert records == [{"a": 1}, {"a": 2}] and records.skipped == 1 and records.path == path  # the reader returns the count
    torn = torn_last_lines([path, path])  # a file named twice counts once
    assert torn == {path: 1} and torn.count == 1 and "1 torn last line skipped" in torn.describe()
    whole = tmp_path / "whole.jsonl"
    whole.write_text('{"a": 1}\n' * 30000 + "\n\n", encoding="utf-8")  # a tail longer than one block, blank lines last
    assert read_jsonl(whole).skipped == 0 and torn_last_lines([whole]) == {}
    path.write_text('{"a": 1}\nnot json\n{"a": 2}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"e\.jsonl:2: not valid JSON"):
        read_jsonl(path)  # only the LAST line may be cut off
    path.write_text('{"a": 1}\n[1, 2]\n{"a": 2}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"e\.jsonl:2: not a JSON object"):
        read_jsonl(path)
    path.write_text('{"a": 1}\n{"a": 2}\n\n', encoding="utf-8")
    assert read_jsonl(path).skipped == 0
    with pytest.raises(UserError, match="cannot read"):
        read_jsonl(tmp_path / "missing.jsonl")
    assert read_jsonl(tmp_path / "missing.jsonl", missing_ok=True) == []


def test_read_json_errors_are_one_line(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        read_json(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(UserError, match="malformed JSON"):
        read_json(bad)


def test_means_skip_nan_and_none():
    assert nanmean([1.0, float("nan"), None, 3]) == 2.0
    assert math.isnan(nanmean([]))
    out = mean_of_keys([{"a": 1.0}, {"a": 3.0, "b": float("nan")}])
    assert out["a"] == 2.0 and math.isnan(out["b"])


def test_paths_name_the_build_command_and_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path))
    with pytest.raises(UserError, match="triangulate data build"):
        dataset_dir("nback")
    monkeypatch.delenv("TRIANGULATE_UPSTREAM", raising=False)
    with pytest.raises(UserError, match="set TRIANGULATE_UPSTREAM"):
        upstream_dir("nback")
    target = tmp_path / "file"
    target.write_text("x", encoding="utf-8")
    with pytest.raises(UserError, match="--out .* is not a writable folder"):
        ensure_output_dir(target, "--out")
