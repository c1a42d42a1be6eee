"""GlobalGroup per-game scores (seed 000 §4.1): group F1, CTD, solved, Topic Achieved, parsed.

Only the first ``n_groups`` groups of the answer count (App. D: surplus groups are ignored); true
groups are matched greedily to predictions by largest intersection (see :mod:`custom_metrics.matching`).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from custom_metrics.matching import exact_flags, greedy_match, group_f1, key_set
from custom_metrics.parsing import ParsedGroup, parse_groups, pool_index
from custom_metrics.topics import TopicScorer, get_topic_scorer

METRICS = ("group_f1", "ctd", "solved", "topic_achieved", "parsed")


def gold_groups(doc: Mapping[str, Any]) -> list[dict]:
    """The gold groups of a GlobalGroup/Connections row as dicts with ``topic`` and ``words``."""
    return [dict(g) for g in doc.get("groups") or []]


def score_groups(
    predicted: Sequence[ParsedGroup],
    gold: Sequence[Mapping[str, Any]],
    pool: Sequence[str] | None,
    topic_scorer: TopicScorer | None,
) -> dict[str, float]:
    """Scores of already-parsed groups against the gold groups (first ``len(gold)`` predictions count)."""
    n = len(gold)
    preds = list(predicted[:n])
    true_sets = [key_set(g["words"]) for g in gold]
    pred_sets = [key_set(p.words) for p in preds]
    matched = greedy_match(true_sets, pred_sets)
    f1s = [group_f1(t, pred_sets[j] if j is not None else None) for t, j in zip(true_sets, matched)]
    exact = exact_flags(true_sets, pred_sets)
    index = pool_index(pool)
    usable = any(index is None or any(index.lookup(w) is not None for w in p.words) for p in preds)
    if topic_scorer is None or n == 0:
        topic = math.nan
    else:
        predicted_topics = [preds[j].topic if j is not None else None for j in matched]
        flags = topic_scorer.achieved(predicted_topics, [str(g.get("topic") or "") for g in gold])
        topic = sum(flags) / n
    return {
        "group_f1": sum(f1s) / n if n else math.nan,
        "ctd": sum(exact) / n if n else math.nan,
        "solved": float(n > 0 and all(exact)),
        "topic_achieved": topic,
        "parsed": float(bool(preds) and usable),
    }


def score_game(response: str, doc: Mapping[str, Any], topic_scorer: TopicScorer | None = None) -> dict[str, float]:
    """Score one GlobalGroup answer against a dataset row (fields ``words``, ``groups``, ``language``).

    ``topic_scorer`` defaults to the fastText scorer of the row's language (NaN topic scores without it).
    """
    gold = gold_groups(doc)
    pool = list(doc.get("words") or [])
    n_groups = int(doc.get("n_groups") or len(gold))
    groups = parse_groups(response if isinstance(response, str) else "", pool or None, n_groups=n_groups)
    if topic_scorer is None:
        topic_scorer = get_topic_scorer(str(doc.get("language") or "en"))
    return score_groups(groups, gold, pool or None, topic_scorer)


def process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, float]:
    """lm-eval hook: ``results[0]`` is the generated answer."""
    response = results[0] if results else ""
    return score_game(response, doc)
