"""End-to-end time of `triangulate data build` (every registered builder) into a temporary folder; prints seconds.

    TRIANGULATE_UPSTREAM=../shared/upstream python benchmarks/data_build.py [--datasets globalgroup,connections] [--repeat 1]

Runs the real console script (``python -m triangulation data build``) in a subprocess, so the figures
include interpreter start-up and imports, as a user sees it. Three figures:

- local: a build reading ``$TRIANGULATE_UPSTREAM`` (``--repeat`` runs; checks byte-identical parquet);
- cold: ``TRIANGULATE_UPSTREAM`` unset, an empty cache, every pinned file downloaded (and verified) from a
  loopback raw-file mirror on 127.0.0.1 that serves ``$TRIANGULATE_UPSTREAM`` at the pinned commits
  (tests/support/mirror.py); no network latency, so this is the cost of fetching + hashing + building;
- warm: the same again with the filled cache (every cached file re-hashed, nothing fetched).
Both mirror builds must give the local build's parquet bytes.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def shard_digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*.parquet"))}


def timed_build(out: Path, datasets: str | None, env: dict[str, str]) -> float:
    cmd = [sys.executable, "-m", "triangulation", "data", "build", "--out", str(out)]
    if datasets:
        cmd += ["--datasets", datasets]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", help="comma-separated builders (default: all registered)")
    parser.add_argument("--repeat", type=int, default=1, help="timed local builds (the determinism check needs >= 2)")
    args = parser.parse_args()
    upstream = os.environ.get("TRIANGULATE_UPSTREAM")
    if not upstream:
        print("set TRIANGULATE_UPSTREAM (e.g. ../shared/upstream)", file=sys.stderr)
        return 2
    from tests.support.mirror import manifest_files, serve

    timings, digests = [], []
    with tempfile.TemporaryDirectory(prefix="triangulate-build-bench-") as tmp:
        for i in range(args.repeat):
            out = Path(tmp) / f"run{i}"
            timings.append(timed_build(out, args.datasets, dict(os.environ)))
            digests.append(shard_digests(out))
            print(f"local build {i + 1}: {timings[-1]:.1f} s end to end ({len(digests[-1])} parquet shards)")
        with serve(manifest_files(Path(upstream))) as mirror:
            env = {k: v for k, v in os.environ.items() if k != "TRIANGULATE_UPSTREAM"}
            env.update(TRIANGULATE_SOURCE_URL=mirror.url, TRIANGULATE_CACHE=str(Path(tmp) / "cache"))
            cold = timed_build(Path(tmp) / "cold", args.datasets, env)
            fetched = sum(mirror.hits.values())
            warm = timed_build(Path(tmp) / "warm", args.datasets, env)
            refetched = sum(mirror.hits.values()) - fetched
        same = all(shard_digests(Path(tmp) / run) == digests[0] for run in ("cold", "warm"))
    print(
        f"triangulate data build (local): min {min(timings):.1f} s, max {max(timings):.1f} s over {len(timings)} run(s) on {os.cpu_count()} CPU(s)"
    )
    print(f"cold build through the loopback mirror: {cold:.1f} s ({fetched} files downloaded and verified)")
    print(f"warm build from the cache: {warm:.1f} s ({refetched} files downloaded)")
    print("byte-identical parquet (local runs, cold, warm):", same and all(d == digests[0] for d in digests))
    return 0


if __name__ == "__main__":
    sys.exit(main())
