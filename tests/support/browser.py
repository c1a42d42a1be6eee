"""Headless Chromium for the HTML tests: load a page, read its DOM after scripts ran and its console errors.

Debian's ``chromium`` package (``.ci/run`` installs it). When no browser is on PATH the tests skip with
that reason; nothing else makes them skip.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]


def chromium() -> str:
    """The browser's path, or skip the calling test saying how to get one."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium on PATH: `apt-get install -y chromium` (.ci/run installs it)")


@dataclass
class Loaded:
    dom: str
    console: list[str]  # the page's console lines

    @property
    def errors(self) -> list[str]:
        """Uncaught exceptions and console.error lines."""
        return [line for line in self.console if "Uncaught" in line or ":ERROR:CONSOLE" in line]


def run_chromium(args: list[str], timeout: int = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=timeout)


def load(page: Path, fragment: str = "") -> Loaded:
    """Open ``page`` (``#fragment`` appended), let its scripts run, return the DOM and console lines."""
    url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
    proc = run_chromium(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000", "--dump-dom", url])
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    return Loaded(dom=proc.stdout, console=console)


def screenshot(page: Path, png: Path, fragment: str = "", size: str = "1200,1600") -> Path:
    url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
    run_chromium([f"--window-size={size}", f"--screenshot={png}", url])
    return png


def page_text(
    url: str, until: str, timeout: float = 60.0, expression: str = "document.body ? document.body.innerText : ''", window_size: str = ""
) -> str:
    """Open ``url`` in headless Chromium (a ``window_size`` such as ``"1400,900"`` if given) and return ``expression``
    (a string) once it contains ``until`` or ``timeout`` seconds passed. Real time, not ``--virtual-time-budget``: single-page apps that fetch
    their data (Inspect's viewer) render only then. Driven over ``--remote-debugging-pipe`` (fds 3 and 4)."""
    import json
    import os
    import time

    to_chrome, from_chrome = os.pipe(), os.pipe()  # (read, write) each

    def wire_fds() -> None:  # in the child: Chromium reads commands on fd 3, writes replies on fd 4
        r, w = os.dup(to_chrome[0]), os.dup(from_chrome[1])
        os.dup2(r, 3)
        os.dup2(w, 4)

    with tempfile.TemporaryDirectory(prefix="chromium-profile-", ignore_cleanup_errors=True) as profile:
        proc = subprocess.Popen(
            [
                chromium(),
                *FLAGS,
                *([f"--window-size={window_size}"] if window_size else []),
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=wire_fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome[0])
        os.close(from_chrome[1])
        buffer, next_id = b"", 0

        def call(method: str, params: dict, session: str | None = None) -> dict:
            nonlocal buffer, next_id
            next_id += 1
            message = {"id": next_id, "method": method, "params": params, **({"sessionId": session} if session else {})}
            os.write(to_chrome[1], json.dumps(message).encode() + b"\0")
            while True:
                while b"\0" in buffer:
                    raw, buffer = buffer.split(b"\0", 1)
                    reply = json.loads(raw)
                    if reply.get("id") == next_id:
                        return reply.get("result", {})
                chunk = os.read(from_chrome[0], 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed its debugging pipe")
                buffer += chunk

        try:
            target = call("Target.createTarget", {"url": url})["targetId"]
            session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            deadline, text = time.monotonic() + timeout, ""
            while time.monotonic() < deadline:
                result = call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
                text = str(result.get("result", {}).get("value", ""))
                if until in text:
                    break
                time.sleep(0.3)
            return text
        finally:  # close the browser (and its child processes) before its profile folder is removed
            try:
                os.write(to_chrome[1], json.dumps({"id": next_id + 1, "method": "Browser.close", "params": {}}).encode() + b"\0")
                proc.wait(timeout=15)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
            os.close(to_chrome[1])
            os.close(from_chrome[0])


@contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """Serve ``folder`` read-only on 127.0.0.1 (a free port) in a daemon thread; yields its base URL."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address) -> None:  # the browser hung up mid-file: not our business
            pass

    server = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
