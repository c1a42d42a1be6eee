"""Issue 39 items 5, 6, 7, 8, 10, 12, 15: one episode set per leaderboard cell, split merges by what the done-markers
name, no stale merged group, server errors neither cached nor done, duplicate leaderboard rows refused, a finished
play cell without its marker done on rerun, retry bounds checked at load time."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pandas as pd
import pytest

from plumbing import run_folder
from plumbing.errors import UserError
from tests.support.fake_chat import FakeChatServer
from tests.triangulation.test_suite import run_suite_cli, scripted, status, write_suite
from triangulation.cli.main import main


def _play(out: Path, limit: str) -> list[str]:
    return ["play", "--model", "random", "--tasks", "wcst", "--limit", limit, "--output_path", str(out)]


def test_a_cells_score_and_n_come_from_the_same_episodes(tmp_path):
    """Item 5 (fails on the old main: after a ``--limit 2`` rerun of a ``--limit 4`` run the score came from the 2
    episodes of the newest results file, n and the interval from all 4 stored episodes)."""
    from triangulation.report.cells import cells
    from triangulation.runs.results_io import read_run

    assert main(_play(tmp_path, "4")) == 0
    assert main(_play(tmp_path, "2")) == 0
    folder = tmp_path / "random"
    newest = max(folder.glob(run_folder.RESULTS_GLOB), key=lambda p: p.name)  # the date in the name
    data = json.loads(newest.read_text(encoding="utf-8"))
    assert data["n-samples"]["wcst"]["effective"] == 2
    assert len(next(folder.glob("episodes_wcst.jsonl")).read_text(encoding="utf-8").splitlines()) == 4
    run = read_run(newest)
    cell = cells([run], {"wcst"})[(run.model, "wcst")]
    assert cell.n == 2


def _metrics(results: dict, task: str) -> dict:
    return {k: v for k, v in results["results"][task].items() if k.endswith(",none") and "stderr" not in k}


def test_split_merge_takes_what_the_markers_name_and_drops_a_stale_merged_group(tmp_path):
    """Items 6 and 7 (fail on the old main: the merge took each subtask's newest results file by mtime, so a copied
    file of an earlier configuration was merged and marked done; a rerun under another configuration left the old
    merged group beside the new subtasks)."""
    from triangulation.suite.placement import place
    from triangulation.suite.runner import Sweep
    from triangulation.suite.spec import load_suite
    from triangulation.suite.sweep_plan import plan_sweep

    data = {
        "defaults": {"limit": 1, "seed": 5},
        "models": [scripted("alpha")],
        "tasks": [{"play": "cognitive_flexibility", "split": True, "name": "cf"}],
    }
    suite = write_suite(tmp_path, data)
    out, log = tmp_path / "out", tmp_path / "work.log"
    result = run_suite_cli(suite, out, log, "--no_report")
    assert result.returncode == 0, result.stderr[-3000:]
    cell = out / "runs" / "alpha" / "cf"
    wcst = cell / "wcst"
    [marked] = [wcst / f for f in json.loads((wcst / ".suite_done.json").read_text())["results"]]
    good = json.loads(marked.read_text())
    old = json.loads(json.dumps(good))  # an earlier configuration's file, copied in later (a new mtime)
    for key in _metrics(old, "wcst"):
        old["results"]["wcst"][key] = 0.123
    (marked.parent / "results_2000-01-01T00-00-00.000000.json").write_text(json.dumps(old))
    (cell / ".suite_done.json").unlink()  # the group merges again
    result = run_suite_cli(suite, out, log, "--no_report")
    assert result.returncode == 0, result.stderr[-3000:]
    merged_files = sorted((cell / "merged").rglob(run_folder.RESULTS_GLOB), key=lambda p: p.name)
    assert len(merged_files) == 1  # the merge of the group's earlier marker is gone with it
    merged = json.loads(merged_files[-1].read_text())
    assert _metrics(merged, "wcst") == _metrics(good, "wcst") and 0.123 not in _metrics(merged, "wcst").values()

    data["defaults"]["seed"] = 6  # another configuration: until its subtasks are merged, no old merged group
    suite = write_suite(tmp_path, data)
    sweep = plan_sweep(loaded := load_suite(suite), out, place(loaded.models, []))
    [run] = sweep.models
    assert {r.cell.task.name for r in run.work} == {"cf/wcst", "cf/lnt"} and run.stale_merges == [cell / "merged"]
    outcomes = Sweep(sweep.suite, out, ("false",), attempts=1).run(run)  # the subtasks fail: nothing merges
    assert [o.status for o in outcomes] == ["failed"] and not (cell / "merged").exists()


def test_a_finished_play_cell_whose_marker_was_lost_is_done_on_rerun(tmp_path):
    """Item 12 (fails on the old main: the child found every episode played, wrote no new results file, and the cell
    failed with "exited 0 but wrote no results" on every rerun)."""
    suite = write_suite(tmp_path, {"defaults": {"limit": 1}, "models": [scripted("alpha")], "tasks": [{"play": "wcst"}]})
    out, log = tmp_path / "out", tmp_path / "work.log"
    result = run_suite_cli(suite, out, log, "--no_report")
    assert result.returncode == 0, result.stderr[-3000:]
    marker = out / "runs" / "alpha" / "wcst" / ".suite_done.json"
    named = json.loads(marker.read_text())["results"]
    marker.unlink()  # killed after the child finished, before the marker was written
    result = run_suite_cli(suite, out, log, "--no_report")
    assert result.returncode == 0, result.stderr[-3000:]
    assert status(out) == {"alpha/wcst": "done"} and json.loads(marker.read_text())["results"] == named


def test_server_errors_are_never_cached(tmp_path):
    """Item 8, the cache (fails on the old main: the empty sample lm-eval makes of an error body was stored in the
    request cache, so a healthy rerun replayed it)."""
    from lm_eval.api.instance import Instance
    from lm_eval.api.model import CachingLM

    from models.api import SERVER_ERRORS, ErrorReply, EvalChatCompletionsLM
    from triangulation.cli.eval import install_scrubbing_request_cache

    SERVER_ERRORS.clear()
    lm = EvalChatCompletionsLM.__new__(EvalChatCompletionsLM)  # parse_generations reads no state but think_end_token
    lm.think_end_token = None
    replies = lm.parse_generations([{"error": {"message": "overloaded"}}, {"choices": [{"index": 0, "message": {"content": "ok"}}]}])
    assert replies == ["", "ok"] and isinstance(replies[0], ErrorReply) and len(SERVER_ERRORS) == 1

    class Replies:  # a model that answers what it is given
        def __init__(self, answers):
            self.answers = answers

        def set_cache_hook(self, hook):
            pass

        def generate_until(self, requests):
            return self.answers[: len(requests)]

    install_scrubbing_request_cache()
    request = [Instance("generate_until", {}, ("q", {"until": []}), 0)]
    cached = CachingLM(Replies([ErrorReply("")]), str(tmp_path / "cache.db"))
    assert cached.generate_until(request) == [""]
    cached.dbdict.close()
    cached = CachingLM(Replies(["healthy"]), str(tmp_path / "cache.db"))
    assert cached.generate_until(request) == ["healthy"]  # asked again, not replayed
    cached.dbdict.close()
    SERVER_ERRORS.clear()


@pytest.mark.slow
def test_an_eval_whose_server_answered_errors_is_failed_and_a_healthy_rerun_asks_again(tmp_path, built_data, capsys):
    """Item 8 end to end (fails on the old main: exit 0 with a results file scoring the errors, and the rerun replayed
    them from ``--use_cache``)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    asked = []
    with FakeChatServer('"1"', body='{"error": {"message": "model overloaded"}}', on_request=lambda *a: asked.append(1)) as server:
        argv = ["eval", "--model", "local-chat-completions", "--model_args", f"model=fake,base_url={server.url()},tokenizer_backend=None"]
        argv += ["--apply_chat_template", "--tasks", "globalgroup_zh", "--limit", "1", "--log_samples", "--output_path", str(tmp_path)]
        argv += ["--use_cache", str(tmp_path / "cache")]
        assert main(argv) == 1
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.startswith("triangulate: error: the server answered") and "model overloaded" in err
        assert not list(tmp_path.rglob(run_folder.RESULTS_GLOB)) and list(tmp_path.rglob("results_*.json.server_errors"))
        server.body = None
        before = len(asked)
        assert main(argv) == 0
        assert len(asked) > before  # the healthy server was asked: no error replayed from the cache
    [results] = list(tmp_path.rglob(run_folder.RESULTS_GLOB))
    assert "globalgroup_zh" in json.loads(results.read_text())["results"]


