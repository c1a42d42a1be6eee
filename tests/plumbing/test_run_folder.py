"""The run-folder layout (plumbing.run_folder): names, discovery, the latest results, one results reader."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plumbing import run_folder
from plumbing.errors import UserError

RUN_V1 = Path(__file__).resolve().parents[1] / "support" / "run_folder_v1"


def _results(folder: Path, name: str, tasks: list[str], mtime: float) -> Path:
    path = folder / name
    path.write_text(json.dumps({"results": {t: {"acc,none": 1.0} for t in tasks}, "config": {"model": "m"}}), encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


def test_names_round_trip_through_discovery(tmp_path):
    model = run_folder.model_dir(tmp_path, "org__m")
    model.mkdir()
    for path in (run_folder.episodes_path(model, "wcst"), run_folder.episodes_path(model, "wcst", rank=1)):
        path.write_text("{}\n", encoding="utf-8")
    (model / "samples_mmlu_2024-01-01T00-00-00.000001.jsonl").write_text("{}\n", encoding="utf-8")
    (model / "samples_mmlu_2024-02-01T00-00-00.000001.jsonl").write_text("{}\n", encoding="utf-8")
    results = run_folder.new_results_path(model)
    _results(model, results.name, ["wcst", "mmlu"], 1_000)
    assert run_folder.is_results_file(results) and run_folder.results_date(results) == results.stem[len("results_") :]
    assert run_folder.play_tasks(model) == ["wcst"]  # the rank part is not a task
    assert [p.name for p in run_folder.rank_parts(model, "wcst")] == ["episodes_wcst.rank1.jsonl"]
    assert run_folder.samples_files(model) == {"mmlu": model / "samples_mmlu_2024-02-01T00-00-00.000001.jsonl"}
    assert run_folder.samples_files(model, ["other"]) == {}
    assert run_folder.model_dirs(tmp_path) == [model] and run_folder.results_files(tmp_path) == [results]
    kinds = sorted((task, kind, path.name) for task, kind, path in run_folder.record_files([tmp_path]))
    assert kinds == [("mmlu", "samples", "samples_mmlu_2024-02-01T00-00-00.000001.jsonl"), ("wcst", "play", "episodes_wcst.jsonl")]
    stored = run_folder.ResultsFile.read(results)
    assert stored.path == results and stored.date == run_folder.results_date(results) and set(stored.results) == {"wcst", "mmlu"}
    assert stored.records_file("wcst") == run_folder.episodes_path(model, "wcst")
    assert stored.records_file("mmlu") is None  # no samples file of this results file's date
    older_path = model / "results_2024-01-01T00-00-00.000001.json"
    older = run_folder.ResultsFile(older_path, stored.data, run_folder.files_beside(older_path))
    assert older.records_file("mmlu").name.startswith("samples_mmlu_2024-01")
    assert older.records_file("nope") is None


def test_latest_results_is_the_newest_file_reporting_the_task_and_skips_foreign_files(tmp_path):
    _results(tmp_path, "results_a.json", ["wcst"], 1_000)
    _results(tmp_path, "results_b.json", ["mmlu"], 2_000)
    foreign = tmp_path / "results_c.json"
    foreign.write_text("[1, 2]", encoding="utf-8")
    os.utime(foreign, (3_000, 3_000))
    assert list(run_folder.latest_results(tmp_path).results) == ["mmlu"]
    assert run_folder.latest_results(tmp_path, ["wcst"]).path == tmp_path / "results_a.json"
    assert run_folder.latest_results(tmp_path, ["lnt"]) is None
    assert [f.path.name for f in run_folder.newest_first(tmp_path.glob("results_*.json"))] == ["results_b.json", "results_a.json"]
    with pytest.raises(UserError, match="not an lm-eval results file"):
        run_folder.ResultsFile.read(foreign)
    with pytest.raises(UserError, match=r"cannot read results file .*results_d\.json: malformed JSON"):
        (tmp_path / "results_d.json").write_text("{", encoding="utf-8")
        run_folder.ResultsFile.read(tmp_path / "results_d.json")


def test_missing_folders_are_one_line_errors(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        run_folder.results_files(tmp_path / "nope")
    with pytest.raises(UserError, match="no results_"):
        run_folder.results_files(tmp_path)
    with pytest.raises(UserError, match="no results with episodes_"):
        run_folder.model_dirs(tmp_path)


def test_the_committed_old_run_folder_is_discovered():
    model = RUN_V1 / "random"
    assert run_folder.model_dirs(RUN_V1) == [model]
    assert "wcst" in run_folder.play_tasks(model) and run_folder.latest_results(model, ["wcst"]).config["model"] == "random"


def test_a_released_lock_leaves_no_lock_file_and_a_waiter_locks_the_new_file(tmp_path):
    """Issue 43 item 11: run folders keep no ``*.lock`` files; the unlink-while-locked protocol stays exclusive."""
    import threading
    import time

    from plumbing.locks import RunLock

    target = tmp_path / "episodes.jsonl"
    held = RunLock(target).acquire()
    order: list[str] = []

    def waiter():
        with RunLock(target, wait=True) as lock:
            order.append("waiter")
            assert lock.path.is_file() and lock._names_file(lock._fh)  # it holds the file the path names

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.3)  # the waiter blocks on the first holder's file
    order.append("holder")
    held.release()
    thread.join(timeout=30)
    assert order == ["holder", "waiter"]
    assert not list(tmp_path.glob("*.lock"))
