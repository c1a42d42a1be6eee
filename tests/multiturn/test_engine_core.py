"""The lockstep engine on scripted backends: batching, retries, failures, resume, results shape."""

from __future__ import annotations

import json

import pytest

from models.retry import RetryPolicy
from models.scripted import ScriptedLM
from multiturn.engine.runner import run_task
from multiturn.engine.settings import TaskSettings
from plumbing.jsonio import read_jsonl
from plumbing.run_folder import episodes_path
from tests.support.engine_helpers import BrokenLM, CountTask, echo_last

NO_WAIT = RetryPolicy(attempts=3, base_delay=0.0, sleep=lambda s: None)


def test_perfect_player_scores_one_and_requests_are_batched_in_lockstep():
    lm = ScriptedLM(echo_last)
    summary = run_task(TaskSettings(CountTask(n_episodes=6, lengths=(3, 1, 5)), max_live=0), {"player": lm}, progress=False)
    assert summary["metrics"]["accuracy"] == 1.0
    assert summary["n_samples"] == {"original": 6, "effective": 6}
    assert lm.requests_seen == 2 * (3 + 1 + 5)
    assert lm.calls == 5  # one call per step; the longest episode has 5 turns


def test_finished_episodes_leave_the_window_and_the_queue_refills_it():
    lm = ScriptedLM(echo_last)
    summary = run_task(TaskSettings(CountTask(n_episodes=6, lengths=(3, 1, 5)), max_live=2), {"player": lm}, progress=False)
    assert summary["metrics"]["accuracy"] == 1.0
    assert lm.requests_seen == 18


def test_wrong_player_scores_zero():
    summary = run_task(TaskSettings(CountTask()), {"player": ScriptedLM(lambda m: "x")}, progress=False)
    assert summary["metrics"]["accuracy"] == 0.0


def test_backend_errors_are_retried_then_recorded_as_failed_and_the_run_goes_on(tmp_path):
    sleeps: list[float] = []
    retry = RetryPolicy(attempts=3, base_delay=0.5, sleep=sleeps.append)
    summary = run_task(TaskSettings(CountTask(n_episodes=2), retry=retry, model_dir=tmp_path / "m"), {"player": BrokenLM()}, progress=False)
    assert sleeps == [0.5, 1.0]  # exponential backoff between the three attempts
    assert summary["n_failed"] == 2 and summary["n_samples"]["effective"] == 0
    records = read_jsonl(episodes_path(tmp_path / "m", "count_test"))
    assert [r["failed"] for r in records] == [True, True]
    assert "backend down" in records[0]["error"]


def test_only_the_requests_that_fail_alone_fail():
    def respond(messages):
        if messages[-1]["content"] == "3":
            raise TimeoutError("slow")
        return echo_last(messages)

    summary = run_task(
        TaskSettings(CountTask(n_episodes=3, lengths=(2, 3, 1)), retry=NO_WAIT, max_live=0), {"player": ScriptedLM(respond)}, progress=False
    )
    assert summary["n_failed"] == 1
    assert summary["metrics"]["accuracy"] == 1.0
    failed = [r["id"] for r in summary["records"] if r["failed"]]
    assert failed == ["ep001"]


def test_resume_skips_finished_episodes_tolerates_a_truncated_line_and_replays_failures(tmp_path):
    task = CountTask(n_episodes=4, lengths=(2,))
    run_task(TaskSettings(task, limit=2, model_dir=tmp_path / "m"), {"player": ScriptedLM(echo_last)}, progress=False)
    path = episodes_path(tmp_path / "m", "count_test")
    with path.open("a") as fh:
        fh.write(json.dumps({"id": "ep002", "failed": True, "error": "x", "scores": {}}) + "\n")
        fh.write('{"id": "ep003", "transcr')  # a kill mid-write
    lm = ScriptedLM(echo_last)
    summary = run_task(TaskSettings(task, model_dir=tmp_path / "m"), {"player": lm}, progress=False)
    assert lm.requests_seen == 4  # only ep002 and ep003 were played
    ids = [r["id"] for r in read_jsonl(path)]
    assert sorted(ids) == ["ep000", "ep001", "ep002", "ep003"]
    assert summary["n_samples"]["effective"] == 4 and summary["metrics"]["accuracy"] == 1.0
    lm2 = ScriptedLM(echo_last)
    run_task(TaskSettings(task, overwrite=True, model_dir=tmp_path / "m"), {"player": lm2}, progress=False)
    assert lm2.requests_seen == 8 and len(read_jsonl(path)) == 4


def test_same_seed_same_order_and_gen_kwargs_override_reaches_player_only():
    seen = []

    class Spy(ScriptedLM):
        def generate_until(self, requests, disable_tqdm=False):
            seen.extend(r.args[1] for r in requests)
            return super().generate_until(requests, disable_tqdm)

    run_task(
        TaskSettings(CountTask(n_episodes=1, lengths=(1,)), gen_kwargs={"temperature": 0.0}), {"player": Spy(echo_last)}, progress=False
    )
    assert seen == [{"max_gen_toks": 4, "temperature": 0.0, "do_sample": False}]  # temperature 0 = greedy


def test_missing_player_is_an_error():
    with pytest.raises(ValueError):
        run_task(TaskSettings(CountTask()), {}, progress=False)
