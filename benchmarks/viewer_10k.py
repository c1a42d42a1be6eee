"""The episode viewer at scale: write a page of N n-back episodes (24 trials each) and time it; then
time headless Chromium loading it (parse + the script that pages the list) when chromium is on PATH.

    python benchmarks/viewer_10k.py [--episodes 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plumbing import run_folder  # noqa: E402
from triangulation.viewer.pages import write_viewer  # noqa: E402


def nback_record(i: int, rng: random.Random) -> dict:
    stimuli = "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(24))
    trials = []
    for t, s in enumerate(stimuli):
        target = "m" if t and stimuli[t - 1] == s else "-"
        reply = rng.choice(["m", "-", "<script>x</script>"])
        parsed = reply if reply in ("m", "-") else None
        trials.append({"trial": t, "stimulus": s, "target": target, "response": reply, "parsed": parsed, "correct": parsed == target})
    acc = sum(t["correct"] for t in trials) / 24
    return {
        "id": f"block{i:05d}",
        "task": "nback_verbal_1",
        "seed": 1,
        "failed": i % 97 == 0,
        "error": None,
        "instance": {
            "stimuli": stimuli,
            "messages": list(stimuli),
            "targets": [t["target"] for t in trials],
            "n": 1,
            "system_prompt": "1-back",
        },
        "transcript": trials,
        "scores": {"accuracy": acc},
        "calls": [{"role": "player", "reply": t["response"]} for t in trials],  # what the viewer replays through the game
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="viewer-bench-"))
    model_dir = root / "runs" / "bench"
    model_dir.mkdir(parents=True)
    rng = random.Random(0)
    with run_folder.episodes_path(model_dir, "nback_verbal_1").open("w") as fh:
        for i in range(args.episodes):
            fh.write(json.dumps(nback_record(i, rng)) + "\n")
    write_s, load_s = [], []
    browser = shutil.which("chromium")
    for _ in range(args.runs):
        start = time.perf_counter()
        pages = write_viewer([root / "runs"], root / "view")
        write_s.append(time.perf_counter() - start)
        if browser:
            with tempfile.TemporaryDirectory() as profile:
                start = time.perf_counter()
                dom = subprocess.run(
                    [
                        browser,
                        "--headless",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--no-first-run",
                        f"--user-data-dir={profile}",
                        "--dump-dom",
                        pages["nback_verbal_1"].as_uri(),
                    ],
                    capture_output=True,
                    text=True,
                    timeout=600,
                ).stdout
                load_s.append(time.perf_counter() - start)
            assert "of 1000 episodes" in dom or f"of {args.episodes} episodes" in dom
    size = pages["nback_verbal_1"].stat().st_size  # the first file (at most EPISODES_PER_FILE episodes)
    total = sum(p.stat().st_size for p in pages["nback_verbal_1"].parent.glob("nback_verbal_1*.html"))
    out = {
        "episodes": args.episodes,
        "first_file_mb": round(size / 1e6, 1),
        "all_files_mb": round(total / 1e6, 1),
        "write_s": round(statistics.median(write_s), 2),
        "chromium_load_s": round(statistics.median(load_s), 2) if load_s else None,
    }
    print(json.dumps(out))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
