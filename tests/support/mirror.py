"""A loopback raw-file mirror for the download tests: ``http://127.0.0.1:<port>/<owner>/<repo>/<commit>/<path>``.

:func:`serve` runs a ``ThreadingHTTPServer`` on 127.0.0.1 in a daemon thread and stops it on exit (and by
itself after ``lifetime`` seconds at the latest). ``files`` maps URL paths to bytes or to local files;
``faults`` maps URL paths to ``404``, ``500`` or ``"hang"`` (the handler stays silent until the server
stops). Single-range requests (``Range: bytes=N-``) are answered with 206, as the code host does
(``honour_range=False``: with the whole file and 200).
"""

from __future__ import annotations

import re
import threading
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Mirror:
    url: str
    files: dict[str, bytes | Path]
    faults: dict[str, object] = field(default_factory=dict)
    hits: Counter = field(default_factory=Counter)
    ranges: list[str] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    honour_range: bool = True  # False: answer every request with the whole file (200), as some servers do


def manifest_files(upstream: Path, names: list[str] | None = None) -> dict[str, Path]:
    """URL path -> local file for every pinned file of the manifests (the raw-file layout at the pinned commits)."""
    from datasets_build.manifest import load_manifest, manifest_names

    served = {}
    for name in names or manifest_names():
        for pinned in load_manifest(name).files:
            served["/" + pinned.url("").lstrip("/")] = upstream / name / pinned.path
    return served


@contextmanager
def serve(files: dict[str, bytes | Path], faults: dict[str, object] | None = None, lifetime: float = 600.0) -> Iterator[Mirror]:
    mirror = Mirror("", files, dict(faults or {}))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            mirror.hits[path] += 1
            fault = mirror.faults.get(path)
            if fault == "hang":
                mirror.stopping.wait(lifetime)
                return
            if isinstance(fault, int):
                self.send_error(fault)
                return
            body = mirror.files.get(path)
            if body is None:
                body = mirror.files.get(urllib.parse.quote(urllib.parse.unquote(path), safe="/"))
            if body is None:
                self.send_error(404)
                return
            data = body.read_bytes() if isinstance(body, Path) else body
            start = 0
            wanted = self.headers.get("Range")
            if wanted:
                mirror.ranges.append(wanted)
            if wanted and mirror.honour_range:
                found = re.fullmatch(r"bytes=(\d+)-", wanted)
                start = int(found.group(1)) if found else 0
                if start >= len(data):
                    self.send_error(416)
                    return
            self.send_response(206 if start else 200)
            self.send_header("Content-Length", str(len(data) - start))
            self.end_headers()
            self.wfile.write(data[start:])

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    mirror.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    timer = threading.Timer(lifetime, server.shutdown)
    timer.daemon = True
    timer.start()
    try:
        yield mirror
    finally:
        mirror.stopping.set()
        timer.cancel()
        server.shutdown()
        server.server_close()
        thread.join(5)
