"""``engine: vllm | api`` in ``triangulate suite``: one server per model, its cells as concurrent clients, and
the faults (a server that does not come up, one that never answers, one that dies mid-sweep, Ctrl-C).

Fast: ``tests/support/fake_vllm.py`` stands in for ``vllm serve`` (``$TRIANGULATE_VLLM``) and
``tests/support/fake_cell.py`` for the cells' ``triangulate eval|play`` (``--launcher``); the real vLLM sweep
is in ``test_suite_serve_slow.py``."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from plumbing.errors import UserError
from triangulation.suite import cells as suite_cells
from triangulation.suite.cells import cell_argv, needs_completions
from triangulation.suite.placement import place
from triangulation.suite.runner import Sweep, run_suite
from triangulation.suite.serve import Endpoint, ServerProcess, free_port, list_models, vllm_argv
from triangulation.suite.spec import Cell, TaskEntry, cells, load_suite
from triangulation.suite.status import summary
from triangulation.suite.sweep_plan import plan_sweep

SUPPORT = Path(__file__).resolve().parents[1] / "support"
FAKE_VLLM = f"{sys.executable} {SUPPORT / 'fake_vllm.py'}"
LAUNCHER = (sys.executable, str(SUPPORT / "fake_cell.py"))
PLAY = [{"play": "nback_verbal_1"}, {"play": "taboo"}, {"play": "wordle"}]


def write_suite(tmp: Path, models: list[dict], tasks: list[dict] | None = None, **top) -> Path:
    path = tmp / "suite.yaml"
    path.write_text(yaml.safe_dump({"name": "serve", "retries": 1, "models": models, "tasks": tasks or PLAY, **top}))
    return path


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """The fake vLLM on ``$TRIANGULATE_VLLM``; its starts, workers and the cells' log under tmp_path."""
    files = {k: tmp_path / f"{k}.txt" for k in ("starts", "workers", "cells")}
    monkeypatch.setenv("TRIANGULATE_VLLM", FAKE_VLLM)
    monkeypatch.setenv("FAKE_VLLM_STARTS", str(files["starts"]))
    monkeypatch.setenv("FAKE_VLLM_WORKER", str(files["workers"]))
    monkeypatch.setenv("FAKE_CELL_LOG", str(files["cells"]))
    monkeypatch.setenv("FAKE_CELL_SLEEP", "0.3")
    monkeypatch.setattr(suite_cells, "needs_completions", lambda task: "mmlu" in task.tasks)
    return files


def sweep_of(suite, out: Path):
    """The sweep of ``suite`` into ``out`` with its models one after another (no GPU inventory)."""
    return plan_sweep(suite, out, place(suite.models, []))


def _lines(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie (exited, not yet reaped by its parent) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def _pids_gone(path: Path, timeout: float = 10) -> bool:
    pids = [int(p) for p in path.read_text().split()] if path.exists() else []
    deadline = time.time() + timeout
    while time.time() < deadline and not all(_gone(p) for p in pids):
        time.sleep(0.1)
    return bool(pids) and all(_gone(p) for p in pids)


VLLM_MODEL = {"name": "m1", "model": "hf", "model_args": "pretrained=org/m1,dtype=bfloat16", "engine": "vllm", "num_concurrent": 4}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"engine": "tgi"}, "engine must be one of hf, vllm, api"),
        ({"engine": "vllm", "model_args": "dtype=float16"}, "needs pretrained="),
        ({"engine": "vllm", "model": "openai-completions"}, "serves an hf/vllm model's weights"),
        ({"engine": "api", "model_args": "model=x"}, "needs base_url"),
        ({"engine": "api", "base_url": "http://h:1/v1"}, "needs model="),
        ({"engine": "api", "base_url": "http://h:1/v1", "model_args": "model=x", "api_key_env": "sk-secret-123"}, "names the environment"),
        ({"engine": "hf", "serve_args": ["--x"]}, "serve_args needs engine: vllm"),
        ({"engine": "vllm", "model_args": "pretrained=p", "base_url": "http://h/v1"}, "base_url needs engine: api"),
        ({"engine": "vllm", "model_args": "pretrained=p", "gpus": 0}, "gpus must be a number >= 1"),
    ],
)
def test_engine_mistakes_are_one_line(tmp_path, entry, message):
    with pytest.raises(UserError, match=message):
        load_suite(write_suite(tmp_path, [{"name": "m", **entry}]))


