"""GlobalGroup game-difficulty measures (seed 000 §4.2, §6 "Adjusted Rand Index" / "Word Overlap", App. I.3).

* Word overlap: a model proposes candidate words per topic *with replacement* (App. A.3 prompt); the
  overlap is the sum, over ordered pairs of distinct proposed lists, of their set intersection size,
  divided by the number of lists (= each topic's shared words averaged over topics); the length is
  the mean list length (duplicates and empty lists included).  Words are compared as written (no
  case folding), as the published values were.  This reproduces the published ``Average CanProp Group Overlap`` and
  ``Average CanProp Group Length`` columns.
* ARI (§4.2: words are "represented by their embedding, calculated by tokenizing each word or
  phrase and averaging the embeddings across the tokens"; §6: "apply K-means clustering, setting k
  to the number of groups in a game"): each word is fastText's sentence vector of its lower-cased
  tokens, which is the mean of the *unit-normalised* token vectors (fastText's
  ``getSentenceVector``; the paper's wording suggests raw token vectors), rescaled to unit length;
  K-means (k = number of groups) and the Adjusted Rand Index against the gold groups.  The paper
  does not say how K-means' random start is fixed; averaging ARI over 10 K-means seeds (each with
  ``n_init=10``) is our choice, so one game's ARI does not hinge on one random start.
* Silhouette: the cosine silhouette score of the gold (or predicted) groups as clusters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from custom_metrics.parsing import find_groups, merge_restated
from custom_metrics.text import word_key
from custom_metrics.topics import Embedder

__all__ = ["word_overlap", "overlap_of_lists", "kmeans_ari", "silhouette", "group_labels"]


def overlap_of_lists(lists: Sequence[Sequence[str]]) -> dict[str, float]:
    """Overlap and length of candidate lists (see module docstring); NaN for no lists."""
    if not lists:
        return {"overlap": math.nan, "length": math.nan}
    sets = [frozenset(words) for words in lists]
    n = len(sets)
    shared = sum(len(sets[i] & sets[j]) for i in range(n) for j in range(n) if i != j)
    return {"overlap": shared / n, "length": sum(len(words) for words in lists) / n}


def word_overlap(candidate_response: str) -> dict[str, float]:
    """Word overlap of a candidate-proposal response (a dict of topic -> candidate words).

    A topic written twice keeps its last list, as a Python dict would.  Unparseable -> NaN values.
    """
    groups = merge_restated(find_groups(candidate_response))
    return overlap_of_lists([g.words for g in groups])


def group_labels(groups: Sequence[Sequence[str]], pool: Sequence[str] | None = None) -> tuple[list[str], list[int]]:
    """Words and their group index (first group wins for a repeated word; words outside ``pool`` dropped)."""
    allowed = None if pool is None else {word_key(w) for w in pool}
    seen: set[str] = set()
    words: list[str] = []
    labels: list[int] = []
    for label, group in enumerate(groups):
        for word in group:
            key = word_key(word)
            if not key or key in seen or (allowed is not None and key not in allowed):
                continue
            seen.add(key)
            words.append(word)
            labels.append(label)
    return words, labels


def kmeans_ari(groups: Sequence[Sequence[str]], embedder: Embedder, runs: int = 10, n_init: int = 10) -> float:
    """Seed 000 §6: fastText word vectors, "K-means clustering, setting k to the number of groups in a
    game", evaluated "with the Adjusted Rand Index"; the mean over ``runs`` K-means seeds (ours, see
    the module docstring).  NaN with fewer than 2 groups or no more words than groups."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    words, labels = group_labels(groups)
    k = len(set(labels))
    if k < 2 or len(words) <= k:
        return math.nan
    vectors = embedder.matrix(words).astype(np.float64)
    scores = []
    for seed in range(runs):
        predicted = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(vectors)
        scores.append(adjusted_rand_score(labels, predicted))
    return float(np.mean(scores))


def silhouette(groups: Sequence[Sequence[str]], embedder: Embedder, pool: Sequence[str] | None = None) -> float:
    """Cosine silhouette score of groups as clusters (NaN when fewer than 2 groups or too few words)."""
    from sklearn.metrics import silhouette_score

    words, labels = group_labels(groups, pool)
    k = len(set(labels))
    if k < 2 or len(words) <= k:
        return math.nan
    vectors = embedder.matrix(words).astype(np.float64)
    if not np.any(vectors):
        return math.nan
    return float(silhouette_score(vectors, labels, metric="cosine"))


#: seed 000 App. K.3: each metric's range and its correlation "in the direction of difficulty"
INTEGRATED_TERMS: tuple[tuple[str, float, float, float], ...] = (
    ("group_count", 2.0, 4.0, 1.0),
    ("ari", -1.0, 1.0, -0.9),
    ("overlap", 0.0, 3.0, 0.8),
)


def integrated_difficulty(group_count: float, ari: float, overlap: float) -> float:
    """Seed 000 App. K.3 "Devising An Integrated Difficulty Metric": "Project each metric's value,
    considering the metric's range, onto a range of [0, 1]. For group count we project from the range
    [2, 4], for ARI ... [-1, 1], and for word overlap ... [0, 3]"; then "a weighted summation of the
    projected values, with each value weighted by its metric's respective correlation coefficient in the
    direction of difficulty" (group count 1.000, ARI -0.900, overlap 0.800), "within the range of
    [-0.9, 1.8]. This is finally projected into the range [0, 1]". Values outside a range are not clipped."""
    values = {"group_count": group_count, "ari": ari, "overlap": overlap}
    total = sum(weight * (values[name] - lo) / (hi - lo) for name, lo, hi, weight in INTEGRATED_TERMS)
    low = sum(min(w, 0.0) for *_, w in INTEGRATED_TERMS)
    high = sum(max(w, 0.0) for *_, w in INTEGRATED_TERMS)
    return (total - low) / (high - low)
