"""Scoring throughput: parse + group F1 + CTD + Topic Achieved for 100,000 GlobalGroup answers; prints games/s.

    python benchmarks/scoring_throughput.py [--games 100000] [--runs 3] [--workers N] [--fasttext-dir DIR]

Each run scores the same answers with one process (:func:`custom_metrics.globalgroup.score_batch`) and
with ``--workers`` forked processes (default: every CPU; ``benchmarks/scoring_pool.py`` gives each a
contiguous range of games to parse, match and topic-score), side by side; the medians over ``--runs`` are printed, then a JSON line.
Every run starts from cold parser caches (fresh answers each run, same shape).

Uses the official ``cc.en.300.bin`` from ``--fasttext-dir`` / ``$TRIANGULATE_FASTTEXT_DIR`` when present,
otherwise trains a small real fastText model in a temporary folder (its vectors are not meaningful; the
point is the cost of the code path).  Answers are synthetic 4x4 games in the formats models really use,
with wrong words, swapped groups, paraphrased topics and reasoning before the final answer.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.scoring_pool import score_batch_forked
from custom_metrics.topics import fasttext_path, get_topic_scorer


def _vocabulary(n_topics: int, rng: random.Random) -> dict[str, list[str]]:
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "da", "zu", "fe"]
    topics: dict[str, list[str]] = {}
    while len(topics) < n_topics:
        name = " ".join("".join(rng.choices(syllables, k=3)).title() for _ in range(2))
        topics[name] = ["".join(rng.choices(syllables, k=rng.randint(2, 4))).title() for _ in range(4)]
    return topics


_STYLES = [
    lambda t, ws: f"<{t}>: [" + ", ".join(f"'{w}'" for w in ws) + "]",
    lambda t, ws: f"**{t}**: [" + ", ".join(f"“{w}”" for w in ws) + "]",
    lambda t, ws: f'"{t}": [' + ", ".join(f'"{w.upper()}"' for w in ws) + "]",
    lambda t, ws: f"{t}: [" + ", ".join(w.lower() for w in ws) + "]",
]


def make_games(n_games: int, seed: int = 0) -> tuple[list[str], list[dict]]:
    """Synthetic 4x4 docs (dataset schema) and plausible answers with realistic mistakes."""
    rng = random.Random(seed)
    vocab = _vocabulary(400, rng)
    names = list(vocab)
    responses, docs = [], []
    for i in range(n_games):
        chosen = rng.sample(names, 4)
        groups = [{"topic": t, "words": list(vocab[t])} for t in chosen]
        pool = [w for g in groups for w in g["words"]]
        rng.shuffle(pool)
        docs.append({"id": f"bench_{i}", "language": "en", "n_groups": 4, "group_size": 4, "words": pool, "groups": groups})
        answer = [list(g["words"]) for g in groups]
        for _ in range(rng.randint(0, 3)):  # swap words between groups
            a, b = rng.sample(range(4), 2)
            x, y = rng.randrange(4), rng.randrange(4)
            answer[a][x], answer[b][y] = answer[b][y], answer[a][x]
        rng.shuffle(answer)
        topics = [rng.choice([g["topic"], rng.choice(names)]) for g in groups]
        style = _STYLES[rng.randrange(len(_STYLES))]
        text = ", ".join(style(t, ws) for t, ws in zip(topics, answer))
        if rng.random() < 0.3:
            text = "Let me think about the pool first. Final answer: " + text
        responses.append(text)
    return responses, docs


def _reference_loop() -> float:
    """CPU seconds of a fixed pure-Python loop, to compare machines and load."""
    started = time.process_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.process_time() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--fasttext-dir", default=os.environ.get("TRIANGULATE_FASTTEXT_DIR"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes for parsing (default: CPUs)")
    args = parser.parse_args(argv)

    responses, docs = make_games(args.games, args.seed)
    folder = args.fasttext_dir
    if not folder or not (Path(folder) / "cc.en.300.bin").is_file():
        from tests.support.fasttext_small import train_small_fasttext

        folder = tempfile.mkdtemp(prefix="fasttext_small_")
        topics = {d["groups"][0]["topic"]: d["groups"][0]["words"] for d in docs[:2000]}
        train_small_fasttext(folder, topics, dim=16)
        print(f"trained a small fastText model in {folder} (no cc.en.300.bin given)")
    os.environ["TRIANGULATE_FASTTEXT_DIR"] = str(folder)
    started = time.perf_counter()
    scorer = get_topic_scorer("en")
    print(f"loaded {fasttext_path('en')} in {time.perf_counter() - started:.2f} s (dim {scorer.embedder.dim})")

    workers = max(1, args.workers)
    figures: dict[int, list[float]] = {1: [], workers: []}
    cpu_figures: list[float] = []
    for run in range(args.runs):
        for n_workers in dict.fromkeys((1, workers)):
            responses, docs = make_games(args.games, args.seed + 1000 * run + n_workers)  # cold caches
            started, cpu_started = time.perf_counter(), time.process_time()
            rows = score_batch_forked(responses, docs, scorer, workers=n_workers)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
            figures[n_workers].append(len(rows) / elapsed)
            if n_workers == 1:
                cpu_figures.append(len(rows) / cpu)
            print(
                f"run {run + 1} workers {n_workers}: scored {len(rows):,} games in {elapsed:.2f} s: {len(rows) / elapsed:,.0f} games/s",
                flush=True,
            )
    mean = {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}
    print("means (last run): " + ", ".join(f"{k}={v:.3f}" for k, v in mean.items()))
    median = {n: statistics.median(v) for n, v in figures.items()}
    for n, value in median.items():
        print(f"median over {args.runs} runs, {n} worker(s): {value:,.0f} games/s")
    print(f"one process: {statistics.median(cpu_figures):,.0f} games per CPU-second")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"(one process; {os.cpu_count()} CPUs, 1-min load average {load:.1f} while measuring)")
    print(f"calibration: a 10M-step Python loop took {_reference_loop():.2f} CPU-s here")
    print(
        json.dumps(
            {
                "games": args.games,
                "runs": args.runs,
                "workers": workers,
                "games_per_s_1_worker": round(median[1]),
                "games_per_s": round(median[workers]),
                "load_average": round(load, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
