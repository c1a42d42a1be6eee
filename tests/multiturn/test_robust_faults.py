"""Robustness (issue 7): fault injection through the real engine (``multiturn.engine.runner.run_task``).

Backends that raise on 20% of requests (seeded), hang past the per-request timeout, return empty
strings or the wrong number of replies: the run finishes, episodes whose backend calls kept failing
are recorded as failed (a backend fault, so they are not scored against the model), and the same
command completes them later without replaying finished ones. A kill during a JSONL write (a
truncated last line) is tolerated on resume. Results files are written atomically.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from models.retry import RetryPolicy
from models.scripted import ScriptedLM
from multiturn.engine.record import read_episodes
from multiturn.engine.results import write_results
from multiturn.engine.runner import run_task
from multiturn.engine.settings import TaskSettings
from multiturn.game import Game, Request, TaskSpec
from plumbing import atomic, run_folder

NO_WAIT = dict(base_delay=0.0, sleep=lambda _s: None)


class EchoGame(Game):
    """Each turn shows ``<episode id> turn <k>``; a reply is right when it repeats that line."""

    def __init__(self, instance: Mapping[str, Any]):
        super().__init__(instance)
        self.turn = 0
        self.right = 0
        self.history = [{"role": "system", "content": "Repeat the line you are shown."}]

    def next_request(self) -> Request | None:
        if self.done:
            return None
        if len(self.history) % 2 == 1:
            self.history.append({"role": "user", "content": f"{self.instance['id']} turn {self.turn}"})
        return Request(messages=list(self.history))

    def on_reply(self, reply: str) -> None:
        self.right += int(reply.strip() == self.history[-1]["content"])
        self.history.append({"role": "assistant", "content": reply})
        self.transcript.append({"turn": self.turn, "reply": reply})
        self.turn += 1

    @property
    def done(self) -> bool:
        return self.turn >= int(self.instance["turns"])

    def scores(self) -> dict[str, float]:
        return {"accuracy": self.right / int(self.instance["turns"])}


class EchoTask(TaskSpec):
    name = "echo_fault_test"
    gen_kwargs = {"max_gen_toks": 8}

    def __init__(self, n: int = 20, turns: int = 3):
        self.n, self.turns = n, turns

    def instances(self, seed: int) -> list[dict[str, Any]]:
        return [{"id": f"e{i:02d}", "turns": self.turns} for i in range(self.n)]

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return EchoGame(instance)


def echo(messages: list[dict]) -> str:
    return messages[-1]["content"]


def episode_of(messages: list[dict]) -> str:
    return messages[-1]["content"].split(" ")[0]


class FlakyLM(ScriptedLM):
    """A perfect echo backend whose ``generate_until`` raises when any request in the call draws a
    failure (each request fails with probability ``rate``, from a seeded RNG)."""

    def __init__(self, rate: float = 0.2, seed: int = 0):
        super().__init__(echo, name="flaky")
        self.rate = rate
        self.rng = random.Random(seed)
        self.raised = 0
        self.answered: list[str] = []  # episode ids of the requests answered

    def generate_until(self, requests, disable_tqdm: bool = False):
        if any(self.rng.random() < self.rate for _ in requests):
            self.raised += 1
            raise ConnectionError("HTTP 503 from the inference server")
        out = super().generate_until(requests, disable_tqdm)
        self.answered.extend(episode_of(json.loads(r.args[0])) for r in requests)
        return out


class HangingLM(ScriptedLM):
    """Echoes, but any call holding a request of an episode in ``hang_on`` blocks until released."""

    def __init__(self, hang_on: set[str], first_call_only: bool = False):
        super().__init__(echo, name="hanging")
        self.hang_on = set(hang_on)
        self.first_call_only = first_call_only
        self.release = threading.Event()
        self.hung = 0

    def generate_until(self, requests, disable_tqdm: bool = False):
        ids = {episode_of(json.loads(r.args[0])) for r in requests}
        if ids & self.hang_on and not (self.first_call_only and self.hung):
            self.hung += 1
            self.release.wait(30)
            raise RuntimeError("released after the test")
        return super().generate_until(requests, disable_tqdm)


def _jsonl(tmp_path: Path, task: TaskSpec, model: str = "m") -> Path:
    return run_folder.episodes_path(tmp_path / model, task.name)


def _lines(path: Path) -> list[dict]:
    return read_episodes(path)


# --- a backend that raises on 20% of requests ------------------------------------------------------


def test_flaky_backend_run_finishes_marks_failures_and_the_same_command_completes_them(tmp_path):
    task = EchoTask(n=20, turns=3)
    lm = FlakyLM(rate=0.2, seed=7)
    retry = RetryPolicy(attempts=2, **NO_WAIT)
    first = run_task(TaskSettings(task, max_live=4, retry=retry, model_dir=tmp_path / "m"), {"player": lm}, progress=False)

    records = first["records"]
    failed = [r for r in records if r["failed"]]
    assert lm.raised > 0 and failed, "the seed must make some episodes fail (else the test shows nothing)"
    assert len(records) == 20 and first["n_failed"] == len(failed)
    for record in failed:  # a backend fault: recorded with its error, not scored against the model
        assert record["scores"] == {} and "ConnectionError" in record["error"] and "503" in record["error"]
    assert first["n_samples"] == {"original": 20, "effective": 20 - len(failed)}
    assert first["metrics"]["accuracy"] == 1.0  # the model was perfect whenever it was reached

    finished_before = {r["id"]: r for r in _lines(_jsonl(tmp_path, task)) if not r["failed"]}
    runs = 1
    summary = first
    while summary["n_failed"] and runs < 10:  # the same command again, on the same flaky backend
        lm.answered.clear()
        summary = run_task(TaskSettings(task, max_live=4, retry=retry, model_dir=tmp_path / "m"), {"player": lm}, progress=False)
        runs += 1
        assert not set(lm.answered) & set(finished_before), "a finished episode was played again"
        finished_before.update({r["id"]: r for r in summary["records"] if not r["failed"]})
    assert summary["n_failed"] == 0 and summary["n_samples"]["effective"] == 20 and summary["metrics"]["accuracy"] == 1.0
    lines = _lines(_jsonl(tmp_path, task))
    assert sorted(r["id"] for r in lines) == [f"e{i:02d}" for i in range(20)]  # every episode exactly once
    assert not any(r["failed"] for r in lines)


def test_a_batch_with_one_bad_request_fails_only_that_episode():
    class PoisonLM(ScriptedLM):
        def generate_until(self, requests, disable_tqdm: bool = False):
            if any(episode_of(json.loads(r.args[0])) == "e03" for r in requests):
                raise ValueError("request rejected: content filter")
            return super().generate_until(requests, disable_tqdm)

    summary = run_task(TaskSettings(EchoTask(n=8), retry=RetryPolicy(attempts=3, **NO_WAIT)), {"player": PoisonLM(echo)}, progress=False)
    failed = [r["id"] for r in summary["records"] if r["failed"]]
    assert failed == ["e03"] and summary["metrics"]["accuracy"] == 1.0


def test_wrong_number_of_replies_is_a_backend_error():
    class ShortLM(ScriptedLM):
        def generate_until(self, requests, disable_tqdm: bool = False):
            return super().generate_until(requests, disable_tqdm)[:-1]

    summary = run_task(
        TaskSettings(EchoTask(n=3, turns=1), retry=RetryPolicy(attempts=1, **NO_WAIT)), {"player": ShortLM(echo)}, progress=False
    )
    assert all(r["failed"] and "replies for" in r["error"] for r in summary["records"])
    assert summary["metrics"] == {} and summary["n_failed"] == 3


# --- a backend that hangs -------------------------------------------------------------------------


def test_a_hung_call_times_out_and_the_retry_succeeds():
    lm = HangingLM({"e01"}, first_call_only=True)
    try:
        started = time.perf_counter()
        summary = run_task(
            TaskSettings(EchoTask(n=4, turns=2), retry=RetryPolicy(attempts=2, timeout=0.3, **NO_WAIT)), {"player": lm}, progress=False
        )
        elapsed = time.perf_counter() - started
    finally:
        lm.release.set()
    assert lm.hung == 1 and summary["n_failed"] == 0 and summary["metrics"]["accuracy"] == 1.0
    assert elapsed < 10


def test_an_episode_that_always_hangs_is_marked_failed_and_completed_later(tmp_path):
    task = EchoTask(n=6, turns=2)
    lm = HangingLM({"e02"})
    try:
        started = time.perf_counter()
        first = run_task(
            TaskSettings(task, retry=RetryPolicy(attempts=2, timeout=0.25, **NO_WAIT), model_dir=tmp_path / "m"),
            {"player": lm},
            progress=False,
        )
        elapsed = time.perf_counter() - started
    finally:
        lm.release.set()
    assert elapsed < 10, "the run must not wait for the hung call"
    failed = [r for r in first["records"] if r["failed"]]
    assert [r["id"] for r in failed] == ["e02"] and "TimeoutError" in failed[0]["error"]
    assert first["metrics"]["accuracy"] == 1.0 and first["n_samples"]["effective"] == 5

    healthy = FlakyLM(rate=0.0)
    second = run_task(TaskSettings(task, model_dir=tmp_path / "m"), {"player": healthy}, progress=False)
    assert set(healthy.answered) == {"e02"}  # only the failed episode is played again
    assert second["n_failed"] == 0 and second["n_samples"]["effective"] == 6
    assert sorted(r["id"] for r in _lines(_jsonl(tmp_path, task))) == [f"e{i:02d}" for i in range(6)]


def test_without_a_timeout_the_call_is_direct():
    """timeout=None keeps the plain call on the caller's thread (backends that need it, e.g. under accelerate)."""
    seen = []

    class ThreadLM(ScriptedLM):
        def generate_until(self, requests, disable_tqdm: bool = False):
            seen.append(threading.current_thread() is threading.main_thread())
            return super().generate_until(requests, disable_tqdm)

    run_task(TaskSettings(EchoTask(n=2, turns=1), retry=RetryPolicy(timeout=None)), {"player": ThreadLM(echo)}, progress=False)
    assert seen and all(seen)


