"""Nothing answered is lost at a kill, even in lockstep (issue 37 item 5): every answered turn goes to the task's turn
log as it is answered (``TaskStore``), and a resumed run rebuilds each unfinished episode by replaying its logged
replies through the game, so only the requests in flight at the kill are asked again; results equal an
uninterrupted run's."""

from __future__ import annotations

import json
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from models.scripted import ScriptedLM
from multiturn.engine.runner import run_task
from multiturn.engine.settings import TaskSettings
from multiturn.engine.store import TaskStore
from multiturn.engine.turns import read_turns, turn_line
from tests.support.engine_helpers import CountTask, echo_last
from tests.triangulation.test_suite import LAUNCHER, ROOT, suite_env

#: CountTask(6 episodes, lengths 3, 1, 5): 18 turns, the first step a batch of 6
TURNS = 18


class Killed(BaseException):
    """What a SIGKILL does to the loop: nothing after it runs (no retry catches it; ``finally`` blocks still close files)."""


def dying(after: int) -> ScriptedLM:
    """The perfect counter that dies while answering its ``after + 1``-th request (``after`` were answered)."""

    def respond(messages):
        if lm.requests_seen > after:
            raise Killed
        return echo_last(messages)

    lm = ScriptedLM(respond)
    return lm


def _episodes(folder: Path, task: str = "count_test") -> dict[str, dict]:
    return {str(r["id"]): r for r in map(json.loads, (folder / "m" / f"episodes_{task}.jsonl").read_text().splitlines())}


def test_a_kill_mid_batch_loses_only_the_request_in_flight_and_lockstep_goes_on(tmp_path):
    task = CountTask()
    whole = ScriptedLM(echo_last)
    expected = run_task(TaskSettings(task, model_dir=tmp_path / "whole" / "m"), {"player": whole}, progress=False)
    assert whole.requests_seen == TURNS

    first = dying(after=8)  # the second step's batch of 6 is answered up to its 3rd request
    with pytest.raises(Killed):
        run_task(TaskSettings(task, model_dir=tmp_path / "run" / "m"), {"player": first}, progress=False)
    store = TaskStore(tmp_path / "run" / "m", task.name)
    logged = read_turns([store.turns])
    assert sum(map(len, logged.values())) == 8  # every answered request, the 2 answered of the batch in flight included
    finished = set(store.finished())
    assert finished == {"ep001", "ep004"}  # the one-turn episodes ended in the first step (their turns wait for compaction)

    second = ScriptedLM(echo_last)
    resumed = run_task(TaskSettings(task, model_dir=tmp_path / "run" / "m"), {"player": second}, progress=False)
    assert first.requests_seen - 1 + second.requests_seen == TURNS  # each turn asked once; the one in flight again
    remaining = [n - len(logged.get(f"ep{i:03d}", [])) for i, n in enumerate([3, 1, 5] * 2) if f"ep{i:03d}" not in finished]
    assert second.calls == max(remaining)  # episodes at different depths still advance together, one batch a step
    assert resumed["metrics"] == expected["metrics"]
    assert _episodes(tmp_path / "run") == _episodes(tmp_path / "whole")
    assert not store.turns.exists()  # every episode has its record: the turn log is gone


def test_logged_turns_that_no_longer_fit_the_game_are_asked_again(tmp_path, caplog):
    task = CountTask(n_episodes=1, lengths=(5,))
    with pytest.raises(Killed):
        run_task(TaskSettings(task, model_dir=tmp_path / "m"), {"player": dying(after=4)}, progress=False)
    store = TaskStore(tmp_path / "m", task.name)
    turns = read_turns([store.turns])["ep000"]
    assert [t["turn"] for t in turns] == [0, 1, 2, 3]
    turns[2] = {**turns[2], "request": "0" * 16}  # turn 2 answered another request: it and what follows are asked again
    store.turns.write_text("".join(turn_line(t) + "\n" for t in turns), encoding="utf-8")
    again = ScriptedLM(echo_last)
    summary = run_task(TaskSettings(task, model_dir=tmp_path / "m"), {"player": again}, progress=False)
    assert again.requests_seen == 3 and summary["metrics"]["accuracy"] == 1.0
    assert "2 of 4 logged turns fit the game" in caplog.text
    assert len(_episodes(tmp_path)["ep000"]["calls"]) == 5


