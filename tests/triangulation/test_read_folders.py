"""The report's reading edge reads its folders whole in one pass (:func:`plumbing.run_folder.read_folders`): every
results file and every per-sample file once, play's episode records decoded by play's own rule."""

from __future__ import annotations

from collections import Counter

import pytest

from plumbing import run_folder
from plumbing.errors import UserError
from tests.triangulation.test_report_fakes import three_model_results
from triangulation.runs.results_io import read_runs


def test_every_file_under_the_folders_is_read_once(tmp_path, monkeypatch):
    three_model_results(tmp_path)
    opened: Counter = Counter()
    for name in ("read_json", "read_jsonl"):
        real = getattr(run_folder, name)
        monkeypatch.setattr(run_folder, name, lambda path, *a, _real=real, **k: opened.update([path]) or _real(path, *a, **k))
    read = read_runs([tmp_path / "lm_eval", tmp_path / "play"])
    on_disk = {*tmp_path.rglob("results_*.json"), *tmp_path.rglob("*.jsonl")}
    assert set(opened) == on_disk and set(opened.values()) == {1}
    assert set(read.records) == {p for p in on_disk if p.suffix == ".jsonl"}
    assert {r.model for r in read.runs} == {"scripted/oracle", "scripted/chunker", "scripted-half"}


def test_a_play_record_that_is_no_episode_is_an_error_naming_file_and_line(tmp_path):
    three_model_results(tmp_path)
    broken = next((tmp_path / "play").rglob("episodes_taboo.jsonl"))
    broken.write_text('{"scores": {}}\n{"id": "taboo_1", "scores": {}}\n', encoding="utf-8")
    with pytest.raises(UserError, match=rf"{broken}:1: not an episode record"):
        read_runs([tmp_path / "play"])
