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


def test_a_merged_group_marker_is_written_by_the_sweep_as_every_cell_marker_with_the_facts_the_plan_made(tmp_path):
    """In process, no cell runs: both subtask cells finished (their results files and markers), the group is merged
    by :meth:`Sweep.run`, and its marker (written by the sweep's one recorder, as a cell's) names the merged file
    and records what the plan made for the group (its model key, requests in flight, work)."""
    from triangulation.suite.cells import marker_state, write_marker
    from triangulation.suite.placement import place
    from triangulation.suite.runner import Sweep
    from triangulation.suite.spec import load_suite
    from triangulation.suite.sweep_plan import plan_sweep

    data = {
        "defaults": {"limit": 1},
        "models": [scripted("alpha")],
        "tasks": [{"play": "cognitive_flexibility", "split": True, "name": "cf"}],
    }
    suite = load_suite(write_suite(tmp_path, data))
    out = tmp_path / "out"
    [run] = plan_sweep(suite, out, place(suite.models, [])).models
    assert [r.cell.task.name for r in run.work] == ["cf/wcst", "cf/lnt"] and set(run.groups) == {"alpha/cf"}
    for sub in run.work:
        leaf, name = sub.cell.task.tasks[0], "alpha/results_2026-01-01T00-00-00.000000.json"
        payload = {"results": {leaf: {"accuracy,none": 0.5}}, "n-samples": {leaf: {"original": 1, "effective": 1}}}
        (sub.folder / "alpha").mkdir(parents=True)
        (sub.folder / name).write_text(json.dumps({**payload, "higher_is_better": {leaf: {"accuracy": True}}}))
        write_marker(out, sub.cell, sub.facts, [name], 1.0, 1)
    [run] = plan_sweep(suite, out, place(suite.models, [])).models
    assert not run.work and set(run.finished) == {"alpha/cf/wcst", "alpha/cf/lnt"}
    [outcome] = Sweep(suite, out, ("false",), attempts=1).run(run)
    assert outcome.status == "done" and outcome.attempts == 0
    group = run.groups["alpha/cf"].cell
    marker = json.loads((out / "runs" / "alpha" / "cf" / ".suite_done.json").read_text())
    facts = run.group_facts["alpha/cf"]
    assert marker["results"] == list(outcome.results) and marker["fingerprint"] == group.fingerprint
    assert (marker["model_key"], marker["in_flight"], marker["work"]) == (facts.model_key, facts.in_flight, facts.work.as_json())
    assert marker_state(out, group).done
