"""A stand-in for ``vllm serve`` in the suite's serving tests (``$TRIANGULATE_VLLM="python fake_vllm.py"``).

``python fake_vllm.py serve MODEL --host H --port P [...]`` answers ``GET /v1/models`` with MODEL and
``POST /v1/chat/completions`` / ``/v1/completions`` with a fixed reply after ``$FAKE_VLLM_DELAY`` seconds.
Each start appends its argv as one JSON line to ``$FAKE_VLLM_STARTS``; it starts a worker child (``sleep``) in
its process group and writes that worker's PID to ``$FAKE_VLLM_WORKER`` (so a test can check that stopping the
server ends its workers too). ``$FAKE_VLLM_MODE``: ``ok`` (default); ``fail`` (prints an error line and exits
1 before listening); ``hang`` (never listens); ``die_after=N`` (exits, workers left for the suite to clean up,
after answering N completion requests; with ``$FAKE_VLLM_DIE_STARTS=K`` only the first K starts die, later
ones answer as ``ok``: a server the suite restarts comes back healthy). ``/v1/models`` gives
``max_model_len`` as vLLM does: ``--max-model-len`` of its argv, else 4096.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main(argv: list[str]) -> int:
    assert argv[0] == "serve", argv
    model = argv[1]
    host, port = argv[argv.index("--host") + 1], int(argv[argv.index("--port") + 1])
    starts = 0
    if os.environ.get("FAKE_VLLM_STARTS"):
        with open(os.environ["FAKE_VLLM_STARTS"], "a+", encoding="utf-8") as fh:
            fh.write(json.dumps(argv) + "\n")
            fh.seek(0)
            starts = len(fh.read().splitlines())
    worker = subprocess.Popen(["sleep", "600"])
    if os.environ.get("FAKE_VLLM_WORKER"):
        with open(os.environ["FAKE_VLLM_WORKER"], "a", encoding="utf-8") as fh:
            fh.write(f"{worker.pid}\n")
    mode = os.environ.get("FAKE_VLLM_MODE", "ok")
    print(f"INFO fake vllm {model} on {host}:{port} mode {mode}", flush=True)
    if mode == "fail":
        print("ValueError: fake vllm cannot load the model (FAKE_VLLM_MODE=fail)", flush=True)
        worker.kill()
        return 1
    if mode == "hang":
        time.sleep(600)
        return 0
    die_after = int(mode.split("=", 1)[1]) if mode.startswith("die_after=") else None
    if die_after is not None and starts > int(os.environ.get("FAKE_VLLM_DIE_STARTS", "1000000")):
        die_after = None
    max_len = int(argv[argv.index("--max-model-len") + 1]) if "--max-model-len" in argv else 4096
    delay = float(os.environ.get("FAKE_VLLM_DELAY", "0"))
    answered = [0]
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):  # one line per request on stdout (the server log)
            print(f"{self.command} {self.path} {args[1] if len(args) > 1 else ''}", flush=True)

        def _send(self, code: int, payload: dict) -> None:
            body = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):  # noqa: N802 - http.server's name
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": model, "object": "model", "max_model_len": max_len}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            time.sleep(delay)
            with lock:
                answered[0] += 1
                last = die_after is not None and answered[0] >= die_after
            if self.path.endswith("/completions"):
                key = "message" if "chat" in self.path else "text"
                choice = {"index": 0, key: {"role": "assistant", "content": "yes"} if key == "message" else "yes"}
                self._send(200, {"choices": [choice]})
            else:
                self._send(404, {"error": "not found"})
            if last:
                print("RuntimeError: fake vllm engine core died (FAKE_VLLM_MODE=die_after)", flush=True)
                os._exit(3)

    ThreadingHTTPServer((host, port), Handler).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
