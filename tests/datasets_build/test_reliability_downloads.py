"""Issue 23 items 5 and 12 (hostile mirrors, killed builds): a download stops at the size the manifest records
(+0 bytes) with one line, and a build removes the ``.building`` folders a killed build left."""

from __future__ import annotations

import hashlib
import http.server
import os
import subprocess
import sys
import threading
import time

import pytest

from datasets_build import sources
from datasets_build.hub import atomic_dir
from datasets_build.manifest import ManifestEntry
from plumbing.errors import UserError

BODY = b"x" * 1000


class Endless(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the expected bytes and then more, without end (no Content-Length)."""

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.end_headers()
        try:
            self.wfile.write(BODY)
            while True:
                self.wfile.write(b"y" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


def test_an_endless_mirror_is_cut_at_the_manifest_size(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sources.configure(cache_dir=tmp_path / "cache", timeout=5.0, retries=3)
        entry = ManifestEntry("toy", "a.txt", "o/r", "c" * 40, "a.txt", len(BODY), hashlib.sha256(BODY).hexdigest())
        started = time.time()
        with pytest.raises(UserError, match=f"more than the {len(BODY)} bytes") as info:
            sources.download_file(entry, f"http://127.0.0.1:{server.server_address[1]}/a.txt", tmp_path / "a.txt")
        assert time.time() - started < 20 and "\n" not in str(info.value)
        assert not list(tmp_path.glob("a.txt*"))  # neither the file nor a huge .part is left
    finally:
        server.shutdown()
        server.server_close()
        sources.reset()


def test_a_build_removes_the_folders_a_killed_build_left(tmp_path):
    final = tmp_path / "nback"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".nback.building-{dead.pid}-deadbeef"
    (stale / "sub").mkdir(parents=True)
    live = tmp_path / f".nback.building-{os.getpid()}-cafecafe"  # a concurrent build still running: kept
    live.mkdir()
    with atomic_dir(final) as tmp:
        (tmp / "README.md").write_text("x")
    assert (final / "README.md").is_file() and not stale.exists() and live.exists()
