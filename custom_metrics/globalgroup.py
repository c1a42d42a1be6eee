"""GlobalGroup per-game scores (seed 000 §4.1): group F1, CTD, solved, Topic Achieved, parsed.

Which groups count (App. D): "we opt instead not to penalize models for providing extra groupings,
instead only considering N groupings per model response" (N = the game's group count).  The paper
does not say which N; we take the first N groups of the parsed answer (the parser already keeps the
answer after the last "final answer" marker, see :mod:`custom_metrics.parsing`) - our choice.
True groups are then matched greedily to those predictions by largest intersection, ties by pair F1
(§4.1, see :mod:`custom_metrics.matching`); group F1, CTD and "solved" all come from the matched pairs.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from custom_metrics.matching import greedy_match, group_f1, key_set, matched_exact
from custom_metrics.parsing import ParsedGroup, parse_groups, pool_index
from custom_metrics.topics import TopicScorer, get_topic_scorer

METRICS = ("group_f1", "ctd", "solved", "topic_achieved", "parsed")


def gold_groups(doc: Mapping[str, Any]) -> list[dict]:
    """The gold groups of a GlobalGroup/Connections row as dicts with ``topic`` and ``words``."""
    groups = doc.get("groups")
    return [] if groups is None else list(groups)


def doc_pool(doc: Mapping[str, Any]) -> list[str] | None:
    """The row's word pool (None when absent or empty); accepts lists, tuples and arrays."""
    words = doc.get("words")
    if words is None or len(words) == 0:
        return None
    return words if isinstance(words, list) else [str(w) for w in words]


def _match(predicted: Sequence[ParsedGroup], gold: Sequence[Mapping[str, Any]], pool: Sequence[str] | None):
    """First ``len(gold)`` predictions (App. D, "first N" is our reading), their matching to gold, and
    the non-topic scores: ``group_f1`` = mean pair F1 (§4.1 "Grouping Evaluation"), ``ctd`` = share of
    true groups whose matched pair is exact, ``solved`` = all of them.

    ``parsed`` counts groups naming a pool word; groups parsed without a pool are checked against ``pool``."""
    n = len(gold)
    preds = list(predicted[:n])
    true_sets = [key_set(g["words"]) for g in gold]
    pred_sets = [p.keys if p.keys is not None else key_set(p.words) for p in preds]
    matched = greedy_match(true_sets, pred_sets)
    f1s = [group_f1(t, pred_sets[j] if j is not None else None) for t, j in zip(true_sets, matched)]
    exact = matched_exact(true_sets, pred_sets, matched)
    if pool is not None and any(p.pool_hits < 0 for p in preds):
        index = pool_index(pool)
        usable = any(index is None or any(index.lookup(w) for w in p.words) for p in preds)
    else:
        usable = any(p.pool_hits != 0 for p in preds)
    scores = {
        "group_f1": sum(f1s) / n if n else math.nan,
        "ctd": sum(exact) / n if n else math.nan,
        "solved": float(n > 0 and all(exact)),
        "topic_achieved": math.nan,
        "parsed": float(bool(preds) and usable),
    }
    return preds, matched, scores


def score_groups(
    predicted: Sequence[ParsedGroup],
    gold: Sequence[Mapping[str, Any]],
    pool: Sequence[str] | None,
    topic_scorer: TopicScorer | None,
) -> dict[str, float]:
    """Scores of already-parsed groups against the gold groups (first ``len(gold)`` predictions count)."""
    preds, matched, scores = _match(predicted, gold, pool)
    if topic_scorer is not None and gold:
        predicted_topics = [preds[j].topic if j is not None else None for j in matched]
        flags = topic_scorer.achieved(predicted_topics, [str(g.get("topic") or "") for g in gold])
        scores["topic_achieved"] = sum(flags) / len(gold)
    return scores


def score_game(response: str, doc: Mapping[str, Any], topic_scorer: TopicScorer | None = None) -> dict[str, float]:
    """Score one GlobalGroup answer against a dataset row (fields ``words``, ``groups``, ``language``).

    ``topic_scorer`` defaults to the fastText scorer of the row's language (NaN topic scores without it).
    """
    gold = gold_groups(doc)
    pool = doc_pool(doc)
    n_groups = int(doc.get("n_groups") or len(gold))
    groups = parse_groups(response, pool, n_groups=n_groups)
    if topic_scorer is None:
        topic_scorer = get_topic_scorer(str(doc.get("language") or "en"))
    return score_groups(groups, gold, pool, topic_scorer)


def score_batch(
    responses: Sequence[str],
    docs: Sequence[Mapping[str, Any]],
    topic_scorer: TopicScorer | None = None,
) -> list[dict[str, float]]:
    """:func:`score_game` for many games at once; Topic Achieved is computed with one matrix product per
    game size over cached topic vectors.  ``topic_scorer`` defaults to each row's language scorer.
    (``benchmarks/scoring_pool.py`` spreads this over forked processes.)
    """
    if len(responses) != len(docs):
        raise ValueError(f"{len(responses)} responses for {len(docs)} docs")
    with _gc_paused():
        return _score_rows(responses, docs, topic_scorer)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: scoring makes no reference cycles, but its many small
    containers trigger collections that re-scan every live object (15% of the time on 100,000 games)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _score_rows(responses: Sequence[str], docs: Sequence[Mapping[str, Any]], topic_scorer: TopicScorer | None) -> list[dict[str, float]]:
    rows: list[dict[str, float]] = []
    pending: dict[tuple[int, int], list[tuple[int, list, list]]] = {}  # (scorer id, n) -> jobs
    scorers: dict[int, TopicScorer] = {}
    for position, (response, doc) in enumerate(zip(responses, docs)):
        gold = gold_groups(doc)
        pool = doc_pool(doc)
        n = len(gold)
        groups = parse_groups(response, pool, n_groups=int(doc.get("n_groups") or n))
        preds, matched, scores = _match(groups, gold, pool)
        rows.append(scores)
        scorer = topic_scorer or get_topic_scorer(str(doc.get("language") or "en"))
        if scorer is None or n == 0:
            continue
        scorers[id(scorer)] = scorer
        predicted_topics = [preds[j].topic if j is not None else None for j in matched]
        pending.setdefault((id(scorer), n), []).append((position, predicted_topics, [str(g.get("topic") or "") for g in gold]))
    for (scorer_id, _n), jobs in pending.items():
        rates = scorers[scorer_id].achieved_rates([j[1] for j in jobs], [j[2] for j in jobs])
        for (position, _, _), rate in zip(jobs, rates):
            rows[position]["topic_achieved"] = float(rate)
    return rows


def process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, float]:
    """lm-eval hook: ``results[0]`` is the generated answer."""
    response = results[0] if results else ""
    return score_game(response, doc)
