"""With ``TRIANGULATE_UPSTREAM`` unset and only built datasets present, every task runs.

The datasets are built once from the upstream copy into a temporary ``TRIANGULATE_DATA``; then, in
fresh processes whose environment has no ``TRIANGULATE_UPSTREAM`` (so no code path can fall back on
the upstream files), every ``triangulate play`` task plays one episode against a scripted model and
every lm-eval task of ``lm_eval_tasks/`` evaluates one document.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PLAY_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from multiturn import registry
    from multiturn.engine.runner import run_tasks
    from models.scripted import ScriptedLM

    lm = ScriptedLM(lambda messages: "m")
    from models.ref import ModelRef
    from multiturn.engine.settings import PlaySettings

    names = registry.task_names()
    settings = PlaySettings.for_model(ModelRef.parse("m", None), tuple(names), limit=1)
    payload, _ = run_tasks(settings, {"player": lm, "player_b": lm, "judge": lm}, progress=False)
    print(json.dumps({"tasks": names, "results": sorted(payload["results"]), "failed": {
        t: e.get("n_failed", 0) for t, e in payload["results"].items() if e.get("n_failed")}}))
    """
)

FRESH_SCRIPT = textwrap.dedent(
    """
    from datasets_build.matched import CLEM_GAMES, fresh_folder
    from lm_eval_tasks import TASKS_DIR

    subsets = sorted(p.name.removesuffix("_fresh.yaml") for p in (TASKS_DIR / "globalgroup").glob("globalgroup_*_fresh.yaml"))
    for task in [*CLEM_GAMES, *subsets]:
        fresh_folder(task)
    """
)

EVAL_SCRIPT = textwrap.dedent(
    """
    import json
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager
    from lm_eval_tasks import TASKS_DIR

    class Blank(LM):
        def generate_until(self, requests, disable_tqdm=False):
            return ["" for _ in requests]
        def loglikelihood(self, requests, disable_tqdm=False):
            return [(-1.0, False) for _ in requests]
        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            return [-1.0 for _ in requests]

    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False)
    ours = sorted(n for n in manager.all_subtasks if n.startswith(("globalgroup", "connections", "lm_pragmatics")))
    out = simple_evaluate(model=Blank(), tasks=ours, limit=1, task_manager=manager, bootstrap_iters=0)
    print(json.dumps({"tasks": ours, "results": sorted(out["results"])}))
    """
)


@pytest.fixture(scope="module")
def built_only_env(upstream, tmp_path_factory) -> dict[str, str]:
    data = tmp_path_factory.mktemp("built-data")
    env = {**os.environ, "TRIANGULATE_UPSTREAM": str(upstream), "TRIANGULATE_DATA": str(data)}
    proc = subprocess.run(
        [sys.executable, "-m", "triangulation", "data", "build"], env=env, cwd=REPO, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the *_fresh tasks read the matched twins `triangulate data generate --matched` writes from the upstream files
    # (issue 33); a user generates them once like the build, so the check does too before upstream goes away
    proc = subprocess.run([sys.executable, "-c", FRESH_SCRIPT], env=env, cwd=REPO, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    env.pop("TRIANGULATE_UPSTREAM")
    env["HF_DATASETS_OFFLINE"] = env["HF_HUB_OFFLINE"] = "1"
    return env


def _run(script: str, env: dict[str, str], tmp_path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_every_play_task_runs_on_built_data_only(built_only_env, tmp_path):
    out = _run(PLAY_SCRIPT, built_only_env, tmp_path)
    assert len(out["tasks"]) >= 40
    assert out["results"] == sorted(out["tasks"])
    assert out["failed"] == {}


@pytest.mark.slow
def test_every_lm_eval_task_runs_on_built_data_only(built_only_env, tmp_path):
    out = _run(EVAL_SCRIPT, built_only_env, tmp_path)
    assert len(out["tasks"]) >= 100
    assert set(out["tasks"]) <= set(out["results"])
    assert {f"lm_pragmatics_irony_seed_{k}" for k in range(5)} <= set(out["tasks"])  # built by `triangulate data build`


def test_the_environment_of_the_check_has_no_upstream(built_only_env):
    assert "TRIANGULATE_UPSTREAM" not in built_only_env
    assert (Path(built_only_env["TRIANGULATE_DATA"]) / "globalgroup" / "README.md").is_file()
