"""A finished sweep's outputs in one call (:func:`triangulation.suite.outputs.write_outputs`): the model sizes are
written whatever becomes of the report, and a report that cannot be made comes back as one line."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

from triangulation.suite.outputs import SIZES_HEADER, SuiteOutputs, write_outputs
from triangulation.suite.spec import load_suite


def _suite(tmp_path: Path, **report):
    data = {"models": [{"name": "chance", "model": "random", "size": 0.125}], "tasks": [{"play": "lnt"}]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({**data, **({"report": report} if report else {})}), encoding="utf-8")
    return load_suite(path)


def _sizes(root: Path) -> list[list[str]]:
    with open(root / "model_sizes.csv", newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_without_results_the_sizes_are_written_and_no_report_is_made(tmp_path, capsys):
    suite, root = _suite(tmp_path), tmp_path / "out"
    assert write_outputs(root, suite) == SuiteOutputs()
    assert "no results to report on" in capsys.readouterr().err
    assert _sizes(root) == [list(SIZES_HEADER), [suite.report_names[0], "0.125", "suite"]]
    assert not (root / "report").exists()


def test_a_report_that_fails_is_one_line_and_the_sizes_are_still_written(tmp_path):
    suite, root = _suite(tmp_path, external=["missing.csv"]), tmp_path / "out"
    outputs = write_outputs(root, suite)
    assert outputs.report is None and "missing.csv" in outputs.error and "\n" not in outputs.error
    assert _sizes(root)[1][1:] == ["0.125", "suite"]


def test_no_report_asked_for_writes_the_sizes_only(tmp_path):
    suite, root = _suite(tmp_path, external=["missing.csv"]), tmp_path / "out"
    assert write_outputs(root, suite, report=False) == SuiteOutputs()
    assert (root / "model_sizes.csv").is_file() and not (root / "report").exists()


def test_either_executor_closes_on_the_same_outputs(tmp_path, capsys):
    """The command writes a finished sweep's outputs once and the sweep, local or SLURM, says how it ended: every cell
    done but the report failing is exit 1 with the report's one line; without a report asked for, the cells decide."""
    from triangulation.suite.slurm import SweepState
    from triangulation.suite.spec import cells
    from triangulation.suite.status import Outcome, SuiteResult

    suite, root = _suite(tmp_path, external=["missing.csv"]), tmp_path / "out"
    failing = write_outputs(root, suite)
    done = SweepState(alive=set(), rows=[{"model": "chance", "task": "lnt", "status": "done", "detail": "", "job_id": "7"}])
    assert done.close(failing) == 1
    assert "suite: report failed:" in capsys.readouterr().err and (root / "model_sizes.csv").is_file()
    assert done.close(SuiteOutputs()) == 0
    assert SweepState(alive=set(), rows=[{**done.rows[0], "status": "failed"}]).close(SuiteOutputs()) == 1

    local = SuiteResult([Outcome(cells(suite)[0], "done")])
    assert local.close(failing) == 1
    err = capsys.readouterr().err
    assert "1 done" in err and "report failed: " in err
    assert SuiteResult([Outcome(local.outcomes[0].cell, "done")]).close(SuiteOutputs(report=root / "r.html")) == 0
    out = capsys.readouterr().out
    assert "1 done" in out and f"report: {root / 'r.html'}" in out


def test_the_report_gets_the_sizes_the_file_records(tmp_path, monkeypatch):
    """The sizes travel to the report as data, the values ``model_sizes.csv`` records (6 significant digits): a report
    made later from the file with ``--sizes`` draws the same Figure 1."""
    from triangulation.report.analyses.figures_triangulating import read_sizes
    from triangulation.suite import outputs

    path = tmp_path / "s.yaml"
    data = {"models": [{"name": "a", "model": "random", "size": 0.1345150083}], "tasks": [{"play": "lnt"}], "sizes": {"Big-7B": 7.2412345}}
    path.write_text(yaml.safe_dump({**data, "report": {"external": ["t.csv"]}}), encoding="utf-8")
    suite, root = load_suite(path), tmp_path / "out"
    given = {}
    monkeypatch.setattr(outputs, "make_report", lambda *a, **kw: given.update(kw) or root / "report.html")
    write_outputs(root, suite)
    assert given["sizes"] == read_sizes(root / "model_sizes.csv") == {suite.report_names[0]: 0.134515, "Big-7B": 7.24123}
