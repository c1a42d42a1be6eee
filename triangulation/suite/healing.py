"""A served model's cells that outlive their server: the server is started again and the interrupted cells resume.

:func:`serve_and_run` starts a model's server (``engine: vllm``) or reaches its endpoint (``engine: api``),
runs the cells at once as its clients, and when the vLLM server died under them starts a new one, up to the
model's ``serve_restarts`` times (default 2), and runs the cells that did not finish again, with no rerun
command. The cells resume where they stopped: an eval cell answers its finished requests from lm-eval's
request cache (``--use_cache``, :func:`triangulation.suite.cells.request_cache`), a play cell resumes inside
its episodes file. A server that does not come up fails the cells still to run, with the last line of its
log. An ``engine: api`` endpoint is not ours to restart: its cells fail as before (a rerun resumes them).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Protocol

from plumbing.errors import UserError
from triangulation.suite.serve import Endpoint, ServerError, open_endpoint
from triangulation.suite.status import Outcome
from triangulation.suite.sweep_plan import CellRun, ModelRun


class Clients(Protocol):
    """What runs a served model's cells (:class:`triangulation.suite.runner.Sweep`): the client processes, the
    servers it stops when the sweep is stopped, its progress and its lines."""

    stopping: bool
    servers: list[Endpoint]

    def run_concurrently(self, todo: Sequence[CellRun], env: Mapping[str, str], endpoint: Endpoint) -> list[Outcome]: ...

    def tick(self, n: int = 1) -> None: ...

    def say(self, line: str) -> None: ...


def serve_and_run(sweep: Clients, run: ModelRun, env: dict[str, str]) -> list[Outcome]:
    """Every process of ``run`` through the model's server (its placement's replicas), restarting a vLLM server
    that dies (see the module)."""
    model = run.placement.model
    outcomes: dict[str, Outcome] = {}
    starts = 1 + (model.serve_restarts if model.engine == "vllm" else 0)
    left = list(run.work)
    for start in range(1, starts + 1):
        began = time.monotonic()
        try:
            endpoint = open_endpoint(model, run.server_log, env, sweep.servers, run.placement.replicas)
        except (ServerError, UserError) as exc:
            detail = f"server did not come up: {exc}"
            sweep.say(f"suite: {model.name}: {detail}")
            sweep.tick(len(left))
            outcomes.update({c.cell.label: Outcome(c.cell, "failed", detail=detail) for c in left})
            break
        if endpoint.server is not None:
            sweep.say(
                f"suite: {model.name}: vllm serve answered on {endpoint.base_url} after {time.monotonic() - began:.0f} s"
                f" (max_model_len {endpoint.max_length or 'not given'})"
            )
        try:
            results = sweep.run_concurrently(left, endpoint.client_env(env), endpoint)
        finally:
            died = not endpoint.alive()
            if endpoint.server is not None:
                endpoint.server.stop()
        outcomes.update({o.cell.label: o for o in results})
        failed = {o.cell.label for o in results if o.status == "failed"}
        left = [c for c in left if c.cell.label in failed] if died else []
        if not left or sweep.stopping or start == starts:
            break
        sweep.say(f"suite: {model.name}: the server died under {len(left)} cell(s); starting it again ({start}/{starts - 1}); they resume")
        sweep.tick(-len(left))  # they are counted again when they finish
    return [outcomes[c.cell.label] for c in run.work]
