"""Group matching and group-level scores (seed 000 §4.1 "Matching Attempts to Ground Truth Groups").

Seed 000 §4.1: "true groupings are assigned to the predicted groupings with the greatest set
intersection, referred to as 'attempt groups.' If the number of predicted groups is fewer than the
ground-truth groups, the unmatched true groupings are mapped to NULL and scored as complete misses.
If the model predicts too many groups, the remaining predicted groups after group mapping are
ignored from evaluation."

The paper does not say how equal intersections are resolved; we resolve them by the higher pair F1
(so an exact later group beats an earlier, larger one with the same intersection), then by order
(earlier true group, then earlier prediction).  CTD and "solved" are read off the matched pairs
(:func:`matched_exact`), so a group counts as exactly right only when its own attempt group holds
exactly its words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from custom_metrics.text import word_key


def key_set(words: Iterable[str]) -> frozenset[str]:
    """The set of matching keys of a group's words (duplicates collapse; case/accents ignored)."""
    keys = frozenset(map(word_key, words))
    return keys - _EMPTY if "" in keys else keys


_EMPTY = frozenset([""])


def greedy_match(true_sets: Sequence[frozenset], pred_sets: Sequence[frozenset]) -> list[int | None]:
    """For each true group, the index of its matched predicted group (or None).

    Seed 000 §4.1: "true groupings are assigned to the predicted groupings with the greatest set
    intersection".  Greedy on the intersection size: the largest remaining intersection is matched
    first; equal intersections go to the pair with the higher F1 (:func:`group_f1`), then to the
    earlier true group, then the earlier prediction (the tie-break is ours: the paper states none).
    Each prediction is used at most once.
    """
    matched: list[int | None] = [None] * len(true_sets)
    if not pred_sets:
        return matched
    pairs = []
    for i, t in enumerate(true_sets):
        disjoint = t.isdisjoint
        for j, p in enumerate(pred_sets):
            if not disjoint(p):
                hits = len(t & p)
                pairs.append((-hits, -2.0 * hits / (len(t) + len(p)), i, j))
    pairs.sort()
    used: set[int] = set()
    remaining = min(len(true_sets), len(pred_sets))
    for _, _, i, j in pairs:
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


def matched_exact(true_sets: Sequence[frozenset], pred_sets: Sequence[frozenset], matched: Sequence[int | None]) -> list[bool]:
    """Per true group: does its matched attempt group hold exactly its words (CTD, seed 000 §4.1)?

    Seed 000 §4.1 names CTD after the unweighted clustering score of Samadarshi et al., "which
    considers a predicted group correct only if all words are correct"; it is read off the same
    matched pairs as group F1, so a group is exact only when its pair's F1 is 1.
    """
    return [j is not None and pred_sets[j] == t for t, j in zip(true_sets, matched)]


def exact_flags(true_sets: Sequence[frozenset], pred_sets: Sequence[frozenset]) -> list[bool]:
    """Per true group: does some prediction hold exactly its words (seed 001 §4.3.1 unweighted clustering)?

    Connections' rule needs no matching: a gold group scores when one of the (first four) answered
    groups holds exactly its words.  GlobalGroup's CTD uses :func:`matched_exact` instead."""
    predicted = set(pred_sets)
    return [t in predicted for t in true_sets]
