"""GlobalGroup matching ties, CTD from the matched pairs, and the "first N groups" rule (seed 000 §4.1, App. D).

Expected values are derived by hand in the comments from the paper's rules:

* §4.1 "Matching Attempts to Ground Truth Groups": "true groupings are assigned to the predicted
  groupings with the greatest set intersection"; unmatched true groups are "mapped to NULL and scored
  as complete misses"; surplus predictions "are ignored".  Equal intersections: higher pair F1 wins,
  then order (our tie-break; the paper states none).
* §4.1 "Grouping Evaluation": F1 per matched pair (precision |P∩T|/|P|, recall |P∩T|/|T|), averaged
  over the game's groups; CTD "considers a predicted group correct only if all words are correct".
* App. D: "only considering N groupings per model response" (we take the first N).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_metrics import globalgroup
from custom_metrics.matching import greedy_match, group_f1, key_set, matched_exact
from custom_metrics.parsing import ParsedGroup

GOLD = [
    {"topic": "T1", "words": ["a", "b", "c", "d"]},
    {"topic": "T2", "words": ["e", "f", "g", "h"]},
]
POOL = list("abcdefgh")


def _groups(*word_lists: str) -> list[ParsedGroup]:
    return [ParsedGroup(topic=f"P{i}", words=list(ws), pool_hits=len(ws)) for i, ws in enumerate(word_lists)]


def test_equal_intersections_go_to_the_higher_pair_f1():
    """§4.1 greatest intersection, ties by higher F1 (ours).

    Gold T1 = abcd, T2 = efgh; answer P0 = abcdef (earlier, larger), P1 = abcd (exact, later).
    |T1∩P0| = |T1∩P1| = 4 (tie); F1(T1, P0) = 2*4/(4+6) = 0.8 < F1(T1, P1) = 2*4/(4+4) = 1,
    so T1 -> P1.  T2 then takes P0: |T2∩P0| = 2, F1 = 2*2/(4+6) = 0.4.
    group F1 = (1 + 0.4) / 2 = 0.7 (the old earlier-wins rule gave (0.8 + 0) / 2 = 0.4);
    CTD = 1/2 (T1 exact, T2 not); solved = 0.
    """
    true = [key_set("abcd"), key_set("efgh")]
    pred = [key_set("abcdef"), key_set("abcd")]
    assert greedy_match(true, pred) == [1, 0]
    scores = globalgroup.score_groups(_groups("abcdef", "abcd"), GOLD, POOL, None)
    assert scores["group_f1"] == pytest.approx(0.7)
    assert scores["ctd"] == pytest.approx(0.5) and scores["solved"] == 0.0


def test_equal_intersection_and_f1_go_to_the_earlier_prediction():
    """Ties on both intersection and F1 fall to order.

    T1 = abcd; P0 = abcx, P1 = abcy: |∩| = 3 and F1 = 2*3/8 = 0.75 for both -> P0 (earlier).
    T2 = efgh meets neither (zero intersection) and takes the leftover P1: F1 0.
    group F1 = (0.75 + 0) / 2 = 0.375."""
    assert greedy_match([key_set("abcd"), key_set("efgh")], [key_set("abcx"), key_set("abcy")]) == [0, 1]
    scores = globalgroup.score_groups(_groups("abcx", "abcy"), GOLD, POOL, None)
    assert scores["group_f1"] == pytest.approx(0.375)


def test_ctd_is_read_off_the_matched_pairs():
    """CTD: a true group is exact only when its own matched attempt group equals it.

    With a matching that pairs T1 = abcd with P0 = abcdef (F1 0.8) although P1 = abcd exists, T1 is
    not exact (its pair's F1 is below 1); T2 = efgh paired with nothing is not exact either -> [F, F].
    The pairing of the tie rule (T1 -> P1) makes T1 exact -> [T, F]."""
    true = [key_set("abcd"), key_set("efgh")]
    pred = [key_set("abcdef"), key_set("abcd")]
    assert matched_exact(true, pred, [0, None]) == [False, False]
    assert matched_exact(true, pred, [1, 0]) == [True, False]


def test_only_the_first_n_groups_count():
    """App. D: N = 2 groups per answer count (the first two).

    Answer: P0 = abcd (exact T1), P1 = efxy (|T2∩P1| = 2, F1 = 2*2/8 = 0.5), P2 = efgh (exact T2,
    ignored as the third group).  group F1 = (1 + 0.5) / 2 = 0.75, CTD = 1/2, solved = 0."""
    scores = globalgroup.score_groups(_groups("abcd", "efxy", "efgh"), GOLD, POOL, None)
    assert scores["group_f1"] == pytest.approx(0.75)
    assert scores["ctd"] == pytest.approx(0.5) and scores["solved"] == 0.0


_disjoint_gold = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(
    lambda sizes: [frozenset(range(10 * i, 10 * i + n)) for i, n in enumerate(sizes)]
)


@settings(max_examples=300, deadline=None)
@given(_disjoint_gold, st.lists(st.frozensets(st.sampled_from([0, 1, 2, 3, 10, 11, 12, 20, 21, 30, 99]), max_size=6), max_size=5))
def test_ctd_flag_is_pair_f1_equal_to_one(true, pred):
    """For disjoint gold groups, a group is exact exactly when its matched pair's F1 is 1, and an
    exactly predicted gold group (among the counted predictions) is always matched to that prediction."""
    matched = greedy_match(true, pred)
    f1s = [group_f1(t, pred[j] if j is not None else None) for t, j in zip(true, matched)]
    exact = matched_exact(true, pred, matched)
    assert exact == [f == 1.0 for f in f1s]
    assert exact == [t in set(pred) for t in true]
