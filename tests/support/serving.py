"""A real OpenAI-compatible server on 127.0.0.1 for the serving tests and the benchmark: ``transformers serve``
on the embedded SmolLM2 exported as a plain transformers folder (transformers serve cannot load the GGUF)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``transformers serve FOLDER`` as a child process; :meth:`stop` ends it by its PID."""

    def __init__(self, folder: Path, log: Path, port: int | None = None, extra: list[str] | None = None):
        self.folder, self.log, self.port = Path(folder), Path(log), port or free_port()
        self.extra = list(extra or [])
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_args(self, **extra) -> str:
        args = {"model": str(self.folder), "base_url": f"{self.base_url}/chat/completions", "max_retries": 1, **extra}
        return ",".join(f"{k}={v}" for k, v in args.items())

    def start(self, timeout: float = 300) -> Server:
        exe = shutil.which("transformers") or "transformers"
        cmd = [exe, "serve", str(self.folder), "--host", "127.0.0.1", "--port", str(self.port), "--device", "cpu", *self.extra]
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        with self.log.open("a") as fh:
            self.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            if self.models() is not None:
                return self
            time.sleep(0.5)
        self.stop()
        raise TimeoutError(f"no answer on {self.base_url}/models within {timeout:g} s")

    def models(self) -> list[str] | None:
        """The model ids ``GET /v1/models`` lists, or None while the server does not answer."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                return [m["id"] for m in json.load(resp)["data"]]
        except OSError:
            return None

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Send ``sig`` to the server's PID and wait for it (SIGKILL after 20 s)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, sig)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=20)


def exported_smollm2(dest: Path) -> Path:
    """The embedded model as a transformers folder (see :func:`multiturn.default_model.export_transformers_folder`)."""
    from multiturn.default_model import export_transformers_folder

    return export_transformers_folder(dest)


if __name__ == "__main__":  # python tests/support/serving.py FOLDER: export the model there
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    print(exported_smollm2(Path(sys.argv[1])))
