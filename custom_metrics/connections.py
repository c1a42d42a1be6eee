"""NYT Connections per-game scores (seed 001 §4.3): clustering scores, perfect solve, categorical reasoning.

Unweighted clustering = number of gold groups reproduced exactly (0-4); weighted = sum of the
difficulty weights 1 (yellow) .. 4 (purple) of those groups (0-10); perfect solve = all four.
Categorical reasoning (§4.3.2) counts exactly-right groups whose reasoning is "semantically analogous
to the gold NYT Connections-provided category name", a decision "done manually by a human judge". The
``category_reasoning`` metric is a **fastText proxy** for that human judgement (our variant, so that
lm-eval can score it offline): a group's predicted name must achieve the gold category under seed 000's
Topic Achieved rule (fastText cosine >= 0.3 and closest). :func:`reasoning_flags` takes any check, so
``triangulate report --judge_model`` can put an LLM judge in the human's place (Table 6, Figure 7).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from custom_metrics.globalgroup import doc_pool
from custom_metrics.matching import key_set
from custom_metrics.parsing import ParsedGroup, parse_groups
from custom_metrics.topics import TopicScorer, get_topic_scorer

METRICS = ("unweighted_clustering", "weighted_clustering", "perfect_solve", "category_reasoning", "parsed")


def _exact_matches(predicted: Sequence[ParsedGroup], gold: Sequence[Sequence[str]]) -> list[int | None]:
    """Per gold group, the index of the prediction holding exactly its words (None if none does)."""
    pred_sets = [p.keys if p.keys is not None else key_set(p.words) for p in predicted]
    out: list[int | None] = []
    for words in gold:
        target = key_set(words)
        out.append(next((j for j, s in enumerate(pred_sets) if s == target), None))
    return out


def clustering_scores(predicted: Sequence[ParsedGroup], gold: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Clustering scores of parsed groups; ``gold`` in difficulty order (weights 1, 2, 3, 4)."""
    preds = list(predicted[: len(gold)])
    hits = _exact_matches(preds, gold)
    right = [j is not None for j in hits]
    return {
        "unweighted": sum(right),
        "weighted": sum(weight for weight, ok in enumerate(right, start=1) if ok),
        "perfect_solve": bool(gold) and all(right),
        "right": right,
        "groups": preds,
        "matches": hits,
    }


def score_connections(response: str, gold: list[list[str]], pool: Sequence[str] | None = None) -> dict[str, Any]:
    """Score one answer: keys ``unweighted`` (0-4), ``weighted`` (0-10), ``perfect_solve`` (bool),
    ``right`` (per gold group), ``groups`` (the parsed answer).  ``pool`` defaults to the gold words."""
    if pool is None:
        pool = [w for group in gold for w in group]
    groups = parse_groups(response if isinstance(response, str) else "", pool, n_groups=len(gold))
    return clustering_scores(groups, gold)


#: a reasoning check: (predicted names of the matched groups, None where unmatched; gold names) -> verdicts
ReasoningCheck = Callable[[Sequence[str | None], Sequence[str]], Sequence[bool]]


def matched_names(scored: Mapping[str, Any]) -> list[str | None]:
    """Per gold group, the name the model gave its exactly matching group (None when no group matches)."""
    preds: list[ParsedGroup] = scored["groups"]
    return [preds[j].topic if j is not None else None for j in scored["matches"]]


def reasoning_flags(scored: Mapping[str, Any], gold_topics: Sequence[str], check: ReasoningCheck) -> list[bool]:
    """Per gold group: clustered exactly right (among the first four groups, as the score counts) AND
    judged reasoned right by ``check`` (seed 001 §6.1: "only counted as correct if the model both
    clustered all the words correctly and justified its reasoning")."""
    verdicts = check(matched_names(scored), list(gold_topics))
    return [bool(ok) and bool(right) for ok, right in zip(verdicts, scored["right"])]


def category_reasoning(scored: Mapping[str, Any], gold_topics: Sequence[str], scorer: TopicScorer | None) -> float:
    """fastText proxy of §4.3.2's categorical reasoning score: exactly-right groups whose predicted name
    achieves the gold category by the Topic Achieved rule, standing in for the paper's human judge
    (NaN without vectors)."""
    if scorer is None:
        return math.nan
    return float(sum(reasoning_flags(scored, gold_topics, scorer.achieved)))


_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_yes_no(reply: str) -> bool | None:
    """A judge's verdict: the first standalone "yes" or "no" in its reply (first 2,000 characters), else None."""
    match = _YES_NO.search(str(reply)[:2000])
    return None if match is None else match.group(1).lower() == "yes"


def process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, float]:
    """lm-eval hook for the ``connections`` task (row fields ``words`` and ``groups`` in difficulty order).
    ``parsed`` (our addition, as GlobalGroup's): 1 when at least one group could be read from the reply, so the
    report can tell a format failure from a wrong grouping."""
    response = results[0] if results else ""
    groups = sorted(doc["groups"], key=lambda g: g.get("level", 0))
    gold = [list(g["words"]) for g in groups]
    scored = score_connections(response, gold, pool=doc_pool(doc))
    reasoning = category_reasoning(scored, [str(g.get("topic") or "") for g in groups], get_topic_scorer("en"))
    return {
        "unweighted_clustering": float(scored["unweighted"]),
        "weighted_clustering": float(scored["weighted"]),
        "perfect_solve": float(scored["perfect_solve"]),
        "category_reasoning": reasoning,
        "parsed": float(bool(scored["groups"])),
    }
