"""Issue 23: what `triangulate play` guarantees a user, each shown on the ``random`` chance player:
one writer per run folder and task (items 2), resume only with the same settings (3), hostile replies (4),
an unwritable output path refused before any model call (6)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from triangulation.cli.main import main

HOLD = """
import sys, time
sys.path.insert(0, {repo!r})
from plumbing.locks import RunLock
with RunLock({path!r}):
    print("locked", flush=True)
    time.sleep(float(sys.argv[1]))
"""
REPO = Path(__file__).resolve().parents[2]


def play(out: Path, *extra: str, tasks: str = "wcst", seed: str = "1") -> list[str]:
    return ["play", "--model", "random", "--tasks", tasks, "--limit", "3", "--seed", seed, "--output_path", str(out), *extra]


def _hold_lock(path: Path, seconds: float) -> subprocess.Popen:
    code = HOLD.format(repo=str(REPO), path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", code, str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_writer_on_the_same_task_is_refused_naming_the_holder(tmp_path, capsys):
    holder = _hold_lock(tmp_path / "random" / "episodes_wcst.jsonl", 60)
    try:
        assert main(play(tmp_path)) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"PID {holder.pid}" in err and "--wait_lock" in err
        assert not list((tmp_path / "random").glob("results_*.json"))
        assert not (tmp_path / "random" / "episodes_wcst.jsonl").exists()  # nothing touched
    finally:
        holder.kill()
        holder.wait()


def test_wait_lock_waits_for_the_holder_then_runs(tmp_path):
    holder = _hold_lock(tmp_path / "random" / "episodes_wcst.jsonl", 2)
    started = time.time()
    try:
        assert main(play(tmp_path, "--wait_lock")) == 0
    finally:
        holder.wait()
    assert time.time() - started >= 1.5
    assert len(list((tmp_path / "random").glob("results_*.json"))) == 1


def test_the_lock_goes_with_a_killed_holder(tmp_path):
    holder = _hold_lock(tmp_path / "random" / "episodes_wcst.jsonl", 60)
    holder.kill()  # kill -9: the OS drops the flock, no stale lock
    holder.wait()
    assert main(play(tmp_path)) == 0


def _results(out: Path) -> dict:
    return json.loads(sorted((out / "random").glob("results_*.json"))[-1].read_text())


@pytest.mark.parametrize(
    "changed, named",
    [
        (["--seed", "2"], "seed: 1 -> 2"),
        (["--gen_kwargs", "temperature=0.7"], "gen_kwargs"),
        (["--model_args", "seed=9"], "model_args"),
    ],
)
def test_resume_with_changed_settings_is_refused(tmp_path, capsys, changed, named):
    assert main(play(tmp_path)) == 0
    before = _results(tmp_path)
    argv = play(tmp_path)
    for flag, value in zip(changed[::2], changed[1::2]):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and named in err and "--overwrite" in err and "--output_path" in err
    assert _results(tmp_path) == before  # no new results file claiming the new settings
    assert main([*argv, "--overwrite"]) == 0  # starting over is allowed
    assert _results(tmp_path)["config"] != before["config"]


def test_a_larger_limit_extends_the_run_with_the_same_episodes(tmp_path):
    assert main(play(tmp_path)) == 0
    episodes = tmp_path / "random" / "episodes_wcst.jsonl"
    first = episodes.read_text(encoding="utf-8").splitlines()
    argv = play(tmp_path)
    argv[argv.index("--limit") + 1] = "5"
    assert main(argv) == 0
    lines = episodes.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == first and len(lines) == 5 and _results(tmp_path)["n-samples"]["wcst"]["effective"] == 5


def test_task_args_change_is_refused_and_same_settings_resume(tmp_path, capsys, built_data):
    base = play(tmp_path, tasks="splat_easy")
    assert main([*base, "--task_args", "max_rounds=5"]) == 0
    capsys.readouterr()
    assert main([*base, "--task_args", "max_rounds=6"]) == 2
    assert "max_rounds" in capsys.readouterr().err
    assert main([*base, "--task_args", "max_rounds=5"]) == 0  # the same settings resume


def test_a_lone_surrogate_in_a_reply_is_replaced_counted_and_resumable(tmp_path, built_data):
    """A server answering ``"m \\ud800"`` (valid JSON, not encodable as UTF-8): the run finishes, the record
    holds U+FFFD and the count, a rerun resumes, and the viewer renders it."""
    from tests.support.fake_chat import FakeChatServer

    with FakeChatServer('"m \\ud800"') as server:
        argv = ["play", "--model", "local-chat-completions", "--model_args", f"model=fake,base_url={server.url()},tokenizer_backend=None"]
        argv += ["--tasks", "nback_verbal_1", "--limit", "1", "--output_path", str(tmp_path)]
        assert main(argv) == 0
        assert main(argv) == 0  # the rerun resumes the finished episode
    [episodes] = list(tmp_path.rglob("episodes_nback_verbal_1.jsonl"))
    [record] = [json.loads(line) for line in episodes.read_text(encoding="utf-8").splitlines()]
    assert record["replaced_surrogates"] > 0 and "m \ufffd" in json.dumps(record, ensure_ascii=False)
    assert not list(tmp_path.rglob("*.tmp"))
    assert main(["view", str(tmp_path), "--out", str(tmp_path / "view")]) == 0
    assert "\ufffd" in (tmp_path / "view" / "nback_verbal_1.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("holds", [None, "taboo"])
def test_instances_folder_without_the_game_is_refused_before_any_model_call(tmp_path, capsys, holds):
    folder = tmp_path / "fresh"
    (folder / "data" / holds if holds else folder).mkdir(parents=True)
    code = main(
        ["play", "--model", "random", "--tasks", "wordle", "--task_args", f"instances={folder}", "--output_path", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "has no episodes of wordle" in err[0] and (holds or "not a built") in err[0]
    assert not (tmp_path / "o" / "random").exists()


def test_splat_without_a_judge_model_is_recorded_and_marked_self_judged(tmp_path, built_data):
    assert main(play(tmp_path / "self", tasks="splat_easy")) == 0
    assert _results(tmp_path / "self")["results"]["splat_easy"]["judge"] == "self"
    assert main([*play(tmp_path / "sep", tasks="splat_easy"), "--judge_model", "random", "--judge_model_args", "seed=7"]) == 0
    assert _results(tmp_path / "sep")["results"]["splat_easy"]["judge"] == "separate"
    assert "judge" not in _results(tmp_path / "self")["results"].get("wcst", {})
    assert main(["report", str(tmp_path / "self"), "--out", str(tmp_path / "report")]) == 0
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "Self-judged scores" in html and "random on splat_easy" in html


@pytest.mark.parametrize("damage", ["drop_line", "corrupt_line"])
def test_score_refuses_a_damaged_episode_file(tmp_path, capsys, damage):
    assert main(play(tmp_path)) == 0
    episodes = tmp_path / "random" / "episodes_wcst.jsonl"
    lines = episodes.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 3
    lines[1] = "" if damage == "drop_line" else lines[1][:40] + "\n"
    episodes.write_text("".join(lines), encoding="utf-8")
    before = sorted((tmp_path / "random").glob("results_*.json"))
    capsys.readouterr()
    assert main(["score", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "episodes_wcst.jsonl" in err[0]
    assert sorted((tmp_path / "random").glob("results_*.json")) == before  # no newer results from fewer episodes


def test_a_record_with_a_string_score_is_played_again_on_resume(tmp_path):
    assert main(play(tmp_path)) == 0
    episodes = tmp_path / "random" / "episodes_wcst.jsonl"
    records = [json.loads(line) for line in episodes.read_text(encoding="utf-8").splitlines()]
    records[0]["scores"] = {key: "high" for key in records[0]["scores"]}
    episodes.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert main(play(tmp_path)) == 0
    again = [json.loads(line) for line in episodes.read_text(encoding="utf-8").splitlines()]
    assert len(again) == 3 and all(isinstance(v, (int, float)) for r in again for v in r["scores"].values())


def test_how_a_model_is_reached_is_not_a_setting_but_which_model_is():
    """A served model comes back on another port after a restart (the suite's rerun): its episodes resume."""
    from tests.support.play_settings import play_settings

    def settings(model_args: str) -> dict:
        return play_settings(["wordle"], "local-chat-completions", model_args, batch_size=1).model_settings()

    first = settings("model=m,base_url=http://127.0.0.1:1001/v1/chat/completions,num_concurrent=4")
    assert first == settings("model=m,base_url=http://127.0.0.1:2002/v1/chat/completions,num_concurrent=16,max_retries=9")
    assert first != settings("model=other,base_url=http://127.0.0.1:1001/v1/chat/completions")
    assert "batch_size" not in first and first["model"] == "local-chat-completions"