# --- a backend that returns empty strings ---------------------------------------------------------


def test_empty_replies_are_the_models_answers_not_failures():
    summary = run_task(TaskSettings(EchoTask(n=4)), {"player": ScriptedLM(lambda m: "")}, progress=False)
    assert summary["n_failed"] == 0 and summary["metrics"]["accuracy"] == 0.0


REAL_TASKS = [
    "nback_verbal_1",
    "nback_verbal_3_triangulating",
    "wcst",
    "lnt",
    "taboo",
    "wordle",
    "wordle_withcritic",
    "referencegame",
    "imagegame",
    "privateshared",
]


@pytest.mark.parametrize("reply", ["", None])
def test_real_tasks_finish_on_empty_replies(reply, upstream, built_data, tmp_path):
    from multiturn import registry

    lm = ScriptedLM(lambda m: reply)
    for name in REAL_TASKS:
        summary = run_task(
            TaskSettings(registry.get_task(name), limit=1, model_dir=tmp_path / "model"),
            {"player": lm, "player_b": lm, "judge": lm},
            progress=False,
        )
        assert summary["n_failed"] == 0, name
        [record] = summary["records"]
        assert record["scores"] and all(isinstance(v, float) for v in record["scores"].values()), name
        assert json.loads(_jsonl(tmp_path, registry.get_task(name), "model").read_text())["id"] == record["id"]


