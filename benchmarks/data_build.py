"""End-to-end time of `triangulate data build` (every registered builder) into a temporary folder; prints seconds.

    TRIANGULATE_UPSTREAM=../shared/upstream python benchmarks/data_build.py [--datasets globalgroup,connections] [--repeat 1]

Runs the real console script (``python -m triangulation data build``) in a subprocess, so the figure
includes interpreter start-up and imports, as a user sees it. Also checks that a second build gives
byte-identical parquet shards.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def shard_digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*.parquet"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", help="comma-separated builders (default: all registered)")
    parser.add_argument("--repeat", type=int, default=1, help="timed builds (the determinism check needs >= 2)")
    args = parser.parse_args()
    if not os.environ.get("TRIANGULATE_UPSTREAM"):
        print("set TRIANGULATE_UPSTREAM (e.g. ../shared/upstream)", file=sys.stderr)
        return 2
    timings, digests = [], []
    with tempfile.TemporaryDirectory(prefix="triangulate-build-bench-") as tmp:
        for i in range(args.repeat):
            out = Path(tmp) / f"run{i}"
            cmd = [sys.executable, "-m", "triangulation", "data", "build", "--out", str(out)]
            if args.datasets:
                cmd += ["--datasets", args.datasets]
            start = time.perf_counter()
            subprocess.run(cmd, check=True)
            timings.append(time.perf_counter() - start)
            digests.append(shard_digests(out))
            print(f"build {i + 1}: {timings[-1]:.1f} s end to end ({len(digests[-1])} parquet shards)")
    print(f"triangulate data build: min {min(timings):.1f} s, max {max(timings):.1f} s over {len(timings)} run(s) on {os.cpu_count()} CPU(s)")
    if len(digests) > 1:
        print("byte-identical parquet across runs:", all(d == digests[0] for d in digests))
    return 0


if __name__ == "__main__":
    sys.exit(main())
