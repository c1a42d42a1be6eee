"""Issue 23 item 1 end to end: a suite with an API key and a URL password in model_args, run against a fake
OpenAI-compatible server (one play cell, one lm-eval cell with --log_samples); neither secret is in any file the
run writes nor in anything it prints, although both reached the server."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fake_chat import FakeChatServer

ROOT = Path(__file__).resolve().parents[2]
KEY, PASSWORD = "SECRETXYZ", "PASSSECRET"


@pytest.mark.slow
def test_suite_run_writes_and_prints_no_secret(tmp_path, upstream):
    from tests.support.built_data import built_data_root

    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRIANGULATE_DATA": str(built_data_root(str(upstream))), "OMP_NUM_THREADS": "1"}
    with FakeChatServer('"m"') as server:
        args = f"model=fake,base_url={server.url('user:' + PASSWORD)},api_key={KEY},tokenizer_backend=None"
        suite = tmp_path / "s.yaml"
        suite.write_text(
            f"models:\n  - name: leaky\n    model: local-chat-completions\n    model_args: {args}\n"
            "tasks:\n  - play: nback_verbal_1\n    limit: 1\n  - eval: globalgroup_zh\n    limit: 1\n    log_samples: true\n",
            encoding="utf-8",
        )
        out = tmp_path / "out"
        runs = [
            subprocess.run(
                [sys.executable, "-m", "triangulation", "suite", str(suite), "--output_path", str(out), *extra],
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            for extra in (["--no_report"], ["--dry_run"])
        ]
    assert runs[0].returncode == 0, runs[0].stderr[-2000:]
    assert server.headers, "the backend was never called"
    basic = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    assert any(basic in h.get("Authorization", "") for h in server.headers)  # the password did reach the server
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name.startswith("samples_") for p in written) and any(p.name.startswith("episodes_") for p in written)
    assert any(p.suffix == ".log" for p in written)
    for secret in (KEY, PASSWORD, basic):
        leaks = [str(p) for p in written if secret.encode() in p.read_bytes()]
        assert not leaks, f"{secret} written to {leaks}"
        for run in runs:
            assert secret not in run.stdout + run.stderr
