"""A stand-in for ``triangulate eval|play`` as a suite cell that is a client of a server (``--launcher``).

``python fake_cell.py eval|play --tasks T --output_path O --model M --model_args A ...`` appends one JSON line
to ``$FAKE_CELL_LOG`` when it starts and one when it ends (argv, times, whether ``OPENAI_API_KEY`` was set,
``CUDA_VISIBLE_DEVICES``, and ``cmdline``: its argv as ``ps`` shows it), then sends ``$FAKE_CELL_REQUESTS`` (default 2) requests to the ``base_url`` of
its model_args, ``$FAKE_CELL_SLEEP`` seconds apart, with the key as a bearer token. All answered: it writes
``O/<model>/results_<time>.json`` and exits 0; a request that fails: it prints the error and exits 1 (a
backend fault, as ``triangulate play`` reports one). A cell with no ``base_url`` (an ``hf`` model) only
writes its results.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def _log(event: str, argv: list[str]) -> None:
    path = os.environ.get("FAKE_CELL_LOG")
    if not path:
        return
    line = {
        "event": event,
        "t": time.time(),
        "pid": os.getpid(),
        "argv": argv,
        "cmdline": Path("/proc/self/cmdline").read_bytes().decode("utf-8", "replace").split("\0"),
        "has_key": bool(os.environ.get("OPENAI_API_KEY")),
        "key_matches": os.environ.get("OPENAI_API_KEY") == os.environ.get("FAKE_CELL_EXPECT_KEY"),
        "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


def main(argv: list[str]) -> int:
    _log("start", argv)
    args = dict(p.split("=", 1) for p in (_flag(argv, "--model_args") or "").split(",") if "=" in p)
    url = args.get("base_url")
    for i in range(int(os.environ.get("FAKE_CELL_REQUESTS", "2")) if url else 0):
        time.sleep(float(os.environ.get("FAKE_CELL_SLEEP", "0.2")))
        request = urllib.request.Request(url, data=json.dumps({"model": args.get("model"), "i": i}).encode(), method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Authorization", f"Bearer {os.environ.get('OPENAI_API_KEY', '')}")
        try:
            with urllib.request.urlopen(request, timeout=10) as resp:
                json.load(resp)
        except OSError as exc:
            print(f"backend error: {type(exc).__name__}: {exc}", flush=True)
            _log("failed", argv)
            return 1
    out = Path(_flag(argv, "--output_path") or ".") / "fake-model"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"results_{time.time_ns()}.json").write_text(json.dumps({"results": {}, "config": {"model_args": args}}))
    _log("end", argv)
    return 0


if __name__ == "__main__":
    from plumbing.secrets import reveal_argv_secrets

    sys.exit(main(reveal_argv_secrets(sys.argv[1:])))  # as `triangulate` does: credentials come in the environment
