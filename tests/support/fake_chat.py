"""A fake OpenAI-compatible chat server on 127.0.0.1 (a thread of the test process) for the reliability tests.

Every ``POST .../chat/completions`` is answered with ``reply`` (a JSON string literal, sent as is, so a test can
send what a hostile server sends: ``"m \\ud800"`` is a lone surrogate once decoded); the request headers are kept
in ``headers`` (a test can check the credentials arrived, and then that they are written nowhere).
``reply_literal`` may be a function of the request headers (a server echoing the key it was sent); ``body``, when
given, is sent as the whole response body instead (an HTTP 200 carrying ``{"error": ...}`` or a malformed
``choices``); ``on_request`` is called with each request's headers while the client waits for the answer.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable


class FakeChatServer:
    def __init__(self, reply_literal: str | Callable[[dict], str] = '"m"', body: str | None = None, on_request: Callable | None = None):
        self.reply_literal, self.body = reply_literal, body  # both may be switched while it serves
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802  (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                server.headers.append(dict(self.headers))
                if on_request is not None:
                    on_request(dict(self.headers))
                n = max(1, len(request)) if isinstance(request, list) else 1
                literal = server.reply_literal(dict(self.headers)) if callable(server.reply_literal) else server.reply_literal
                reply = (
                    '{"id": "x", "object": "chat.completion", "model": "fake", "choices": ['
                    + ",".join(
                        f'{{"index": {i}, "finish_reason": "stop", "message": {{"role": "assistant", "content": {literal}}}}}'
                        for i in range(n)
                    )
                    + '], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}'
                ).encode()
                reply = reply if server.body is None else server.body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, userinfo: str = "") -> str:
        return f"http://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}/v1/chat/completions"

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
