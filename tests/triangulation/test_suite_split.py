"""Split group cells (issue 29): a `split: true` group entry runs one cell per subtask, each resumable on its
own, merged back into one results entry per group that equals the unsplit run's; lm-eval groups aggregate
as lm-eval does (size-weighted, nested groups bottom up)."""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

from plumbing import run_folder
from tests.triangulation.test_suite import run_suite_cli, scripted, status, write_suite
from triangulation.suite.split import _eval_group


def _latest(folder):
    files = sorted(folder.rglob(run_folder.RESULTS_GLOB), key=lambda p: p.stat().st_mtime)
    return json.loads(files[-1].read_text())


def test_a_split_play_group_runs_per_subtask_resumes_per_subtask_and_merges_as_the_whole(tmp_path):
    suite = write_suite(
        tmp_path,
        {
            "defaults": {"limit": 1, "seed": 5},
            "models": [scripted("alpha")],
            "tasks": [
                {"play": "cognitive_flexibility", "split": True, "name": "cf_split"},
                {"play": "cognitive_flexibility", "name": "cf_whole"},
            ],
        },
    )
    out, log = tmp_path / "out", tmp_path / "work.log"
    result = run_suite_cli(suite, out, log, "--no_report")
    assert result.returncode == 0, result.stderr[-3000:]
    assert status(out) == {"alpha/cf_split": "done", "alpha/cf_whole": "done"}
    cell = out / "runs" / "alpha" / "cf_split"
    assert (cell / "wcst" / ".suite_done.json").is_file() and (cell / "lnt" / ".suite_done.json").is_file()
    merged, whole = _latest(cell / "merged"), _latest(out / "runs" / "alpha" / "cf_whole")
    assert set(merged["results"]) == set(whole["results"]) == {"cognitive_flexibility", "wcst", "lnt"}
    group = {k: v for k, v in merged["results"]["cognitive_flexibility"].items() if k.endswith(",none")}
    assert group and group == {k: v for k, v in whole["results"]["cognitive_flexibility"].items() if k.endswith(",none")}
    assert merged["group_subtasks"]["cognitive_flexibility"] == ["wcst", "lnt"]
    # resume per subtask: lnt's cell lost (as if killed before it finished), only lnt runs again
    shutil.rmtree(cell / "lnt")
    (cell / ".suite_done.json").unlink()
    wcst_marker = (cell / "wcst" / ".suite_done.json").read_text()
    before = len(log.read_text().splitlines())
    result = run_suite_cli(suite, out, log, "--no_report")
    assert result.returncode == 0, result.stderr[-3000:]
    assert status(out) == {"alpha/cf_split": "done", "alpha/cf_whole": "skipped-done"}
    assert (cell / "wcst" / ".suite_done.json").read_text() == wcst_marker
    assert len(log.read_text().splitlines()) > before and (cell / ".suite_done.json").is_file()


def _entry(kind: str, **cfg):
    return SimpleNamespace(kind=SimpleNamespace(name=kind), cfg=cfg)


def test_lm_eval_groups_merge_size_weighted_and_nested():
    index = {
        "top": _entry("GROUP", group="top", task=["cat_a", "leaf_c"], aggregate_metric_list=[{"metric": "acc", "weight_by_size": True}]),
        "cat_a": _entry("GROUP", group="cat_a", group_alias="a", task=["leaf_a", "leaf_b"], aggregate_metric_list=[{"metric": "acc"}]),
        "plain": _entry(
            "GROUP", group="plain", task=["leaf_a", "leaf_c"], aggregate_metric_list=[{"metric": "acc", "weight_by_size": False}]
        ),
        "leaf_a": _entry("TASK"),
        "leaf_b": _entry("TASK"),
        "leaf_c": _entry("TASK"),
    }
    results = {
        "leaf_a": {"acc,none": 1.0, "acc_stderr,none": 0.0},
        "leaf_b": {"acc,none": 0.0, "acc_stderr,none": 0.0},
        "leaf_c": {"acc,none": 0.5, "acc_stderr,none": 0.1},
    }
    sizes = {"leaf_a": 30, "leaf_b": 10, "leaf_c": 60}
    out = {"results": dict(results), "groups": {}, "group_subtasks": {}, "n-samples": {k: {"effective": n} for k, n in sizes.items()}}
    assert _eval_group(out, "top", index, 0) == 100
    assert out["results"]["cat_a"]["acc,none"] == 0.75  # (30 * 1 + 10 * 0) / 40
    assert abs(out["results"]["top"]["acc,none"] - 0.6) < 1e-12  # (40 * 0.75 + 60 * 0.5) / 100: weighted, bottom up
    assert out["results"]["cat_a"]["alias"] == "a" and out["group_subtasks"]["top"] == ["cat_a", "leaf_c"]
    assert "top" in out["groups"]
    _eval_group(out, "plain", index, 0)
    assert out["results"]["plain"]["acc,none"] == 0.75  # unweighted mean of 1.0 and 0.5