def test_duplicate_leaderboard_rows_with_different_scores_are_refused(tmp_path):
    """Item 10 (fails on the old main: the first of two ``fullname`` rows was kept silently)."""
    from triangulation.report.external import read_external

    path = tmp_path / "contents.csv"
    frame = pd.DataFrame(
        {"fullname": ["org/a", "org/a", "org/b", "org/b"], "IFEval": [70.0, 50.0, 40.0, 40.0], "BBH": [1.0, 2.0, 3.0, 3.0]}
    )
    frame.to_csv(path, index=False)
    with pytest.raises(UserError, match=r"1 fullname value\(s\) on several rows with different scores \('org/a'\)"):
        read_external(f"olb={path}")
    frame.iloc[[0, 2, 3]].to_csv(path, index=False)  # a row repeated as is: one row
    assert list(read_external(f"olb={path}").table.index) == ["org/a", "org/b"]


@pytest.mark.parametrize("top", [{"retry_wait": 1e10}, {"retries": 31}, {"retries": 21}, {"retry_wait": 3601}])
def test_retry_bounds_are_checked_when_the_suite_is_read(tmp_path, top):
    """Item 15 (fails on the old main: ``retry_wait: 1e10`` or ``retries: 31`` passed, and the first retry was an
    OverflowError traceback)."""
    from triangulation.suite.spec import load_suite

    with pytest.raises(UserError) as exc:
        load_suite(write_suite(tmp_path, {"models": [{"name": "a"}], "tasks": [{"play": "wcst"}], **top}))
    assert next(iter(top)) in str(exc.value) and "\n" not in str(exc.value)
    suite = load_suite(write_suite(tmp_path, {"models": [{"name": "a"}], "tasks": [{"play": "wcst"}], "retries": 20, "retry_wait": 3600}))
    assert suite.retry_wait * 2 ** (suite.retries - 1) < threading.TIMEOUT_MAX
