"""`triangulate play` end to end on scripted backends: results shape, secrets, kill -9 + resume, accelerate."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from models.ref import ModelRef, parse_model_args
from multiturn.engine.record import read_episodes
from plumbing import run_folder

REPO = Path(__file__).resolve().parents[2]
HELPER = [sys.executable, str(REPO / "tests" / "support" / "engine_helpers.py")]


def _env(**extra) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _ids(path: Path) -> list[str]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line)["id"])
        except json.JSONDecodeError:
            pass
    return out


def test_play_writes_lm_eval_shaped_results_and_episodes(tmp_path):
    args = [
        "play",
        "--model",
        "scripted-count",
        "--model_args",
        "delay=0,api_key=sk-SECRET123",
        "--tasks",
        "count_test",
        "--output_path",
        str(tmp_path),
        "--limit",
        "4",
    ]
    proc = subprocess.run(HELPER + args, env=_env(COUNT_EPISODES=6), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    model_dir = tmp_path / "scripted-count"
    [results] = list(model_dir.glob("results_*.json"))
    payload = json.loads(results.read_text())
    assert payload["results"]["count_test"]["accuracy,none"] == 1.0
    assert payload["n-samples"]["count_test"] == {"original": 6, "effective": 4}
    assert payload["configs"]["count_test"]["task"] == "count_test"
    assert payload["higher_is_better"]["count_test"] == {"accuracy": True}
    assert payload["config"]["model"] == "scripted-count" and "versions" in payload
    assert payload["config"]["lm_class"] and "prefix_cache" not in payload["config"]  # not an hf model
    assert "SECRET123" not in results.read_text() and "api_key=<redacted>" in payload["config"]["model_args"]
    records = read_episodes(run_folder.episodes_path(model_dir, "count_test"))
    assert [r["id"] for r in records] and sorted(r["id"] for r in records) == ["ep000", "ep001", "ep002", "ep003"]
    assert all({"transcript", "scores", "instance"} <= set(r) for r in records)


def test_unknown_task_is_one_line_user_error(tmp_path):
    proc = subprocess.run(
        HELPER + ["play", "--model", "scripted-count", "--tasks", "nope"], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert "unknown task(s): 'nope'" in proc.stderr and "--tasks list" in proc.stderr and "Traceback" not in proc.stderr


def test_kill_9_then_rerun_plays_every_episode_exactly_once(tmp_path):
    n = 12
    args = ["play", "--model", "scripted-count", "--tasks", "count_test", "--output_path", str(tmp_path), "--max_live", "1"]
    jsonl = tmp_path / "scripted-count" / "episodes_count_test.jsonl"
    log1, log2 = tmp_path / "calls1.log", tmp_path / "calls2.log"
    proc = subprocess.Popen(
        HELPER + args, env=_env(COUNT_EPISODES=n, COUNT_DELAY=0.1, COUNT_LOG=log1), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 120
    while time.time() < deadline and (not jsonl.exists() or len(_ids(jsonl)) < 3):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    finished_first = _ids(jsonl)
    assert 3 <= len(finished_first) < n, "the kill must land mid-run"
    proc2 = subprocess.run(HELPER + args, env=_env(COUNT_EPISODES=n, COUNT_LOG=log2), capture_output=True, text=True, timeout=120)
    assert proc2.returncode == 0, proc2.stderr
    ids = _ids(jsonl)
    assert sorted(ids) == [f"ep{i:03d}" for i in range(n)]  # every episode exactly once
    lengths = {f"ep{i:03d}": (3, 1, 5)[i % 3] for i in range(n)}
    replayed = len(log2.read_text().splitlines())
    assert replayed == sum(lengths[i] for i in lengths if i not in finished_first)
    payload = json.loads(next((tmp_path / "scripted-count").glob("results_*.json")).read_text())
    assert payload["n-samples"]["count_test"]["effective"] == n


def test_accelerate_launch_shards_episodes_over_two_processes(tmp_path):
    """Two ranks (torchrun-style launch on CPU, gloo): each plays its shard, rank 0 writes everything once.

    accelerate 1.15 runs `--cpu --num_processes 2` as ONE process unless mpirun is configured, so the
    two-process launch uses `--multi_gpu`, which on a machine without GPUs gives two CPU ranks."""
    log = tmp_path / "calls.log"
    cmd = [
        "accelerate",
        "launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        str(REPO / "tests" / "support" / "engine_helpers.py"),
        "play",
        "--model",
        "scripted-count",
        "--tasks",
        "count_test",
        "--output_path",
        str(tmp_path),
    ]
    proc = subprocess.run(cmd, env=_env(COUNT_EPISODES=7, COUNT_LOG=log), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ids = _ids(tmp_path / "scripted-count" / "episodes_count_test.jsonl")
    assert sorted(ids) == [f"ep{i:03d}" for i in range(7)]
    ranks = log.read_text().split()
    assert set(ranks) == {"0", "1"} and len(ranks) == 3 + 1 + 5 + 3 + 1 + 5 + 3
    assert len(list((tmp_path / "scripted-count").glob("results_*.json"))) == 1
    assert not list((tmp_path / "scripted-count").glob("*.rank*.jsonl"))


def test_model_folder_names_follow_lm_eval_and_never_hold_secrets():
    def ref(model, model_args):
        return ModelRef.parse(model, model_args)

    assert ref("hf", "pretrained=HuggingFaceTB/SmolLM2-135M-Instruct,dtype=float32").folder == "HuggingFaceTB__SmolLM2-135M-Instruct"
    assert ref("openai-chat-completions", {"model": "gpt-4o", "api_key": "sk-x"}).folder == "gpt-4o"
    assert ref("dummy", None).folder == "dummy"
    assert ref(None, None).folder == ref(None, None).name == "SmolLM2-135M-Instruct-Q4_1"  # the embedded model
    assert ref("local-chat-completions", "model=http://user:pw@host/m").name == "http://host/m"
    assert ref("local-chat-completions", "model=http://user:pw@host/m").folder == "http__host__m"
    assert ref("hf", "pretrained=/models/Qwen2.5-7B/").label == "Qwen2.5-7B" and ref(None, None).label == "smollm2"
    assert parse_model_args("pretrained=x,batch_size=8,trust_remote_code=True") == {
        "pretrained": "x",
        "batch_size": 8,
        "trust_remote_code": True,
    }
    assert parse_model_args({"a": 1}) == {"a": 1} and parse_model_args(None) == {}
    red = ref("hf", "model=m,base_url=http://user:pw@host:8000/v1,token=abc,tokenizer=t").redacted
    assert red == {"model": "m", "base_url": "http://host:8000/v1", "token": "<redacted>", "tokenizer": "t"}


def test_ctrl_c_is_one_line_exit_130_and_the_rerun_finishes_the_rest(tmp_path):
    """Issue 23 (README "Reliability"): SIGINT mid-run prints one line, exits 130, leaves only whole records and
    no lock held; the same command then plays exactly the missing episodes."""
    n = 12
    args = ["play", "--model", "scripted-count", "--tasks", "count_test", "--output_path", str(tmp_path), "--max_live", "1"]
    jsonl = tmp_path / "scripted-count" / "episodes_count_test.jsonl"
    proc = subprocess.Popen(
        HELPER + args, env=_env(COUNT_EPISODES=n, COUNT_DELAY=0.1), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.time() + 120
    while time.time() < deadline and (not jsonl.exists() or len(_ids(jsonl)) < 3):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "triangulate: interrupted"
    assert "Traceback" not in err
    lines = jsonl.read_text().splitlines()
    assert all(json.loads(line)["id"] for line in lines) and 3 <= len(lines) < n
    proc2 = subprocess.run(HELPER + args, env=_env(COUNT_EPISODES=n), capture_output=True, text=True, timeout=120)
    assert proc2.returncode == 0, proc2.stderr
    assert sorted(_ids(jsonl)) == [f"ep{i:03d}" for i in range(n)]
