"""A suite's ``include_path:`` (issue 43 item 8): a lab's own lm-eval task folder joins a sweep. The suite's task
index, the plan, the preflight, ``split: true`` and the served endpoint's choice read the folder; every eval cell
passes it to lm-eval as ``--include_path``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from plumbing.errors import UserError
from tests.support.user_tasks import DOCS, GROUP, write_user_tasks
from triangulation.suite import split, task_index
from triangulation.suite.cells import cell_argv, needs_completions
from triangulation.suite.preflight import Findings, task_checks
from triangulation.suite.spec import TaskEntry, cells, load_suite

ROOT = Path(__file__).resolve().parents[2]


def _suite(tmp_path: Path, include, tasks=None) -> Path:
    data = {
        "include_path": include,
        "defaults": {"limit": 2, "seed": 3},
        "models": [{"name": "chance", "model": "random"}],
        "tasks": tasks or [{"eval": GROUP, "split": True}, {"eval": "lab_sums", "name": "sums"}, {"play": "wcst", "limit": 1}],
    }
    path = tmp_path / "suites" / "lab.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def lab(tmp_path) -> Path:
    return write_user_tasks(tmp_path / "lab_tasks")


def test_include_path_is_relative_to_the_suite_file_and_reaches_every_eval_cell(lab, tmp_path):
    suite = load_suite(_suite(tmp_path, "../lab_tasks"))
    assert suite.include_path == (str(lab.resolve()),)
    by_name = {t.name: t for t in suite.tasks}
    assert by_name[GROUP].include_path == by_name["sums"].include_path == (str(lab.resolve()),)
    assert by_name["wcst"].include_path == ()  # play tasks come from the side runner's registry
    argv = {c.task.name: cell_argv(c, tmp_path / "out") for c in cells(suite)}
    assert argv["sums"][argv["sums"].index("--include_path") + 1] == str(lab.resolve())
    assert "--include_path" not in argv["wcst"]
    # a list, and an absolute path, say the same; a cell's fingerprint does not depend on where the folder is
    again = load_suite(_suite(tmp_path, [str(lab), "../lab_tasks"]))
    assert again.include_path == suite.include_path
    assert [c.fingerprint for c in cells(again)] == [c.fingerprint for c in cells(suite)]


@pytest.mark.parametrize(
    "value, message",
    [("../nowhere", "include_path: ../nowhere: no such folder or file"), ([], "must be a path or a list"), ({"a": 1}, "must be a path")],
)
def test_a_bad_include_path_is_one_line(tmp_path, value, message):
    with pytest.raises(UserError, match=message):
        load_suite(_suite(tmp_path, value))


def test_the_task_index_split_and_endpoint_choice_read_the_users_folder(lab, tmp_path):
    include = (str(lab.resolve()),)
    assert task_index.entry(GROUP) is None and task_index.entry(GROUP, include) is not None
    assert task_index.eval_leaves([GROUP], include) == list(DOCS)
    assert task_index.split_refusal(GROUP, include) is None
    assert task_index.output_types(GROUP, include) == {"multiple_choice"}
    assert needs_completions(TaskEntry(GROUP, "eval", (GROUP,), include_path=include))  # loglikelihoods: a served model's /v1/completions
    suite = load_suite(_suite(tmp_path, "../lab_tasks"))
    group_cell = next(c for c in cells(suite) if c.task.name == GROUP)
    subcells = split.subtask_cells(group_cell)
    assert [c.task.name for c in subcells] == [f"{GROUP}/{leaf}" for leaf in DOCS]
    assert all(c.task.include_path == include for c in subcells)
    assert all(cell_argv(c, tmp_path)[cell_argv(c, tmp_path).index("--include_path") + 1] == include[0] for c in subcells)


def test_preflight_finds_the_users_tasks_and_checks_their_local_data_files(lab, tmp_path):
    suite = load_suite(_suite(tmp_path, "../lab_tasks"))
    found = Findings()
    task_checks(suite, found)
    assert found.problems == []
    (lab / "data" / "lab_sums.jsonl").unlink()
    found = Findings()
    task_checks(suite, found)
    assert len(found.problems) == 1 and "task lab_sums" in found.problems[0] and "lab_sums.jsonl is not there" in found.problems[0]
    found = Findings()  # without include_path lm-eval knows neither name
    task_checks(load_suite(_suite(tmp_path, None)), found)
    assert any(f"lm-eval knows no task, group or tag '{GROUP}'" in p for p in found.problems)


def _suite_cli(suite: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "--output_path", str(out), *extra]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_a_sweep_with_a_users_task_folder_checks_plans_splits_and_merges_it(lab, tmp_path):
    suite = _suite(tmp_path, "../lab_tasks", [{"eval": GROUP, "split": True}, {"eval": "lab_sums", "name": "sums"}])
    out = tmp_path / "out"
    check = _suite_cli(suite, out, "--check")
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    dry = _suite_cli(suite, out, "--dry_run")
    assert dry.returncode == 0, dry.stderr[-3000:]
    plan = json.loads((out / "suite_plan.json").read_text())
    group_plan = plan["models"][0]["cells"][0]
    assert f"--include_path {lab.resolve()}" in group_plan["command"]
    assert group_plan["requests"] == sum(min(2, len(docs)) * len(docs[0]["choices"]) for docs in DOCS.values())  # lm-eval built them
    run = _suite_cli(suite, out, "--no_report")
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {c["cell"]: c["status"] for c in json.loads((out / "suite_status.json").read_text())["cells"]}
    assert rows == {f"chance/{GROUP}": "done", "chance/sums": "done"}
    group = out / "runs" / "chance" / GROUP
    for leaf in DOCS:
        assert (group / leaf / ".suite_done.json").is_file()
    [merged] = (group / "merged").rglob("results_*.json")
    payload = json.loads(merged.read_text())
    assert payload["group_subtasks"][GROUP] == list(DOCS)
    n = {leaf: payload["n-samples"][leaf]["effective"] for leaf in DOCS}
    assert n == {leaf: min(2, len(docs)) for leaf, docs in DOCS.items()}
    accs = {leaf: payload["results"][leaf]["acc,none"] for leaf in DOCS}
    expected = sum(accs[leaf] * n[leaf] for leaf in DOCS) / sum(n.values())  # size-weighted, as the group says
    assert payload["results"][GROUP]["acc,none"] == pytest.approx(expected)
    [sums] = (out / "runs" / "chance" / "sums").rglob("results_*.json")
    assert json.loads(sums.read_text())["n-samples"]["lab_sums"]["effective"] == 2
