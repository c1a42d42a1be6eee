"""Matching, group F1, CTD, Topic Achieved (real fastText loader), Connections scores, on hand-made cases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_metrics import connections, globalgroup, topics
from custom_metrics.matching import greedy_match, group_f1, key_set
from custom_metrics.topics import achieved_from_similarities
from tests.support.fasttext_small import train_small_fasttext

ELEMENTS = ["Water", "Fire", "Earth", "Wind"]
EMOTIONS = ["Happy", "Sad", "Angry", "Surprised"]
DOC = {
    "id": "en_2x4_test_000",
    "language": "en",
    "n_groups": 2,
    "group_size": 4,
    "words": ["Water", "Fire", "Sad", "Wind", "Happy", "Earth", "Angry", "Surprised"],
    "groups": [
        {"topic": "Natural Elements", "words": ELEMENTS, "tags": [], "culturally_related": False},
        {"topic": "Emotions", "words": EMOTIONS, "tags": [], "culturally_related": False},
    ],
}
TOPIC_WORDS = {
    "Natural Elements": ELEMENTS,
    "Emotions": EMOTIONS,
    "Kitchen Utensils": ["spoon", "fork", "knife", "ladle"],
    "Board Games": ["clue", "risk", "sorry", "trouble"],
}


@pytest.fixture()
def fasttext_dir(tmp_path, monkeypatch):
    """A tiny real fastText model saved as cc.en.300.bin, found through TRIANGULATE_FASTTEXT_DIR."""
    train_small_fasttext(tmp_path, TOPIC_WORDS, lang="en", dim=16)
    monkeypatch.setenv("TRIANGULATE_FASTTEXT_DIR", str(tmp_path))
    return tmp_path


def _answer(*groups: tuple[str, list[str]]) -> str:
    return ", ".join(f"<{t}>: [" + ", ".join(f"'{w}'" for w in ws) + "]" for t, ws in groups)


# --- matching --------------------------------------------------------------------------------
def test_greedy_match_largest_intersection_first_and_one_to_one():
    true = [key_set("abcd"), key_set("efgh")]
    pred = [key_set("efgx"), key_set("abcy"), key_set("abcd")]
    assert greedy_match(true, pred) == [2, 0]


def _reference_greedy(true, pred):
    """Seed 000's rule stated directly: all pairs by decreasing intersection, then (our tie-break)
    decreasing pair F1, then true index, then prediction."""
    matched, used = [None] * len(true), set()
    pairs = sorted((-len(t & p), -group_f1(t, p), i, j) for i, t in enumerate(true) for j, p in enumerate(pred))
    for _, _, i, j in pairs:
        if matched[i] is None and j not in used:
            matched[i], _ = j, used.add(j)
    return matched


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.frozensets(st.integers(0, 9), max_size=5), max_size=5),
    st.lists(st.frozensets(st.integers(0, 9), max_size=6), max_size=7),
)
def test_greedy_match_equals_the_stated_rule(true, pred):
    assert greedy_match(true, pred) == _reference_greedy(true, pred)


def test_greedy_match_missing_predictions_map_to_none():
    true = [key_set("abcd"), key_set("efgh"), key_set("ijkl")]
    assert greedy_match(true, [key_set("ijkl")]) == [None, None, 0]
    assert greedy_match(true, []) == [None, None, None]


def test_group_f1_values():
    assert group_f1(key_set("abcd"), key_set("abcd")) == 1.0
    assert group_f1(key_set("abcd"), key_set("abxy")) == pytest.approx(0.5)
    assert group_f1(key_set("abcd"), key_set("abcdef")) == pytest.approx(0.8)  # P 4/6, R 1
    assert group_f1(key_set("abcd"), None) == 0.0
    assert group_f1(key_set("abcd"), key_set("xyz")) == 0.0


# --- GlobalGroup -----------------------------------------------------------------------------
def test_perfect_answer(fasttext_dir):
    scores = globalgroup.score_game(_answer(("Natural Elements", ELEMENTS), ("Emotions", EMOTIONS)), DOC)
    assert scores == {"group_f1": 1.0, "ctd": 1.0, "solved": 1.0, "topic_achieved": 1.0, "parsed": 1.0}


def test_partial_answer_scores(fasttext_dir):
    answer = _answer(("A", ["water", "FIRE", "earth", "Sad"]), ("B", ["happy", "wind", "angry", "surprised", "bogus"]))
    scores = globalgroup.score_game(answer, DOC)
    assert scores["group_f1"] == pytest.approx((0.75 + 6 / 9) / 2)
    assert scores["ctd"] == 0.0 and scores["solved"] == 0.0 and scores["parsed"] == 1.0


def test_missing_group_scores_zero_and_surplus_groups_are_ignored(fasttext_dir):
    one = globalgroup.score_game(_answer(("Natural Elements", ELEMENTS)), DOC)
    assert one["group_f1"] == pytest.approx(0.5) and one["ctd"] == pytest.approx(0.5)
    # The first n_groups groups count: a right group given third is ignored.
    extra = _answer(("Natural Elements", ELEMENTS), ("X", ["Happy", "Sad"]), ("Emotions", EMOTIONS))
    scores = globalgroup.score_game(extra, DOC)
    assert scores["ctd"] == pytest.approx(0.5)
    assert scores["group_f1"] == pytest.approx((1.0 + 2 * 2 / 6) / 2)


def test_duplicate_and_out_of_pool_words(fasttext_dir):
    dupes = globalgroup.score_game(_answer(("E", ["Water", "water", "Fire", "Earth"]), ("M", EMOTIONS)), DOC)
    assert dupes["ctd"] == pytest.approx(0.5)  # a duplicated word does not complete a group
    assert dupes["group_f1"] == pytest.approx((2 * 3 / 7 + 1.0) / 2)
    lava = globalgroup.score_game(_answer(("E", ["Water", "Lava", "Earth", "Wind"]), ("M", EMOTIONS)), DOC)
    assert lava["group_f1"] == pytest.approx((0.75 + 1.0) / 2)


def test_unusable_answers(fasttext_dir):
    for response in ["", "I cannot solve this.", "[[[", "<A>: ['Lava', 'Magma']"]:
        scores = globalgroup.score_game(response, DOC)
        assert scores["group_f1"] == 0.0 and scores["ctd"] == 0.0 and scores["parsed"] == 0.0
        assert scores["topic_achieved"] == 0.0


def test_topic_achieved_with_real_fasttext_model(fasttext_dir):
    right = globalgroup.score_game(_answer(("natural elements", ELEMENTS), ("EMOTIONS", EMOTIONS)), DOC)
    assert right["topic_achieved"] == 1.0
    swapped = globalgroup.score_game(_answer(("Emotions", ELEMENTS), ("Natural Elements", EMOTIONS)), DOC)
    assert swapped["topic_achieved"] == 0.0  # each name is closer to the other true topic
    bare = globalgroup.score_game("Category 1: [Water, Fire, Earth, Wind]\nCategory 2: [Happy, Sad, Angry, Surprised]", DOC)
    assert bare["topic_achieved"] == 0.0 and bare["group_f1"] == 1.0


def test_process_results_uses_the_first_result(fasttext_dir):
    scores = globalgroup.process_results(DOC, [_answer(("Natural Elements", ELEMENTS), ("Emotions", EMOTIONS))])
    assert scores["solved"] == 1.0
    assert set(scores) == set(globalgroup.METRICS)


def test_rows_with_tuples_and_arrays(fasttext_dir):
    doc = dict(DOC, words=np.array(DOC["words"]), groups=tuple(DOC["groups"]))
    answer = _answer(("Natural Elements", ELEMENTS), ("Emotions", EMOTIONS))
    assert globalgroup.score_game(answer, doc) == globalgroup.score_game(answer, DOC)


def test_score_batch_equals_score_game(fasttext_dir):
    answers = [
        _answer(("Natural Elements", ELEMENTS), ("Emotions", EMOTIONS)),
        _answer(("Emotions", ELEMENTS), ("Kitchen Utensils", EMOTIONS)),
        _answer(("Board Games", ["Water", "Sad", "Fire", "Angry"])),
        "nothing",
        "Final answer: " + _answer(("emotions", EMOTIONS), ("elements", ELEMENTS), ("extra", ["Water"])),
    ]
    docs = [DOC] * len(answers) + [dict(DOC, n_groups=1, groups=DOC["groups"][:1])]
    answers.append(_answer(("Natural Elements", ELEMENTS)))
    batch = globalgroup.score_batch(answers, docs)
    assert batch == [globalgroup.score_game(a, d) for a, d in zip(answers, docs)]
    assert all(type(v) is float for row in batch for v in row.values())


def _rule(sims, present):
    return achieved_from_similarities(np.array([sims]), np.array([present])).tolist()[0]


def test_topic_rule_threshold_and_strictly_closest():
    sims = [[0.31, 0.1], [0.2, 0.29]]
    assert _rule(sims, [True, True]) == [True, False]  # 0.29 < 0.3
    ties = [[0.5, 0.5], [0.1, 0.9]]
    assert _rule(ties, [True, True]) == [False, True]  # a tie is not "more similar"
    assert _rule(sims, [False, True]) == [False, False]
    assert _rule([[0.3]], [True]) == [True]  # one group: the threshold alone decides


def test_missing_fasttext_gives_nan_and_one_notice(monkeypatch, tmp_path, capsys):
    """One plain line per language and process (issue 43 item 11: was a ``triangulate:0: RuntimeWarning:`` warning)."""
    monkeypatch.setenv("TRIANGULATE_FASTTEXT_DIR", str(tmp_path))  # folder without cc.xx.300.bin
    topics._warned.discard("xx")
    doc = dict(DOC, language="xx")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [globalgroup.score_game(_answer(("Natural Elements", ELEMENTS)), doc) for _ in range(5)]
    assert all(math.isnan(r["topic_achieved"]) for r in results)
    assert results[0]["group_f1"] == pytest.approx(0.5)
    assert not [w for w in caught if "fastText" in str(w.message)]  # no warning machinery, no "triangulate:0:" prefix
    messages = [ln for ln in capsys.readouterr().err.splitlines() if "fastText" in ln]
    assert len(messages) == 1 and messages[0].startswith("triangulate: note: ")
    assert "cc.xx.300.bin" in messages[0] and "https://fasttext.cc/docs/en/crawl-vectors.html" in messages[0]
    assert "`triangulate data fasttext xx`" in messages[0]


def test_vectors_are_cached(fasttext_dir):
    scorer = topics.get_topic_scorer("en")
    assert scorer is topics.get_topic_scorer("en")
    first = scorer.embedder.vector("Emotions")
    assert scorer.embedder.vector("Emotions") is first
    assert np.linalg.norm(first) == pytest.approx(1.0, abs=1e-5)


# --- Connections -----------------------------------------------------------------------------
GOLD = [
    ["AIR", "CONDITIONING", "HEATING", "VENTILATION"],
    ["BOILING", "FUMING", "LIVID", "STEAMING"],
    ["POSITION", "RANKING", "STANDING", "STATION"],
    ["BAKING", "LAUNDRY", "ORIGAMI", "POKER"],
]
CONN_DOC = {
    "id": "connections_1",
    "game_id": 1,
    "words": [w for g in GOLD for w in g],
    "groups": [
        {"topic": "HVAC", "words": GOLD[0], "level": 0, "color": "yellow", "knowledge": []},
        {"topic": "HOPPING MAD", "words": GOLD[1], "level": 1, "color": "green", "knowledge": []},
        {"topic": "STATUS", "words": GOLD[2], "level": 2, "color": "blue", "knowledge": []},
        {"topic": "ACTIVITIES THAT INVOLVE FOLDING", "words": GOLD[3], "level": 3, "color": "purple", "knowledge": []},
    ],
}


def _groupings(named: list[tuple[str, list[str]]]) -> str:
    return "Reasoning first. Groupings:\n" + "\n".join(f"{n}: [{', '.join(ws)}]" for n, ws in named)


def test_clustering_scores_weights_by_difficulty():
    answer = _groupings([("a", GOLD[3]), ("b", GOLD[1]), ("c", GOLD[0][:3] + GOLD[2][:1]), ("d", GOLD[2][1:] + GOLD[0][3:])])
    scored = connections.score_connections(answer, GOLD)
    assert scored["unweighted"] == 2 and scored["weighted"] == 4 + 2 and not scored["perfect_solve"]
    perfect = connections.score_connections(_groupings([(str(i), g[::-1]) for i, g in enumerate(GOLD)]), GOLD)
    assert perfect["unweighted"] == 4 and perfect["weighted"] == 10 and perfect["perfect_solve"]
    assert connections.score_connections("", GOLD)["unweighted"] == 0


def test_connections_only_the_last_groupings_count():
    wrong = [("w", GOLD[0][:2] + GOLD[1][:2]), ("x", GOLD[0][2:] + GOLD[1][2:]), ("y", GOLD[2]), ("z", GOLD[3])]
    right = [(str(i), g) for i, g in enumerate(GOLD)]
    scored = connections.score_connections(_groupings(wrong) + " Final answer: " + _groupings(right), GOLD)
    assert scored["unweighted"] == 4


def test_connections_process_results_with_category_reasoning(fasttext_dir):
    names = [("HVAC", GOLD[0]), ("Hopping mad", GOLD[1]), ("Furniture", GOLD[2]), ("Folding", GOLD[3][:3] + GOLD[0][:1])]
    scores = connections.process_results(CONN_DOC, [_groupings(names)])
    assert scores["unweighted_clustering"] == 3.0 and scores["weighted_clustering"] == 6.0
    assert scores["perfect_solve"] == 0.0
    # Right groups: HVAC and HOPPING MAD are named as the gold categories; STATUS is named "Furniture".
    assert scores["category_reasoning"] in (2.0, 3.0)
    exact_names = [(g["topic"], g["words"]) for g in CONN_DOC["groups"]]
    assert connections.process_results(CONN_DOC, [_groupings(exact_names)])["category_reasoning"] == 4.0


def test_connections_category_reasoning_is_nan_without_vectors(monkeypatch, tmp_path):
    monkeypatch.setenv("TRIANGULATE_FASTTEXT_DIR", str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = connections.process_results(CONN_DOC, [_groupings([("a", GOLD[0])])])
    assert math.isnan(scores["category_reasoning"]) and scores["unweighted_clustering"] == 1.0


# --- Chinese topics (jieba segmentation, seed 000 App. J) --------------------------------------
def test_chinese_topics_are_segmented_and_scored(tmp_path, monkeypatch):
    assert topics.tokenize("把水加热至沸腾的不同方言", "zh") == ["把", "水", "加热", "至", "沸腾", "的", "不同", "方言"]
    assert topics.tokenize("Natural  Elements", "en") == ["natural", "elements"]
    zh_groups = {"传统文化": ["太极", "风水", "八卦", "中医"], "足球技术动作": ["射", "传", "停", "带"]}
    train_small_fasttext(tmp_path, zh_groups, lang="zh", dim=16)
    monkeypatch.setenv("TRIANGULATE_FASTTEXT_DIR", str(tmp_path))
    doc = {
        "language": "zh",
        "n_groups": 2,
        "words": [w for ws in zh_groups.values() for w in ws],
        "groups": [{"topic": t, "words": ws} for t, ws in zh_groups.items()],
    }
    right = "<传统文化>：['太极'，'风水'，'八卦'，'中医']，<足球技术动作>：['射'，'传'，'停'，'带']"
    swapped = "<足球技术动作>：['太极'，'风水'，'八卦'，'中医']，<传统文化>：['射'，'传'，'停'，'带']"
    assert globalgroup.score_game(right, doc) == {"group_f1": 1.0, "ctd": 1.0, "solved": 1.0, "topic_achieved": 1.0, "parsed": 1.0}
    assert globalgroup.score_game(swapped, doc)["topic_achieved"] == 0.0


def test_benchmark_pool_of_forked_workers_equals_one_process(fasttext_dir):
    """``benchmarks/scoring_pool.py`` (the throughput benchmark's fork pool) scores exactly like score_batch."""
    from benchmarks.scoring_pool import MIN_GAMES_PER_WORKER, score_batch_forked

    answers = [
        _answer(("Natural Elements", ELEMENTS), ("Emotions", EMOTIONS)),
        _answer(("Emotions", ELEMENTS), ("Kitchen Utensils", EMOTIONS)),
        "Final answer: " + _answer(("emotions", EMOTIONS), ("elements", ELEMENTS)),
        "nothing",
    ]
    n = 2 * MIN_GAMES_PER_WORKER
    many = [answers[i % len(answers)] + " " * (i % 7) for i in range(n)]
    docs = [DOC] * n
    one = globalgroup.score_batch(many, docs)
    two = score_batch_forked(many, docs, workers=2)
    assert two == one
    assert {row["group_f1"] for row in two} == {row["group_f1"] for row in one[:4]}
    for fn in (globalgroup.score_batch, score_batch_forked):
        with pytest.raises(ValueError):
            fn(many, docs[:-1])


def test_connections_matches_only_the_first_four_answered_groups():
    """Seed 001 Sec. 4.3.1 eq. 1: "one point for each correct cluster (when all 4 words in the group classified
    by the player match the 4 words in the gold category)"; the paper does not say what a fifth group does.
    Our variant (FIDELITY.md): only the first four groups are matched. Groups: yellow exact, two wrong mixes,
    blue exact, then purple exact as a fifth group -> unweighted 2 (yellow + blue), weighted 1 + 3 = 4; the
    fifth group would have added purple (unweighted 3, weighted 8) under an every-group reading."""
    from custom_metrics.parsing import ParsedGroup

    groups = [
        ParsedGroup("y", GOLD[0]),
        ParsedGroup("m1", GOLD[1][:2] + GOLD[3][:2]),
        ParsedGroup("m2", GOLD[1][2:] + GOLD[3][2:]),
        ParsedGroup("b", GOLD[2]),
        ParsedGroup("p", GOLD[3]),
    ]
    scored = connections.clustering_scores(groups, GOLD)
    assert scored["unweighted"] == 2 and scored["weighted"] == 4
    assert scored["right"] == [True, False, True, False]