def test_serving_keys_leave_hf_fingerprints_alone_and_count_when_they_change_results(tmp_path):
    suite = load_suite(write_suite(tmp_path, [{"name": "a", "model": "hf", "model_args": "pretrained=x"}]))
    [cell, *_] = cells(suite)
    old_fields = ("name", "model", "model_args", "apply_chat_template", "judge", "player_b", "batch_size", "device")

    blob = json.dumps(
        {
            # model_args as the suite file gave them (the ModelRef's ``given``)
            "model": {k: cell.model.ref.given if k == "model_args" else getattr(cell.model, k) for k in old_fields},
            "task": [cell.task.runner, list(cell.task.tasks), cell.task.options],
        },
        sort_keys=True,
        default=str,
    )
    assert cell.fingerprint == hashlib.sha256(blob.encode()).hexdigest()[:16]  # runs made before `engine:` stay done
    served = Cell(replace(cell.model, engine="vllm"), cell.task)
    assert served.fingerprint != cell.fingerprint
    more = Cell(replace(served.model, num_concurrent=64, gpus=4, serve_timeout=5.0), cell.task)
    assert more.fingerprint == served.fingerprint  # how fast it runs does not change what it scores


def test_served_cells_are_clients_chat_for_generation_and_play_completions_for_loglikelihood(tmp_path, monkeypatch):
    monkeypatch.setenv("TRIANGULATE_VLLM", "vllm")
    monkeypatch.setattr(suite_cells, "needs_completions", lambda task: task.tasks == ("mmlu",))
    suite = load_suite(
        write_suite(
            tmp_path,
            [{**VLLM_MODEL, "batch_size": "auto", "device": "cuda"}],
            [{"eval": "mmlu", "num_fewshot": 5}, {"eval": "connections"}, {"play": "wordle"}],
        )
    )
    endpoint = Endpoint("http://127.0.0.1:9/v1", model="org/m1", tokenizer="org/m1").with_clients(suite.models[0].num_concurrent)
    mmlu, conn, wordle = (cell_argv(c, tmp_path / "o", ("T",), endpoint=endpoint) for c in cells(suite))
    assert mmlu[mmlu.index("--model") + 1] == "local-completions-onepass"  # issue 40: one request per question
    assert mmlu[mmlu.index("--model_args") + 1] == (
        "model=org/m1,base_url=http://127.0.0.1:9/v1/completions,num_concurrent=4,max_retries=3,tokenizer_backend=huggingface,tokenizer=org/m1"
    )
    assert conn[conn.index("--model") + 1] == "local-chat-completions" and "--apply_chat_template" in conn
    assert "base_url=http://127.0.0.1:9/v1/chat/completions" in conn[conn.index("--model_args") + 1]
    assert wordle[wordle.index("--model") + 1] == "local-chat-completions" and wordle[wordle.index("--max_live") + 1] == "4"
    assert not any(flag in argv for argv in (mmlu, conn, wordle) for flag in ("--batch_size", "--device"))
    assert vllm_argv("org/m1", 8001, {"dtype": "bfloat16"}, 2, ["--max-num-seqs", "8"])[-13:] == [
        "--host",
        "127.0.0.1",
        "--port",
        "8001",
        "--enable-prefix-caching",
        "--max-logprobs",
        "20",
        "--dtype",
        "bfloat16",
        "--tensor-parallel-size",
        "2",
        "--max-num-seqs",
        "8",
    ]
    assert "--tensor-parallel-size" not in vllm_argv("p", 1, {}, 4, ["--data-parallel-size", "4"])
    assert vllm_argv("p", 1, {}, 1, ["--max-logprobs=64"]).count("--max-logprobs") == 0  # the user's own wins


def test_task_output_types_pick_the_endpoint():
    assert needs_completions(TaskEntry("g", "eval", ("lm_pragmatics",)))  # a group of multiple_choice tasks: prompt logprobs
    assert not needs_completions(TaskEntry("g", "eval", ("connections", "globalgroup_zh")))  # generation only: chat
    assert needs_completions(TaskEntry("g", "eval", ("connections", "lm_pragmatics_irony")))  # mixed: completions serve both


