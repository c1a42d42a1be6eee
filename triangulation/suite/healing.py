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

from typing import TYPE_CHECKING, Any

from plumbing.errors import UserError
from triangulation.suite.cells import Outcome
from triangulation.suite.serve import ServerError
from triangulation.suite.spec import Cell, ModelSpec

if TYPE_CHECKING:
    from triangulation.suite.runner import Sweep


def serve_and_run(sweep: Sweep, model: ModelSpec, todo: list[Cell], env: dict[str, str], **serving: Any) -> list[Outcome]:
    """Every cell of ``todo`` through the model's server, restarting a vLLM server that dies (see the module);
    ``serving`` goes to each start (:meth:`Sweep._endpoint`, e.g. data-parallel replicas)."""
    outcomes: dict[str, Outcome] = {}
    starts = 1 + (model.serve_restarts if model.engine == "vllm" else 0)
    left = list(todo)
    for start in range(1, starts + 1):
        try:
            endpoint = sweep._endpoint(model, env, **serving)
        except (ServerError, UserError) as exc:
            detail = f"server did not come up: {exc}"
            sweep._say(f"suite: {model.name}: {detail}")
            sweep._tick(len(left))
            outcomes.update({c.label: Outcome(c, "failed", detail=detail) for c in left})
            break
        try:
            results = sweep._run_concurrently(left, endpoint.client_env(env), endpoint)
        finally:
            died = not endpoint.alive()
            if endpoint.server is not None:
                endpoint.server.stop()
        outcomes.update({o.cell.label: o for o in results})
        left = [o.cell for o in results if o.status == "failed"] if died else []
        if not left or sweep.stopping or start == starts:
            break
        sweep._say(f"suite: {model.name}: the server died under {len(left)} cell(s); starting it again ({start}/{starts - 1}); they resume")
        sweep._tick(-len(left))  # they are counted again when they finish
    return [outcomes[c.label] for c in todo]
