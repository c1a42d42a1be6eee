"""lm-eval's task index built from its YAML files vs read back from the kept index (issue 37), side by side.

Each way runs ``--repeat`` fresh processes (as suite cells do) that make lm-eval's ``TaskManager`` with its own
tasks and ours, and prints the median seconds of each and their ratio::

    python benchmarks/task_index_cache.py --repeat 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
from lm_eval.tasks import TaskManager
from lm_eval_tasks import TASKS_DIR
{install}
print(len(TaskManager(include_path=[str(TASKS_DIR)]).all_tasks))
"""


def timed(install: bool, cache: str) -> tuple[float, str]:
    code = CHILD.format(install="from lm_eval_tasks.index_cache import install_index_cache; install_index_cache()" if install else "")
    env = dict(os.environ, TRIANGULATE_CACHE=cache, PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - started, out.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        first, n = timed(True, cache)  # builds and writes the kept index
        built = [timed(False, cache)[0] for _ in range(args.repeat)]
        kept = [timed(True, cache)[0] for _ in range(args.repeat)]
    b, k = statistics.median(built), statistics.median(kept)
    print(f"tasks indexed: {n}; load average {os.getloadavg()[0]:.1f}")
    print(
        f"process making lm-eval's TaskManager, median of {args.repeat}: built {b:.2f} s, kept {k:.2f} s (first, writing it: {first:.2f} s)"
    )
    print(f"ratio built/kept: {b / k:.2f}x")


if __name__ == "__main__":
    main()
