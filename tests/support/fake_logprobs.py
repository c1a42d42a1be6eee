"""A fake ``/v1/completions`` server on 127.0.0.1 (a thread of the test process) with a toy language model, for the
one-pass scoring tests (:mod:`models.onepass`).

The toy model: a vocabulary of ``VOCAB`` token ids; the next-token logprobs after a prefix are a log-softmax of
logits drawn from a generator seeded by the prefix (the same prefix, the same distribution, whatever request it
comes in). It answers lm-eval's per-choice request (``echo`` with ``logprobs: 1``: every prompt position's logprob
and its top-1, then one generated token) and the one-pass request (no echo, ``logprobs: K``: the first generated
position's top K and the greedy token, keyed ``token_id:N`` when ``return_tokens_as_token_ids`` is set, as vLLM
does; with ``allowed_token_ids`` the sampled token is the likeliest allowed one, its logprob the raw one over the
whole vocabulary). ``mode``: ``vllm`` (the above), ``strings`` (keys are token text even when ids are asked for: a
server that is not vLLM), ``refuse`` (HTTP 400 for ``return_tokens_as_token_ids``), ``no_allowed`` (ignores
``allowed_token_ids``). ``bodies`` keeps every request body,
``prompt_tokens`` counts the prompt tokens received.
"""

from __future__ import annotations

import http.server
import json
import math
import random
import threading

VOCAB = 64


def next_logprobs(prefix: list[int]) -> list[float]:
    """The toy model's next-token logprobs after ``prefix`` (all ``VOCAB`` of them)."""
    rng = random.Random(",".join(map(str, prefix)))
    logits = [rng.gauss(0, 3) for _ in range(VOCAB)]
    top = max(logits)
    norm = top + math.log(sum(math.exp(v - top) for v in logits))
    return [v - norm for v in logits]


def top_k(logprobs: list[float], k: int) -> list[int]:
    return sorted(range(VOCAB), key=lambda t: -logprobs[t])[:k]


def continuation_logprob(context: list[int], continuation: list[int]) -> tuple[float, bool]:
    """What an exact per-choice scorer gives: the sum of the continuation's logprobs and whether each is the argmax."""
    total, greedy = 0.0, True
    for i, token in enumerate(continuation):
        lp = next_logprobs(context + continuation[:i])
        total += lp[token]
        greedy = greedy and token == top_k(lp, 1)[0]
    return total, greedy


class FakeLogprobServer:
    def __init__(self, mode: str = "vllm"):
        self.mode = mode
        self.bodies: list[dict] = []
        self.prompt_tokens = 0
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802  (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                code, payload = server.answer(body)
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/completions"

    def __enter__(self) -> FakeLogprobServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, body: dict) -> tuple[int, dict]:
        prompts = body["prompt"] if isinstance(body["prompt"][0], list) else [body["prompt"]]
        with self.lock:
            self.bodies.append(body)
            self.prompt_tokens += sum(map(len, prompts))
        ids = bool(body.get("return_tokens_as_token_ids"))
        if ids and self.mode == "refuse":
            return 400, {"object": "error", "message": "return_tokens_as_token_ids is not supported"}
        k = int(body.get("logprobs") or 0)
        allowed = body.get("allowed_token_ids") if self.mode != "no_allowed" else None
        choices = [self._choice(i, p, k, bool(body.get("echo")), ids and self.mode != "strings", allowed) for i, p in enumerate(prompts)]
        return 200, {"object": "text_completion", "choices": choices}

    @staticmethod
    def _choice(index: int, prompt: list[int], k: int, echo: bool, ids: bool, allowed: list[int] | None = None) -> dict:
        def key(t: int) -> str:
            return f"token_id:{t}" if ids else f"t{t}"

        positions = list(range(1, len(prompt))) if echo else []
        token_lps: list[float | None] = [None] if echo else []
        tops: list[dict | None] = [None] if echo else []
        for pos in positions:
            lp = next_logprobs(prompt[:pos])
            token_lps.append(lp[prompt[pos]])
            tops.append({key(t): lp[t] for t in {*top_k(lp, k), prompt[pos]}})
        lp = next_logprobs(prompt)
        greedy = max(allowed, key=lambda t: lp[t]) if allowed else top_k(lp, 1)[0]  # the raw logprob, as vLLM reports it
        token_lps.append(lp[greedy])
        tops.append({key(t): lp[t] for t in {*top_k(lp, k), greedy}})
        logprobs = {"tokens": [key(greedy)], "token_logprobs": token_lps, "top_logprobs": tops}
        return {"index": index, "text": key(greedy), "logprobs": logprobs}
