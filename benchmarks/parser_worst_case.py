"""Worst-case reply parsing: every parser and every game turn on adversarial 1 MB replies; prints ms.

    TRIANGULATE_UPSTREAM=../shared/upstream python benchmarks/parser_worst_case.py [--repeats 5]

The parsers, games and 1 MB inputs are those of tests/custom_metrics/test_robust_fuzz.py (repeated brackets, quotes,
colons, newlines, one huge token, and repetitions of what each parser looks for). For each parser the
figure is the median of ``--repeats`` timings on its worst input; for each game, the median time of
its slowest turn. The last line is a JSON object with the worst parser and the worst game turn.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.custom_metrics.test_robust_fuzz import ADVERSARIAL, GAME_NAMES, _game_factories, _parsers  # noqa: E402


def _median_ms(fn, text: str, repeats: int) -> tuple[float, float]:
    """Median wall-clock and CPU milliseconds of ``fn(text)``."""
    wall, cpu = [], []
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn(text)
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return 1000 * statistics.median(wall), 1000 * statistics.median(cpu)


def _turn_ms(make, text: str, repeats: int, max_turns: int = 30) -> tuple[float, int]:
    """Median (over repeats) of the slowest turn's time when ``text`` is every reply."""
    runs = []
    for _ in range(repeats):
        game, worst, turns = make(), 0.0, 0
        while not game.done and turns < max_turns and game.next_request() is not None:
            started = time.perf_counter()
            game.on_reply(text)
            worst = max(worst, time.perf_counter() - started)
            turns += 1
        runs.append(worst)
    return 1000 * statistics.median(runs), turns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    upstream = os.environ.get("TRIANGULATE_UPSTREAM") or str(REPO.parent / "shared" / "upstream")
    os.environ["TRIANGULATE_UPSTREAM"] = upstream
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {len(ADVERSARIAL)} inputs of 1 MB; median of {args.repeats}")

    parser_rows = []
    for name, fn in sorted(_parsers().items()):
        timings = {label: _median_ms(fn, text, args.repeats) for label, text in ADVERSARIAL.items()}
        worst = max(timings, key=lambda k: timings[k][0])
        parser_rows.append((name, timings[worst][0], worst, timings[worst][1]))
    print(f"\n{'parser':45s} {'wall ms':>9s} {'cpu ms':>8s}  worst input")
    for name, ms, label, cpu in parser_rows:
        print(f"{name:45s} {ms:9.1f} {cpu:8.1f}  {label}")

    games = _game_factories(Path(upstream))
    game_rows = []
    for name in GAME_NAMES:
        timings = {label: _turn_ms(games[name], text, max(1, args.repeats // 2)) for label, text in ADVERSARIAL.items()}
        worst = max(timings, key=lambda k: timings[k][0])
        game_rows.append((name, timings[worst][0], worst))
    print(f"\n{'game (slowest turn)':45s} {'worst ms':>9s}  input")
    for name, ms, label in game_rows:
        print(f"{name:45s} {ms:9.1f}  {label}")

    top_parser = max(parser_rows, key=lambda r: r[1])
    top_game = max(game_rows, key=lambda r: r[1])
    print(
        json.dumps(
            {
                "input_bytes": 1_000_000,
                "worst_parser": top_parser[0],
                "worst_parser_ms": round(top_parser[1], 1),
                "worst_parser_cpu_ms": round(top_parser[3], 1),
                "worst_parser_input": top_parser[2],
                "worst_game": top_game[0],
                "worst_game_turn_ms": round(top_game[1], 1),
                "worst_game_input": top_game[2],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