def test_one_server_for_all_cells_which_run_at_once_then_it_is_stopped(tmp_path, fake):
    suite = load_suite(write_suite(tmp_path, [VLLM_MODEL], [*PLAY, {"eval": "mmlu"}]))
    out = tmp_path / "out"
    result = run_suite(sweep_of(suite, out), launcher=LAUNCHER)
    assert result.exit_code == 0, [o.detail for o in result.outcomes]
    [argv] = _lines(fake["starts"])  # exactly one server start
    assert argv[:2] == ["serve", "org/m1"] and "--enable-prefix-caching" in argv and argv[argv.index("--host") + 1] == "127.0.0.1"
    assert argv[argv.index("--dtype") + 1] == "bfloat16"
    log = out / "logs" / "m1" / "server.log"
    assert "GET /v1/models" in log.read_text() and log.read_text().count("POST /v1/") == 8
    events = _lines(fake["cells"])
    starts = [e["t"] for e in events if e["event"] == "start"]
    ends = [e["t"] for e in events if e["event"] == "end"]
    assert len(starts) == len(ends) == 4 and max(starts) < min(ends)  # all four cells in flight together
    models = {e["argv"][e["argv"].index("--tasks") + 1]: e["argv"][e["argv"].index("--model") + 1] for e in events}
    assert models == {
        "nback_verbal_1": "local-chat-completions",
        "taboo": "local-chat-completions",
        "wordle": "local-chat-completions",
        "mmlu": "local-completions-onepass",
    }
    assert _pids_gone(fake["workers"])  # the server and its worker stopped by process group
    again = run_suite(sweep_of(suite, out), launcher=LAUNCHER)
    assert [o.status for o in again.outcomes] == ["skipped-done"] * 4 and len(_lines(fake["starts"])) == 1  # nothing to serve


