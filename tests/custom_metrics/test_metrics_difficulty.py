"""Difficulty measures on hand-made cases: word overlap, K-means ARI and silhouette (real fastText loader)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from custom_metrics.difficulty import group_labels, kmeans_ari, overlap_of_lists, silhouette, word_overlap
from custom_metrics.topics import Embedder, get_embedder
from tests.support.fasttext_small import train_small_fasttext


def test_word_overlap_counts_shared_words_per_topic():
    response = (
        "```python\n{\n    '___keeper': ['Book', 'Bee', 'Inn', 'Crypt'],\n"
        "    'Professions': ['Engineer', 'Teacher', 'Scientist', 'Doctor', 'Book', 'Keeper'],\n"
        "    'Kitchen Utensils': ['Spoon', 'Knife', 'Straw', 'Fork'],\n"
        "    'American Holidays': ['Patrick', 'Memorial', 'Thanksgiving', 'Labor']\n}\n```"
    )
    assert word_overlap(response) == {"overlap": 0.5, "length": 4.5}


def test_word_overlap_word_in_three_lists_and_empty_lists():
    # "a" is shared by three lists: each ordered pair counts, 6 pairs / 3 lists = 2.
    assert overlap_of_lists([["a", "b"], ["a", "c"], ["a", "d"]]) == {"overlap": 2.0, "length": 2.0}
    assert word_overlap('{"A": ["x", "y"], "B": []}') == {"overlap": 0.0, "length": 1.0}


def test_word_overlap_repeated_topic_keeps_last_list_and_unparseable_is_nan():
    assert word_overlap("{'A': ['x'], 'A': ['x', 'y'], 'B': ['y']}") == {"overlap": 1.0, "length": 1.5}
    result = word_overlap("no dictionary here")
    assert math.isnan(result["overlap"]) and math.isnan(result["length"])


def test_group_labels_first_group_wins_and_pool_filters():
    words, labels = group_labels([["a", "B"], ["b", "c", "zz"]], pool=["a", "b", "c"])
    assert words == ["a", "B", "c"] and labels == [0, 0, 1]


class _FixedModel:
    """A stand-in fastText model with chosen vectors (to check the sklearn wiring exactly)."""

    def __init__(self, vectors: dict[str, list[float]]):
        self.vectors = {k.lower(): np.asarray(v, dtype=np.float32) for k, v in vectors.items()}

    def get_dimension(self) -> int:
        return 2

    def get_sentence_vector(self, text: str):
        return self.vectors[text]


def test_ari_and_silhouette_on_separable_vectors():
    model = _FixedModel({"a": [1, 0.1], "b": [1, 0.0], "c": [0.1, 1], "d": [0, 1]})
    embedder = Embedder(model)
    assert kmeans_ari([["a", "b"], ["c", "d"]], embedder, runs=2, n_init=3) == pytest.approx(1.0)
    assert kmeans_ari([["a", "c"], ["b", "d"]], embedder, runs=2, n_init=3) < 0
    assert silhouette([["a", "b"], ["c", "d"]], embedder) > 0.8
    assert silhouette([["a", "c"], ["b", "d"]], embedder) < 0
    assert math.isnan(silhouette([["a", "b", "c", "d"]], embedder))


def test_ari_and_silhouette_with_real_fasttext_model(tmp_path, monkeypatch):
    topics = {"fruit": ["apple", "pear", "plum", "fig"], "tool": ["hammer", "saw", "drill", "wrench"]}
    train_small_fasttext(tmp_path, topics, lang="en", dim=16, sentences=3000)
    monkeypatch.setenv("TRIANGULATE_FASTTEXT_DIR", str(tmp_path))
    embedder = get_embedder("en")
    assert embedder is not None and embedder.dim == 16
    groups = list(topics.values())
    ari = kmeans_ari(groups, embedder, runs=2, n_init=3)
    assert -1.0 <= ari <= 1.0
    score = silhouette(groups, embedder)
    assert -1.0 <= score <= 1.0
    assert silhouette(groups, embedder) == score  # deterministic


def test_ari_of_a_clustering_that_crosses_every_gold_group_is_minus_one_half():
    """Seed 000 §6: K-means (k = groups) on the word vectors, scored by the Adjusted Rand Index.

    Gold {a, b}, {c, d}; vectors a = c = e1, b = d = e2, so K-means (k = 2) finds {a, c}, {b, d}.
    Contingency table [[1, 1], [1, 1]]: sum C(n_ij, 2) = 0; row sums 2, 2 -> sum C(2, 2) = 2; column
    sums likewise 2; C(4, 2) = 6.  Expected index = 2 * 2 / 6 = 2/3, max index = (2 + 2) / 2 = 2,
    ARI = (0 - 2/3) / (2 - 2/3) = -0.5 for every K-means seed, so the 10-seed mean is -0.5 too.
    Same partition as the gold groups ({a, b} = e1, {c, d} = e2): ARI = 1."""
    crossing = Embedder(_FixedModel({"a": [1, 0], "c": [1, 0], "b": [0, 1], "d": [0, 1]}))
    assert kmeans_ari([["a", "b"], ["c", "d"]], crossing) == pytest.approx(-0.5)
    same = Embedder(_FixedModel({"a": [1, 0], "b": [1, 0], "c": [0, 1], "d": [0, 1]}))
    assert kmeans_ari([["a", "b"], ["c", "d"]], same) == pytest.approx(1.0)


def test_fasttext_sentence_vector_is_the_mean_of_unit_token_vectors(tmp_path, monkeypatch):
    """The docstring's claim about the vectors ARI and Topic Achieved use: fastText's sentence vector
    of "w1 w2" is (w1/|w1| + w2/|w2|) / 2 (its getSentenceVector for unsupervised models), not the
    mean of the raw token vectors."""
    topics = {"fruit": ["apple", "pear", "plum", "fig"], "tool": ["hammer", "saw", "drill", "wrench"]}
    train_small_fasttext(tmp_path, topics, lang="en", dim=16, sentences=3000)
    monkeypatch.setenv("TRIANGULATE_FASTTEXT_DIR", str(tmp_path))
    model = get_embedder("en").model
    one, two = (np.asarray(model.get_word_vector(w), dtype=np.float64) for w in ("apple", "hammer"))
    unit_mean = (one / np.linalg.norm(one) + two / np.linalg.norm(two)) / 2
    got = np.asarray(model.get_sentence_vector("apple hammer"), dtype=np.float64)
    assert np.allclose(got, unit_mean, atol=1e-5)
    assert not np.allclose(got, (one + two) / 2, atol=1e-5) or np.isclose(np.linalg.norm(one), np.linalg.norm(two))
