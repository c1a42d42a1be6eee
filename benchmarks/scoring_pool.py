"""Forked worker pool for :func:`custom_metrics.globalgroup.score_batch` (used by ``scoring_throughput.py``).

The metrics package stays pure (one process); the benchmark measures how far forked processes scale it.
The games are split into contiguous ranges scored by ``workers`` forked processes (POSIX only, at least
``MIN_GAMES_PER_WORKER`` games each); they read the inputs and any loaded fastText model copy-on-write,
so nothing is loaded twice and only the score rows travel back.
"""

from __future__ import annotations

import gc
import multiprocessing
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from custom_metrics.globalgroup import METRICS, score_batch
from custom_metrics.topics import TopicScorer

MIN_GAMES_PER_WORKER = 2_000  # below this a process costs more than it saves

_SHARED: tuple[Sequence[str], Sequence[Mapping[str, Any]], TopicScorer | None] | None = None  # read by forked workers


def _score_range(bounds: tuple[int, int]) -> bytes:
    """A worker's rows as one float64 block in ``METRICS`` order (cheaper to send back than dicts)."""
    assert _SHARED is not None
    responses, docs, scorer = _SHARED
    lo, hi = bounds
    rows = score_batch(responses[lo:hi], docs[lo:hi], scorer)
    return array("d", [row[key] for row in rows for key in METRICS]).tobytes()


def score_batch_forked(
    responses: Sequence[str],
    docs: Sequence[Mapping[str, Any]],
    topic_scorer: TopicScorer | None = None,
    workers: int = 1,
) -> list[dict[str, float]]:
    """:func:`score_batch` spread over ``workers`` forked processes (one process when that cannot pay)."""
    if len(responses) != len(docs):
        raise ValueError(f"{len(responses)} responses for {len(docs)} docs")
    total = len(responses)
    workers = min(workers, total // MIN_GAMES_PER_WORKER)
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return score_batch(responses, docs, topic_scorer)
    global _SHARED
    step = -(-total // (2 * workers))  # two ranges per worker even out uneven answers
    bounds = [(lo, min(lo + step, total)) for lo in range(0, total, step)]
    _SHARED = (responses, docs, topic_scorer)
    gc.freeze()  # the workers' garbage collector then leaves the shared inputs' pages alone
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_score_range, bounds, chunksize=1)
    finally:
        _SHARED = None
        gc.unfreeze()
    values = array("d")
    for part in parts:
        values.frombytes(part)
    width = len(METRICS)
    return [dict(zip(METRICS, values[i : i + width])) for i in range(0, len(values), width)]