def test_a_later_line_for_a_turn_replaces_it_and_what_followed(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [
        {"id": "a", "turn": 0, "role": "player", "request": "x", "reply": "1"},
        {"id": "a", "turn": 1, "role": "player", "request": "x", "reply": "2"},
        {"id": "a", "turn": 2, "role": "player", "request": "x", "reply": "3"},
        {"id": "a", "turn": 1, "role": "player", "request": "y", "reply": "2b"},
        {"id": "b", "turn": 1, "role": "player", "request": "x", "reply": "gap"},  # turn 0 of b is missing: ignored
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"id": "a", "tu', encoding="utf-8")  # a torn last line
    turns = read_turns([path])
    assert [t["reply"] for t in turns["a"]] == ["1", "2b"] and turns["b"] == []


def test_a_resume_under_other_settings_is_refused_even_when_only_turns_were_stored(tmp_path):
    from plumbing.errors import UserError

    task = CountTask(n_episodes=2, lengths=(4,))
    with pytest.raises(Killed):
        run_task(TaskSettings(task, seed=1, model_dir=tmp_path / "m"), {"player": dying(after=3)}, progress=False)
    assert not TaskStore(tmp_path / "m", task.name).finished()
    with pytest.raises(UserError, match="other settings"):
        run_task(TaskSettings(task, seed=2, model_dir=tmp_path / "m"), {"player": ScriptedLM(echo_last)}, progress=False)


def _play(out: Path, work: Path, *, die_after: int = 0, limit: int = 4) -> subprocess.CompletedProcess:
    env = {**suite_env(work), "SUITE_DIE_AFTER": str(die_after)}
    cmd = [*LAUNCHER.split(), "play", "--model", "scripted-suite", "--model_args", "pretrained=kill,log_args=1"]
    cmd += ["--tasks", "nback_verbal_1", "--limit", str(limit), "--seed", "3", "--output_path", str(out)]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_a_sigkilled_play_resumes_mid_episode_each_turn_computed_once(tmp_path):
    """A `triangulate play` process SIGKILLed mid-batch (4 n-back episodes in lockstep, 24 turns each; killed after its
    30th answered request, 2 into the 8th batch) and run again: the requests computed over both processes are exactly
    those of an uninterrupted run, each once, and the episodes and results are the same."""
    whole = _play(tmp_path / "whole", tmp_path / "whole.log")
    assert whole.returncode == 0, whole.stderr[-3000:]
    killed = _play(tmp_path / "run", tmp_path / "run.log", die_after=30)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    folder = tmp_path / "run" / "kill"
    assert not (folder / "episodes_nback_verbal_1.jsonl").is_file() or not (folder / "episodes_nback_verbal_1.jsonl").read_text()
    resumed = _play(tmp_path / "run", tmp_path / "run.log")
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    def computed(log: Path) -> Counter:
        return Counter(line.split()[2] for line in log.read_text().splitlines())  # "kill generate DIGEST leg=0"

    assert computed(tmp_path / "run.log") == computed(tmp_path / "whole.log") and sum(computed(tmp_path / "whole.log").values()) == 4 * 24
    episodes = {p: (tmp_path / p / "kill" / "episodes_nback_verbal_1.jsonl").read_text().splitlines() for p in ("whole", "run")}
    assert sorted(episodes["run"]) == sorted(episodes["whole"])

    def results(root: Path) -> dict:
        [path] = sorted((root / "kill").glob("results_*.json"))
        data = json.loads(path.read_text())["results"]["nback_verbal_1"]
        return {k: v for k, v in data.items() if "," in k}

    assert results(tmp_path / "run") == results(tmp_path / "whole")
    assert not (folder / "episodes_nback_verbal_1.turns.jsonl").exists()


@pytest.mark.slow
def test_the_hf_backend_hands_each_reply_to_the_turn_log_as_it_comes(smollm2, tmp_path, monkeypatch):
    """lm-eval's hf backend (the embedded SmolLM2, the session's one load) calls lm-eval's cache hook request by request:
    every reply of a batch of 3 is logged by the hook (once each, no second write when the batch returns). (Checked by
    hand on ``PrefixCacheHFLM`` at batch size 2 as well.)"""
    from models.retry import RetryPolicy
    from multiturn.engine import turns as turns_module
    from multiturn.engine.scheduler import Asked, LiveEpisode, ask
    from multiturn.engine.turns import TurnHook, TurnLog

    lm = smollm2
    task = CountTask(n_episodes=3)
    episodes = [LiveEpisode(inst, task.make_game(inst, 0)) for inst in task.instances(0)]
    members = [(ep, Asked(ep.game.next_request(), {"max_gen_toks": 4, "until": ["\n"]}, f"digest{k}")) for k, ep in enumerate(episodes)]
    hooked: list[str] = []
    original = TurnHook.add_partial
    monkeypatch.setattr(turns_module.TurnHook, "add_partial", lambda self, a, q, r: (hooked.append(r), original(self, a, q, r)))
    log = TurnLog(tmp_path / "t.jsonl")
    replies = ask(task, lm, "player", members, RetryPolicy(), log)
    log.close()
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert sorted(hooked) == sorted(replies) and len(lines) == 3
    assert {(x["id"], x["reply"]) for x in lines} == {(ep.id, r) for ep, r in zip(episodes, replies)}
