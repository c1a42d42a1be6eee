"""Real command-line runs on the embedded SmolLM2 that several slow tests check, each run once per test session.

Each run costs a Python start with torch and lm-eval, a model load and, for ``lm_eval``, lm-eval's index of its
~14,000 task files (~30 s idle): the tests that check different things about the same command share one run
(tests/conftest.py's ``readme_lm_eval_run``) instead of starting it once each.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from models.default_model import default_model_args
from tests.support.built_data import built_data_root

REPO = Path(__file__).resolve().parents[2]

# the README's `lm_eval` line (section "lm-eval tasks") with the embedded model, two tasks and CI-sized limits;
# 128 new tokens keep CI cheap (the tasks' own limits are 512 / 750)
README_TASKS = "globalgroup_zh,connections"


def smollm2_env(upstream: Path) -> dict[str, str]:
    """The environment of a run on built data only (no upstream checkout), one BLAS thread."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), "HF_HUB_OFFLINE": "1"}
    env["TRIANGULATE_DATA"] = str(built_data_root(str(upstream)))
    env.pop("TRIANGULATE_UPSTREAM", None)  # after a build the tasks need no upstream checkout
    env.setdefault("OMP_NUM_THREADS", "1")  # on a busy 2-core box, 1 thread was 10x faster than torch's default
    return env


def readme_lm_eval(upstream: Path, folder: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """``lm_eval --include_path "$(triangulate tasks-dir)" --tasks ... --model hf ...`` from ``folder``; (run, output)."""
    lm_eval = shutil.which("lm_eval") or str(Path(sys.executable).with_name("lm_eval"))
    out = folder / "out"
    line = (
        f'{shlex.quote(lm_eval)} --include_path "$({shlex.quote(sys.executable)} -m triangulation tasks-dir)" --tasks {README_TASKS}'
        f" --model hf --model_args {shlex.quote(default_model_args(device=None))} --apply_chat_template --log_samples"
        f" --output_path {shlex.quote(str(out))} --limit 2 --gen_kwargs max_gen_toks=128"
    )
    ran = subprocess.run(["bash", "-c", line], env=smollm2_env(upstream), cwd=folder, capture_output=True, text=True, timeout=1500)
    return ran, out
