"""Serve a suite model once (``engine: vllm``) or reach an existing endpoint (``engine: api``).

With ``engine: vllm`` the suite starts one ``vllm serve`` for the model, waits for ``/v1/models`` with a
bounded timeout, runs all the model's cells against it as client processes, then stops it by its PID and
process group. vLLM is ``$TRIANGULATE_VLLM`` (a command line, e.g. ``python benchmarks/vllm_cpu.py`` for the
CPU recipe in benchmarks/README.md) or ``vllm`` on PATH. The server listens on a free port of 127.0.0.1, in
its own process group (so a Ctrl-C at the terminal reaches the suite, which stops it), is told to stop when
the suite's process dies (``PR_SET_PDEATHSIG``), and logs to ``DIR/logs/<model>/server.log``.

A cell reaches the server through lm-eval's OpenAI-compatible clients: generation tasks and play tasks through
``local-chat-completions``, loglikelihood tasks (``output_type`` ``loglikelihood``, ``multiple_choice``, ...)
through ``local-completions-onepass`` (:func:`triangulation.suite.cells.needs_completions`; :mod:`models.onepass`: lm-eval's
``local-completions`` scoring a question's one-token choices from one request, each choice's own request
otherwise, and everything per choice, said once in the cell's log, on a server that cannot: an ``engine: api``
endpoint that is not vLLM). The vLLM server is started with ``--max-logprobs`` at least what that client asks
for. ``engine: api`` gives an endpoint's ``base_url``
and the name of an environment variable that holds its key; the key reaches the cells as
``OPENAI_API_KEY`` in their environment only, never on a command line or in a file.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.choice_groups import DEFAULT_LOGPROBS, ONE_PASS_MODEL
from models.default_model import DEFAULT_MODEL_NAME, export_transformers_folder
from models.ref import ModelRef
from plumbing.errors import UserError
from plumbing.paths import cache_root
from triangulation.suite.spec import ModelSpec

VLLM_ENV = "TRIANGULATE_VLLM"
#: model_args of an ``hf``/``vllm`` suite model that become ``vllm serve`` flags
SERVE_FLAGS = {"dtype": "--dtype", "revision": "--revision", "max_length": "--max-model-len"}
PARALLEL_FLAGS = ("--tensor-parallel-size", "-tp", "--data-parallel-size", "-dp", "--pipeline-parallel-size", "-pp")


class ServerError(RuntimeError):
    """The server did not come up or died; the message is one line (the log's last line included)."""


#: SLURM's checkpoint signal (submitit's ``--signal=USR2@N``), sent to every process of the job
CHECKPOINT_SIGNAL = signal.SIGUSR2


def deaf_to_checkpoint(argv: list[str]) -> list[str]:
    """``argv`` started with SLURM's checkpoint signal ignored when inside a SLURM job (an ignored signal stays
    ignored across ``exec``): the signal is for the job's submitit process, which checkpoints and requeues; a cell
    or server that died of it (Python's default) would lose the time left before the limit."""
    if not os.environ.get("SLURM_JOB_ID"):
        return list(argv)
    shim = f"import os, signal, sys; signal.signal({int(CHECKPOINT_SIGNAL)}, signal.SIG_IGN); os.execvp(sys.argv[1], sys.argv[1:])"
    return [sys.executable, "-c", shim, *argv]


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to send SIGTERM to this child when its parent exits (prctl PR_SET_PDEATHSIG = 1)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


#: a progress bar's line (tqdm: ``Requesting API:   0%|          | 0/1 [00:00<?, ?it/s]``): never the reason a cell failed
PROGRESS_LINE = re.compile(r"\d+%\|.*\|\s*[\d.?]+\w?/[\d.?]+\w?\s*\[")
#: the one line a failing triangulate command ends with (``triangulate: error: ...``, ``triangulate play: error: ...``)
ERROR_LINE = re.compile(r"^triangulate(?: \w+)?: error: ")


def last_line(path: Path) -> str:
    """Why a log's command failed, in one line (at most 300 characters), or ``""``: its last ``triangulate: error:``
    line, else its last non-empty line that is no progress bar (a traceback or a warning printed after the error,
    or a progress bar closed at exit, is not the reason)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not PROGRESS_LINE.search(ln)]
    errors = [ln for ln in lines if ERROR_LINE.match(ln)]
    return (errors or lines or [""])[-1][:300]


def model_cards(base_url: str, api_key: str | None = None, timeout: float = 2) -> list[dict[str, Any]] | None:
    """The model cards ``GET {base_url}/models`` lists (vLLM's carry ``max_model_len``), or None while nothing
    answers there."""
    request = urllib.request.Request(f"{base_url.rstrip('/')}/models")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return [m for m in json.load(resp).get("data", []) if isinstance(m, dict)]
    except (OSError, ValueError, AttributeError):
        return None


def list_models(base_url: str, api_key: str | None = None, timeout: float = 2) -> list[str] | None:
    """The model ids ``GET {base_url}/models`` lists, or None while nothing answers there."""
    cards = model_cards(base_url, api_key, timeout)
    return None if cards is None else [str(m.get("id")) for m in cards]


def max_model_len(cards: list[dict[str, Any]] | None, model: str) -> int | None:
    """The context length the server gives ``model`` (``max_model_len`` of its card; the only card's when
    none has that id), or None when the server does not say (an endpoint that is not vLLM)."""
    cards = cards or []
    card = next((c for c in cards if str(c.get("id")) == model), cards[0] if len(cards) == 1 else None)
    value = (card or {}).get("max_model_len")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class ServerProcess:
    """A server as a child process in its own process group; :meth:`stop` ends it and its workers by PID.

    ``argv``/``env`` start it, its stdout and stderr go to ``log`` (appended), ``base_url`` is where it
    answers ``GET /models`` once it is up.
    """

    def __init__(self, argv: list[str], log: Path, base_url: str, env: Mapping[str, str] | None = None):
        self.argv, self.log, self.base_url = list(argv), Path(log), base_url
        self.env = dict(os.environ if env is None else env)
        self.proc: subprocess.Popen | None = None
        self.cards: list[dict[str, Any]] | None = None  # what /models answered once the server was up

    def start(self) -> ServerProcess:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("a", encoding="utf-8") as fh:
            command = shlex.join(self.argv).replace("\n", "\\n")  # one line
            fh.write(f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} {command}\n")
            fh.flush()
            try:
                self.proc = subprocess.Popen(
                    deaf_to_checkpoint(self.argv),
                    stdout=fh,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=self.env,
                    start_new_session=True,
                    preexec_fn=die_with_parent,
                )
            except OSError as exc:
                raise ServerError(f"cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        return self

    def wait_ready(self, timeout: float, api_key: str | None = None) -> list[str]:
        """Poll ``/models`` until it answers (returns the model ids); :class:`ServerError` when the process
        exits first or ``timeout`` seconds pass (the server is stopped then)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                raise ServerError(f"server exited with status {self.proc.returncode} before answering: {last_line(self.log)}")
            cards = model_cards(self.base_url, api_key)
            if cards is not None:
                self.cards = cards
                return [str(m.get("id")) for m in cards]
            if time.monotonic() >= deadline:
                self.stop()
                raise ServerError(f"no answer on {self.base_url}/models within {timeout:g} s: {last_line(self.log)}")
            time.sleep(0.5)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def stop(self, sig: int = signal.SIGTERM, grace: float = 20) -> None:
        """Send ``sig`` to the server's process group and wait (SIGKILL after ``grace`` s); workers that
        outlive the server get SIGKILL too."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self._signal(sig)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait(timeout=grace)
        self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def vllm_command() -> list[str]:
    """``$TRIANGULATE_VLLM`` split like a shell would, else ``vllm`` on PATH; :class:`ServerError` if neither."""
    override = os.environ.get(VLLM_ENV, "").strip()
    if override:
        return shlex.split(override)
    found = shutil.which("vllm")
    if not found:
        raise ServerError(f"vllm not found: install vLLM (`vllm` on PATH) or set ${VLLM_ENV} to its command")
    return [found]


@dataclass(frozen=True)
class ClientModels:
    """``(--model, --model_args)`` of a served model's client cells, made once when its endpoint is opened
    (:meth:`Endpoint.with_clients`): ``completions`` for a cell that calls ``/v1/completions``, ``chat`` for one
    that calls ``/v1/chat/completions``."""

    completions: tuple[str, str]
    chat: tuple[str, str]


@dataclass
class Endpoint:
    """Where a model's cells send their requests, how they authenticate, and (once opened) their client models."""

    base_url: str  # http://HOST:PORT/v1
    model: str  # the name the server answers to (``model=`` of the client's model_args)
    tokenizer: str | None = None  # a local tokenizer for ``local-completions`` (loglikelihood)
    extra_args: dict[str, Any] = field(default_factory=dict)  # the suite's other client model_args
    api_key_env: str | None = None  # the variable whose value is the key (``engine: api``)
    server: ServerProcess | None = None
    #: the server's context length (``max_model_len`` of ``/v1/models``): the clients' ``max_length``, so
    #: lm-eval truncates where the model does, not at its API default of 2048 tokens
    max_length: int | None = None
    #: the cells' client models, made once the endpoint is open (:meth:`with_clients`)
    clients: ClientModels | None = None

    def opened(self, num_concurrent: int) -> Endpoint:
        """This endpoint of a server that answers: its ``max_length`` read from ``/models`` (the cards the server answered
        when it came up, else asked now; None when it does not say: lm-eval's default then), then its clients made with
        it (:meth:`with_clients`)."""
        cards = self.server.cards if self.server is not None and self.server.cards is not None else None
        if cards is None:
            cards = model_cards(self.base_url, self.api_key(), timeout=10)
        self.max_length = max_model_len(cards, self.model)
        return self.with_clients(num_concurrent)

    def alive(self) -> bool:
        return self.server is None or self.server.alive()

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def client_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with the key as ``OPENAI_API_KEY`` (lm-eval's clients read it there)."""
        out = dict(env)
        key = self.api_key()
        if key:
            out["OPENAI_API_KEY"] = key
        return out

    def client(self, completions: bool, num_concurrent: int) -> tuple[str, str]:
        """``(--model, --model_args)`` for a cell: ``local-completions-onepass`` when it scores loglikelihoods."""
        args: dict[str, Any] = {"model": self.model, **self.extra_args}
        args["base_url"] = f"{self.base_url}/completions" if completions else f"{self.base_url}/chat/completions"
        args["num_concurrent"] = num_concurrent
        args.setdefault("max_retries", 3)
        if self.max_length:
            args.setdefault("max_length", self.max_length)
        if completions and self.tokenizer:
            args.update(tokenizer_backend="huggingface", tokenizer=self.tokenizer)
        text = ",".join(f"{k}={v}" for k, v in args.items())
        return (ONE_PASS_MODEL if completions else "local-chat-completions"), text

    def with_clients(self, num_concurrent: int) -> Endpoint:
        """This endpoint with its cells' :class:`ClientModels` made (:meth:`client`, ``num_concurrent`` requests each)."""
        self.clients = ClientModels(self.client(True, num_concurrent), self.client(False, num_concurrent))
        return self


def embedded_model_folder(export: bool = True) -> Path:
    """The embedded SmolLM2 as a transformers folder that vLLM can load (exported once, then cached)."""
    folder = cache_root() / "served" / DEFAULT_MODEL_NAME
    return export_transformers_folder(folder) if export else folder


def vllm_argv(path: str, port: int, model_args: Mapping[str, Any], gpus: int, serve_args: Iterable[str]) -> list[str]:
    """``vllm serve PATH`` on 127.0.0.1:PORT: prefix caching on, the top-k logprobs the one-pass client asks for
    allowed (unless ``serve_args`` sets ``--max-logprobs``), ``gpus`` as the tensor-parallel size (unless
    ``serve_args`` sets a parallel size), dtype/revision/max_length from ``model_args``, then ``serve_args``."""
    extra = list(serve_args)
    argv = [*vllm_command(), "serve", path, "--host", "127.0.0.1", "--port", str(port), "--enable-prefix-caching"]
    if not any(a.split("=", 1)[0] == "--max-logprobs" for a in extra):
        argv += ["--max-logprobs", str(DEFAULT_LOGPROBS)]
    for key, flag in SERVE_FLAGS.items():
        if model_args.get(key) not in (None, "", "auto") and flag not in extra:
            argv += [flag, str(model_args[key])]
    if str(model_args.get("trust_remote_code", "")).lower() == "true":
        argv.append("--trust-remote-code")
    if gpus > 1 and not any(a.split("=", 1)[0] in PARALLEL_FLAGS for a in extra):
        argv += ["--tensor-parallel-size", str(gpus)]
    return argv + extra


def replica_args(gpus: int, replicas: int) -> list[str]:
    """``vllm serve`` flags for data-parallel replicas of ``gpus`` GPUs each, with the tensor-parallel size said
    too (a parallel flag in serve_args turns off the default one)."""
    if replicas <= 1:
        return []
    tp = ["--tensor-parallel-size", str(gpus)] if gpus > 1 else []
    return [*tp, "--data-parallel-size", str(replicas)]


def served_path(ref: ModelRef, export: bool = True) -> tuple[str, dict[str, Any]]:
    """The weights ``vllm serve`` loads (``pretrained=`` of an ``hf``/``vllm`` model; the embedded SmolLM2
    when the model names none, exported unless ``export`` is false) and the parsed model_args."""
    args = ref.args_dict()
    if ref.embedded:
        return str(embedded_model_folder(export)), {"dtype": "float32", "max_length": 4096}
    path = args.get("pretrained") or args.get("model")
    if not path:
        raise UserError("engine: vllm needs `pretrained=` (a Hub id or a local folder) in the model's model_args")
    return str(path), args


def start_vllm(
    ref: ModelRef, log: Path, gpus: int = 1, serve_args: Iterable[str] = (), env: Mapping[str, str] | None = None, replicas: int = 1
) -> Endpoint:
    """Start ``vllm serve`` for one model on ``gpus`` GPUs per replica, ``replicas`` data-parallel replicas (the
    pool's choice); not yet waited for: call ``endpoint.server.wait_ready``."""
    path, args = served_path(ref)
    port = free_port()
    argv = vllm_argv(path, port, args, gpus, (*serve_args, *replica_args(gpus, replicas)))
    server = ServerProcess(argv, log, f"http://127.0.0.1:{port}/v1", env=env).start()
    return Endpoint(server.base_url, model=path, tokenizer=path, server=server)


def open_endpoint(model: ModelSpec, log: Path, env: Mapping[str, str], started: list[Endpoint], replicas: int = 1) -> Endpoint:
    """A served model's endpoint, ready for its cells: an ``engine: api`` endpoint as the suite names it; else ``vllm
    serve`` started (``log``: its log; ``env``: its environment, its GPUs; ``replicas``: data-parallel replicas) and
    waited for up to the model's ``serve_timeout`` (:class:`ServerError`; it is stopped then). The endpoint is put in
    ``started`` before it is waited for (whoever stops the sweep stops its server). Its ``max_length`` is read, then
    its cells' client models are made with it (:meth:`Endpoint.opened`)."""
    if model.engine == "api":
        endpoint = api_endpoint(model.base_url or "", model.ref.args, model.api_key_env)
        started.append(endpoint)
    else:
        endpoint = start_vllm(model.ref, log, gpus=model.gpu_count, serve_args=model.serve_args, env=env, replicas=replicas)
        started.append(endpoint)
        try:
            endpoint.server.wait_ready(model.serve_timeout)
        except BaseException:  # exited early (its workers may not have), timed out, or Ctrl-C
            endpoint.server.stop()
            raise
    return endpoint.opened(model.num_concurrent)


def planned_endpoint(model: ModelSpec) -> Endpoint:
    """The endpoint a served model's cells will use, with their client models, without starting anything
    (``--dry_run``): a vLLM server's port is only known once it starts (shown as ``PORT``)."""
    if model.engine == "api":
        endpoint = api_endpoint(model.base_url or "", model.ref.args, model.api_key_env)
    else:
        path, _ = served_path(model.ref, export=False)
        endpoint = Endpoint("http://127.0.0.1:PORT/v1", model=path, tokenizer=path)
    return endpoint.with_clients(model.num_concurrent)


def api_endpoint(base_url: str, model_args: Mapping[str, Any], api_key_env: str | None) -> Endpoint:
    """An existing OpenAI-compatible endpoint; ``model_args`` (parsed) names the served model (``model=``)."""
    args = dict(model_args)
    name = args.pop("model", None) or args.pop("pretrained", None)
    if not name:
        raise UserError("engine: api needs `model=` (the name the endpoint serves) in the model's model_args")
    for key in ("base_url", "num_concurrent"):
        args.pop(key, None)
    return Endpoint(base_url.rstrip("/"), model=str(name), tokenizer=args.pop("tokenizer", None), extra_args=args, api_key_env=api_key_env)
