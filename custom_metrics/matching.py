"""Group matching and group-level scores (seed 000 §4.1 "Matching Attempts to Ground Truth Groups").

True groups are assigned one-to-one to the predicted groups with the greatest set intersection
(greedy, largest intersection first); true groups left over when there are fewer predictions map to
None and score as complete misses; surplus predictions are ignored.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from custom_metrics.text import word_key


def key_set(words: Iterable[str]) -> frozenset[str]:
    """The set of matching keys of a group's words (duplicates collapse; case/accents ignored)."""
    keys = frozenset(map(word_key, words))
    return keys - _EMPTY if "" in keys else keys


_EMPTY = frozenset([""])


def greedy_match(true_sets: Sequence[frozenset], pred_sets: Sequence[frozenset]) -> list[int | None]:
    """For each true group, the index of its matched predicted group (or None).

    Greedy on the intersection size: the largest remaining intersection is matched first; ties go to
    the earlier true group, then the earlier prediction.  Each prediction is used at most once.
    """
    matched: list[int | None] = [None] * len(true_sets)
    if not pred_sets:
        return matched
    pairs = []
    for i, t in enumerate(true_sets):
        disjoint = t.isdisjoint
        for j, p in enumerate(pred_sets):
            if not disjoint(p):
                pairs.append((-len(t & p), i, j))
    pairs.sort()
    used: set[int] = set()
    remaining = min(len(true_sets), len(pred_sets))
    for _, i, j in pairs:
        if matched[i] is None and j not in used:
            matched[i] = j
            used.add(j)
            remaining -= 1
            if not remaining:
                return matched
    # zero-intersection pairs, in (true, prediction) order as the sort would give them
    free = (j for j in range(len(pred_sets)) if j not in used)
    for i in range(len(true_sets)):
        if matched[i] is None:
            j = next(free, None)
            if j is None:
                break
            matched[i] = j
    return matched


def group_f1(true_set: frozenset, pred_set: frozenset | None) -> float:
    """F1 of one matched pair: precision |P∩T|/|P|, recall |P∩T|/|T| (seed 000 §4.1 "Grouping Evaluation")."""
    if not pred_set or not true_set:
        return 0.0
    hits = len(true_set & pred_set)
    if hits == 0:
        return 0.0
    return 2.0 * hits / (len(true_set) + len(pred_set))


def exact_flags(true_sets: Sequence[frozenset], pred_sets: Sequence[frozenset]) -> list[bool]:
    """Per true group: does some prediction hold exactly its words (seed 001 §4.3.1, "CTD" in seed 000)?"""
    predicted = set(pred_sets)
    return [t in predicted for t in true_sets]