def test_a_server_that_does_not_come_up_fails_its_model_only(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_MODE", "fail")
    hf = {"name": "plain", "model": "hf", "model_args": "pretrained=org/plain"}
    suite = load_suite(write_suite(tmp_path, [VLLM_MODEL, hf]))
    result = run_suite(sweep_of(suite, tmp_path / "out"), launcher=LAUNCHER)
    assert result.exit_code == 1
    by_model = {m: [o for o in result.outcomes if o.cell.model.name == m] for m in ("m1", "plain")}
    assert [o.status for o in by_model["plain"]] == ["done"] * 3
    assert [o.status for o in by_model["m1"]] == ["failed"] * 3
    assert all("ValueError: fake vllm cannot load the model (FAKE_VLLM_MODE=fail)" in o.detail for o in by_model["m1"])
    assert all("base_url" not in " ".join(e["argv"]) for e in _lines(fake["cells"]))  # only plain's cells ran
    status = json.loads((tmp_path / "out" / "suite_status.json").read_text())
    assert {r["status"] for r in status["cells"] if r["model"] == "m1"} == {"failed"}
    assert "server did not come up" in summary(result)


def test_a_server_that_never_answers_is_stopped_after_serve_timeout(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_MODE", "hang")
    suite = load_suite(write_suite(tmp_path, [{**VLLM_MODEL, "serve_timeout": 2}]))
    started = time.time()
    result = run_suite(sweep_of(suite, tmp_path / "out"), launcher=LAUNCHER)
    assert time.time() - started < 30
    assert {o.status for o in result.outcomes} == {"failed"}
    assert "/models within 2 s: INFO fake vllm org/m1" in result.outcomes[0].detail
    assert _pids_gone(fake["workers"]) and not _lines(fake["cells"])


def test_a_server_that_dies_mid_sweep_is_restarted_and_the_sweep_completes_with_no_rerun(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_MODE", "die_after=3")
    monkeypatch.setenv("FAKE_VLLM_DIE_STARTS", "1")  # the first server dies after 3 answers, the restarted one lives
    monkeypatch.setenv("FAKE_CELL_REQUESTS", "3")
    monkeypatch.setenv("FAKE_CELL_SLEEP", "0.4")
    suite = load_suite(write_suite(tmp_path, [VLLM_MODEL], [*PLAY, {"play": "wcst"}]))
    out = tmp_path / "out"
    first = run_suite(sweep_of(suite, out), launcher=LAUNCHER)
    assert [o.status for o in first.outcomes] == ["done"] * 4, [o.detail for o in first.outcomes]
    assert len(_lines(fake["starts"])) == 2  # 4 cells x 3 requests, the first server answered 3: one restart
    assert "engine core died" in (out / "logs" / "m1" / "server.log").read_text()
    assert _pids_gone(fake["workers"])
    again = run_suite(sweep_of(suite, out), launcher=LAUNCHER)
    assert [o.status for o in again.outcomes] == ["skipped-done"] * 4 and len(_lines(fake["starts"])) == 2


def test_a_server_that_keeps_dying_is_restarted_serve_restarts_times_then_a_rerun_resumes(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_MODE", "die_after=3")
    monkeypatch.setenv("FAKE_CELL_REQUESTS", "3")
    monkeypatch.setenv("FAKE_CELL_SLEEP", "0.4")
    suite = load_suite(write_suite(tmp_path, [{**VLLM_MODEL, "serve_restarts": 1}], [*PLAY, {"play": "wcst"}]))
    out = tmp_path / "out"
    first = run_suite(sweep_of(suite, out), launcher=LAUNCHER)
    assert first.exit_code == 1 and len(_lines(fake["starts"])) == 2  # the first start and one restart
    failed = [o for o in first.outcomes if o.status == "failed"]
    assert failed and all("the server died (rerun to resume): RuntimeError: fake vllm engine core died" in o.detail for o in failed)
    assert all(o.attempts == 1 for o in failed)  # a dead server is not retried against
    assert _pids_gone(fake["workers"])
    monkeypatch.setenv("FAKE_VLLM_MODE", "ok")
    second = run_suite(sweep_of(suite, out), launcher=LAUNCHER)
    assert {o.status for o in second.outcomes} <= {"done", "skipped-done"} and len(_lines(fake["starts"])) == 3
    assert sum(o.status == "done" for o in second.outcomes) == len(failed)  # only the unfinished ones ran


def test_served_clients_get_the_servers_max_model_len_and_eval_cells_a_request_cache(tmp_path, fake):
    model = {**VLLM_MODEL, "model_args": "pretrained=org/m1,dtype=bfloat16,max_length=1536"}
    suite = load_suite(write_suite(tmp_path, [model], [{"eval": "mmlu"}, {"play": "wordle"}]))
    out = tmp_path / "out"
    assert run_suite(sweep_of(suite, out), launcher=LAUNCHER).exit_code == 0
    [argv] = _lines(fake["starts"])
    assert argv[argv.index("--max-model-len") + 1] == "1536"
    starts = {e["argv"][e["argv"].index("--tasks") + 1]: e["argv"] for e in _lines(fake["cells"]) if e["event"] == "start"}
    for task in ("mmlu", "wordle"):  # the length the server reports on /v1/models, not lm-eval's API default 2048
        assert "max_length=1536" in starts[task][starts[task].index("--model_args") + 1]
    mmlu = starts["mmlu"]
    cache = Path(mmlu[mmlu.index("--use_cache") + 1])
    assert cache == out / "runs" / "m1" / "mmlu" / ".request_cache" / cells(suite)[0].fingerprint
    assert "--use_cache" not in starts["wordle"]  # play cells resume inside their episodes files


def test_an_endpoint_that_gives_no_max_model_len_leaves_lm_evals_default():
    from triangulation.suite.serve import max_model_len

    assert max_model_len([{"id": "a", "max_model_len": 8192}, {"id": "b", "max_model_len": 4096}], "b") == 4096
    assert max_model_len([{"id": "other", "max_model_len": 2000}], "served-name") == 2000  # the only card
    assert max_model_len([{"id": "a"}], "a") is None and max_model_len(None, "a") is None
    clients = Endpoint("http://h/v1", model="a").with_clients(2).clients
    assert "max_length" not in clients.completions[1] and "max_length" not in clients.chat[1]
    clients = Endpoint("http://h/v1", model="a", max_length=32768).with_clients(2).clients
    assert "max_length=32768" in clients.completions[1] and "max_length=32768" in clients.chat[1]


def test_api_engine_key_reaches_the_cells_only_through_their_environment(tmp_path, fake, monkeypatch):
    port = free_port()
    server = ServerProcess(
        [*FAKE_VLLM.split(), "serve", "remote-model", "--host", "127.0.0.1", "--port", str(port)],
        tmp_path / "api.log",
        f"http://127.0.0.1:{port}/v1",
        env={k: v for k, v in os.environ.items() if k != "FAKE_VLLM_STARTS"},  # the test's endpoint, not the suite's
    ).start()
    secret = "sk-test-" + "7" * 24
    monkeypatch.setenv("MY_ENDPOINT_KEY", secret)
    monkeypatch.setenv("FAKE_CELL_EXPECT_KEY", secret)
    try:
        server.wait_ready(30)
        model = {
            "name": "remote",
            "engine": "api",
            "base_url": server.base_url + "/",
            "api_key_env": "MY_ENDPOINT_KEY",
            "model_args": {"model": "remote-model"},
        }
        out = tmp_path / "out"
        result = run_suite(sweep_of(load_suite(write_suite(tmp_path, [model])), out), launcher=LAUNCHER)
    finally:
        server.stop()
    assert result.exit_code == 0, [o.detail for o in result.outcomes]
    events = _lines(fake["cells"])
    assert events and all(e["has_key"] and e["key_matches"] for e in events)
    assert all(secret not in " ".join(e["argv"]) for e in events)
    assert not fake["starts"].exists()  # nothing started for an existing endpoint
    for path in out.rglob("*"):
        assert not path.is_file() or secret not in path.read_text(errors="replace"), path


def test_run_model_places_the_server_and_cells_on_the_given_gpus(tmp_path, fake):
    suite = load_suite(write_suite(tmp_path, [{**VLLM_MODEL, "gpus": 2}], PLAY[:1]))
    outcomes = Sweep(suite, tmp_path / "out", LAUNCHER).run_model(suite.models[0], cells(suite), gpus=[3, 5])
    assert [o.status for o in outcomes] == ["done"]
    assert {e["cuda"] for e in _lines(fake["cells"])} == {"3,5"}
    [argv] = _lines(fake["starts"])
    assert argv[argv.index("--tensor-parallel-size") + 1] == "2"


def test_ctrl_c_stops_the_server_and_every_cell(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_CELL_SLEEP", "30")
    suite = write_suite(tmp_path, [VLLM_MODEL])
    env = dict(os.environ, PYTHONPATH=str(SUPPORT.parents[1]) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [
        sys.executable,
        "-m",
        "triangulation",
        "suite",
        str(suite),
        "-o",
        str(tmp_path / "out"),
        "--launcher",
        " ".join(LAUNCHER),
        "--no_check",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and len([e for e in _lines(fake["cells"]) if e["event"] == "start"]) < 3:
        time.sleep(0.2)
    cell_pids = [e["pid"] for e in _lines(fake["cells"])]
    assert len(cell_pids) == 3, proc.communicate(timeout=60)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert all(_gone(p) for p in cell_pids), stderr[-2000:]
    assert _pids_gone(fake["workers"])
    [argv] = _lines(fake["starts"])
    assert list_models(f"http://127.0.0.1:{argv[argv.index('--port') + 1]}/v1") is None  # nothing answers there any more


def test_dry_run_shows_the_served_cells_commands(tmp_path, fake, capsys):
    from triangulation.cli.main import main

    suite = write_suite(tmp_path, [VLLM_MODEL], PLAY[:2])
    assert main(["suite", str(suite), "-o", str(tmp_path / "out"), "--dry_run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    [engine] = [ln for ln in lines if ln.startswith("m1: engine ")]
    assert engine.startswith("m1: engine vllm: ") and "one server for all its cells" in engine
    assert engine.endswith("; server at http://127.0.0.1:PORT/v1")
    commands = [ln for ln in lines if ": to run: " in ln]
    assert all("--model local-chat-completions" in ln and "base_url=http://127.0.0.1:PORT/v1/chat/completions" in ln for ln in commands)
    assert len(commands) == 2 and not _lines(fake["starts"])  # nothing started
    plan = json.loads((tmp_path / "out" / "suite_plan.json").read_text())
    assert plan["models"][0]["server"] == "http://127.0.0.1:PORT/v1" and plan["models"][0]["engine"] == "vllm"


def test_a_failed_cell_is_retried_after_an_exponential_backoff(tmp_path, fake):
    """A cell failing twice (a transient backend fault) is retried after retry_wait, then 2 x retry_wait seconds."""
    counter, times = tmp_path / "n", tmp_path / "times"
    flaky = tmp_path / "flaky.sh"
    flaky.write_text(
        f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n + 1)) > {counter}; date +%s.%N >> {times}\n"
        f'[ "$n" -ge 2 ] || {{ echo "backend error: 503 Service Unavailable"; exit 1; }}\nexec {" ".join(LAUNCHER)} "$@"\n'
    )
    hf = {"name": "plain", "model": "hf", "model_args": "pretrained=org/plain"}
    suite = load_suite(write_suite(tmp_path, [hf], PLAY[:1], retries=2, retry_wait=1.5))
    result = run_suite(sweep_of(suite, tmp_path / "out"), launcher=("sh", str(flaky)))
    assert [(o.status, o.attempts) for o in result.outcomes] == [("done", 3)]
    t = [float(x) for x in times.read_text().split()]
    assert t[1] - t[0] >= 1.5 and t[2] - t[1] >= 3.0  # 1.5 s, then 3 s
    log = (tmp_path / "out" / "logs" / "plain" / "nback_verbal_1.log").read_text()
    assert log.count("backend error: 503") == 2 and "attempt 3/3" in log