# --- resume after a kill during a write -----------------------------------------------------------


def test_truncated_last_line_is_dropped_on_resume_and_that_episode_replayed(tmp_path):
    task = EchoTask(n=5, turns=2)
    run_task(TaskSettings(task, model_dir=tmp_path / "m"), {"player": ScriptedLM(echo)}, progress=False)
    path = _jsonl(tmp_path, task)
    raw = path.read_bytes()
    last_start = raw.rstrip(b"\n").rfind(b"\n") + 1
    cut_id = json.loads(raw[last_start:])["id"]
    path.write_bytes(raw[: last_start + (len(raw) - last_start) // 2])  # a kill mid-write
    lm = FlakyLM(rate=0.0)
    summary = run_task(TaskSettings(task, model_dir=tmp_path / "m"), {"player": lm}, progress=False)
    assert set(lm.answered) == {cut_id}
    assert summary["n_samples"]["effective"] == 5 and summary["metrics"]["accuracy"] == 1.0
    assert sorted(r["id"] for r in _lines(path)) == [f"e{i:02d}" for i in range(5)]  # valid JSONL, each once


# --- results written atomically -------------------------------------------------------------------


def test_results_json_is_written_atomically(tmp_path, monkeypatch):
    payload = {"results": {"t": {"acc,none": 1.0}}}
    path = write_results(tmp_path, payload)
    assert json.loads(path.read_text()) == payload and [p.name for p in tmp_path.iterdir()] == [path.name]

    def crash(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", crash)
    with pytest.raises(OSError):
        write_results(tmp_path / "other", payload)
    assert list((tmp_path / "other").iterdir()) == []  # no half-written results_*.json, no temporary left


def test_the_temporary_results_name_is_never_read_as_results(tmp_path, monkeypatch):
    """While the file is being written it has a hidden name that `triangulate report` does not pick up."""
    seen: list[str] = []
    real_replace = atomic.os.replace

    def spy(src, dst):
        seen.append(Path(src).name)
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", spy)
    write_results(tmp_path, {"results": {}})
    [tmp_name] = seen
    assert tmp_name.startswith(".") and not tmp_name.endswith(".json")
