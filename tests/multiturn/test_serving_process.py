"""The serving helper's process handling, on a stand-in server (a few lines of ``http.server`` answering
``/v1/models``): its workers stop with it, and it stops when the process that started it is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.serving import Server

REPO = Path(__file__).resolve().parents[2]

STAND_IN = """
import http.server, json, subprocess, sys
worker = subprocess.Popen(["sleep", "300"])  # like vLLM's engine core: a child of the server
print("worker", worker.pid, flush=True)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": "stand-in"}]}).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


class StandIn(Server):
    def command(self) -> tuple[list[str], dict[str, str]]:
        return [sys.executable, "-c", STAND_IN, str(self.port)], dict(os.environ)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie awaiting its parent counts as gone
        return fh.read().split(") ")[1][0] != "Z"


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def _worker_pid(log: Path) -> int:
    deadline = time.time() + 30
    while time.time() < deadline:
        for line in log.read_text().splitlines() if log.exists() else []:
            if line.startswith("worker "):
                return int(line.split()[1])
        time.sleep(0.1)
    raise AssertionError(f"no worker line in {log}")


def test_stop_ends_the_server_and_its_workers(tmp_path):
    server = StandIn(tmp_path, tmp_path / "server.log").start(timeout=30)
    assert server.models() == ["stand-in"]
    worker = _worker_pid(tmp_path / "server.log")
    server.stop()
    assert server.proc.poll() is not None
    assert _gone_within(worker, 10)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killing_the_test_process_stops_its_server(tmp_path, sig):
    parent = f"""
import sys, time
sys.path.insert(0, {str(REPO)!r})
sys.path.insert(0, {str(Path(__file__).parent)!r})
from pathlib import Path
from test_serving_process import StandIn
server = StandIn(Path({str(tmp_path)!r}), Path({str(tmp_path / "server.log")!r})).start(timeout=30)
print(server.proc.pid, flush=True)
time.sleep(300)
"""
    proc = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        server_pid = int(proc.stdout.readline())
        assert _alive(server_pid)
        proc.send_signal(sig)
        proc.wait(timeout=30)
        assert _gone_within(server_pid, 10), "the server outlived the process that started it"
    finally:
        proc.kill()


def test_vllm_command_uses_the_launcher_and_the_cpu_device(tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_TARGET_DEVICE", raising=False)
    argv, env = Server(tmp_path, tmp_path / "log", port=8123, engine="vllm", vllm_python="/venv/bin/python").command()
    assert argv[:4] == ["/venv/bin/python", str(REPO / "benchmarks" / "vllm_cpu.py"), "serve", str(tmp_path)]
    assert argv[argv.index("--port") + 1] == "8123" and argv[argv.index("--dtype") + 1] == "float32"
    assert env["VLLM_TARGET_DEVICE"] == "cpu"
    assert Server(tmp_path, tmp_path / "log", engine="vllm").metrics_url.endswith("/metrics")
    assert Server(tmp_path, tmp_path / "log").metrics_url is None


def test_vllm_without_a_python_and_unknown_engines_are_one_line_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("TRIANGULATE_VLLM_PYTHON", raising=False)
    with pytest.raises(RuntimeError, match="TRIANGULATE_VLLM_PYTHON"):
        Server(tmp_path, tmp_path / "log", engine="vllm").command()
    with pytest.raises(ValueError, match="unknown serving engine 'sglang'"):
        Server(tmp_path, tmp_path / "log", engine="sglang")


def test_the_vllm_launcher_answers_vllms_version_question_with_vllm_cpus():
    """Without the launcher, ``importlib.metadata.version("vllm")`` fails for the distribution ``vllm-cpu``."""
    code = (
        "import importlib.metadata as m, runpy, sys\n"
        "real = m.version\n"
        "m.version = lambda n: '9.9.9' if n == 'vllm-cpu' else real(n)\n"
        f"runpy.run_path({str(REPO / 'benchmarks' / 'vllm_cpu.py')!r}, run_name='not_main')\n"
        "print(m.version('vllm'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "9.9.9"
