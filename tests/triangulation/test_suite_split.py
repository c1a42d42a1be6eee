"""Split group cells (issue 29): a `split: true` group entry runs one cell per subtask, each resumable on its
own, merged back into one results entry per group that equals the unsplit run's; lm-eval groups aggregate
as lm-eval does (size-weighted, nested groups bottom up)."""

from __future__ import annotations

import json
import shutil

from plumbing import run_folder
from tests.triangulation.test_suite import run_suite_cli, scripted, status, write_suite


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
    for key in ("groups", "group_subtasks", "n-samples", "higher_is_better", "versions"):  # the group's too (was {} in higher_is_better)
        assert merged[key] == whole[key], key
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
