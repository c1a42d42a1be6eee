"""Issue 23 item 1 and issue 30 items 5-9 end to end: a suite with an API key, a URL password holding a ``'`` and a
secret-named gen_kwarg, run against a fake OpenAI-compatible server that echoes the key and the Authorization
header it gets into every reply (one play cell, one lm-eval cell with --log_samples, for a model reached
directly and one ``engine: api`` endpoint), then planned with ``--dry_run``. None of the planted secrets is in
any file the runs write, in anything they print, or in any command line of their child processes
(``/proc/<pid>/cmdline``, read while they run), although every one reached the server."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.fake_chat import FakeChatServer

ROOT = Path(__file__).resolve().parents[2]
KEY, PASSWORD, TOKEN = "SECRETXYZ-i30", "PASS'SECRET-i30", "GENTOKEN-i30-secret"
BASIC = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
PLANTED = (KEY, PASSWORD, "SECRET-i30", TOKEN, BASIC)


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class ArgvWatch:
    """Every command line of ``proc``'s descendants, read from ``/proc/<pid>/cmdline`` every 50 ms while it runs."""

    def __init__(self, proc: subprocess.Popen):
        self.proc, self.cmdlines = proc, set()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while self.proc.poll() is None:
            for pid in [self.proc.pid, *_descendants(self.proc.pid)]:
                try:
                    self.cmdlines.add(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace"))
                except OSError:
                    pass
            time.sleep(0.05)


def _suite(path: Path, server: FakeChatServer) -> Path:
    args = f"model=fake,base_url={server.url('user:' + PASSWORD)},api_key={KEY},tokenizer_backend=None"
    endpoint = server.url("user:" + PASSWORD).removesuffix("/chat/completions")
    path.write_text(
        f'models:\n  - name: leaky\n    model: local-chat-completions\n    model_args: "{args}"\n'
        f'  - name: remote\n    engine: api\n    model: local-chat-completions\n    model_args: model=fake\n    base_url: "{endpoint}"\n'
        "    api_key_env: I30_API_KEY\n"
        f"tasks:\n  - play: nback_verbal_1\n    limit: 1\n    gen_kwargs: {{auth_token: {TOKEN}}}\n"
        f"  - eval: globalgroup_zh\n    limit: 1\n    log_samples: true\n    gen_kwargs: {{auth_token: {TOKEN}}}\n",
        encoding="utf-8",
    )
    return path


def _run(argv: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watch = ArgvWatch(proc)
    out, err = proc.communicate(timeout=900)
    watch.thread.join(timeout=5)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), watch.cmdlines


@pytest.mark.slow
def test_suite_run_writes_and_prints_no_secret(tmp_path, upstream):
    from tests.support.built_data import built_data_root

    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRIANGULATE_DATA": str(built_data_root(str(upstream))), "OMP_NUM_THREADS": "1"}
    env["I30_API_KEY"] = "ENVKEY-i30-not-planted"  # engine: api's key travels as OPENAI_API_KEY (issue 23)
    echo = lambda headers: json.dumps(f"my key is {KEY}; you sent {headers.get('Authorization', '')}")  # noqa: E731
    with FakeChatServer(echo) as server:
        suite = _suite(tmp_path / "s.yaml", server)
        out = tmp_path / "out"
        runs = [
            _run([sys.executable, "-m", "triangulation", "suite", str(suite), "--output_path", str(out), *extra], env)
            for extra in (["--no_report"], ["--dry_run"])
        ]
    assert runs[0][0].returncode == 0, runs[0][0].stderr[-3000:]
    assert any(BASIC in h.get("Authorization", "") for h in server.headers)  # the password did reach the server
    cmdlines = runs[0][1] | runs[1][1]
    assert sum("nback_verbal_1" in c and "--model_args" in c for c in cmdlines) >= 2, cmdlines  # the cells were seen running
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "s.yaml"]
    assert any(p.name.startswith("samples_") for p in written) and any(p.name.startswith("episodes_") for p in written)
    assert any(p.suffix == ".log" for p in written) and any(p.name == "suite_plan.json" for p in written)
    assert any("<redacted>" in p.read_text(encoding="utf-8", errors="replace") for p in written if p.name.startswith("episodes_"))
    for secret in PLANTED:
        leaks = [str(p) for p in written if secret.encode() in p.read_bytes()]
        assert not leaks, f"{secret} written to {leaks}"
        for run, _ in runs:
            assert secret not in run.stdout + run.stderr
        assert not [c for c in cmdlines if secret in c], f"{secret} in a child's argv"
