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
