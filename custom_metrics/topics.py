"""fastText embeddings: the "Topic Achieved" rule (seed 000 §4.1, App. E) and cached text vectors.

Topic achieved: the cosine similarity between a predicted topic and its matched true topic is
>= 0.3 and higher than its similarity to every other true topic of the game.  Vectors come from the
official Common Crawl models ``$TRIANGULATE_FASTTEXT_DIR/cc.<lang>.300.bin``; without one, scores
are NaN and ONE warning per language says how to get the vectors.  Topics are lower-cased before
embedding (models often answer in capitals, as the prompt's own example does); Chinese text is
segmented into words with jieba first, as the paper did (seed 000 App. J: gensim, NLTK, jieba).
"""

from __future__ import annotations

import re
import sys
import threading
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

with warnings.catch_warnings():  # jieba imports pkg_resources, which setuptools < 81 (triangulate[battery]) deprecates aloud
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
    import jieba

from plumbing.paths import fasttext_dir

FASTTEXT_ENV = "TRIANGULATE_FASTTEXT_DIR"
DOWNLOAD_URL = "https://fasttext.cc/docs/en/crawl-vectors.html"
TOPIC_THRESHOLD = 0.3

_warned: set[str] = set()
_lock = threading.Lock()


def fasttext_path(lang: str, folder: Path | None = None) -> Path | None:
    """``<folder>/cc.<lang>.300.bin`` (default folder: ``$TRIANGULATE_FASTTEXT_DIR``), or None without a folder."""
    folder = folder if folder is not None else fasttext_dir()
    return Path(folder) / f"cc.{lang}.300.bin" if folder else None


@lru_cache(maxsize=8)
def _load_model(path: str):
    import fasttext

    fasttext.FastText.eprint = lambda *args, **kwargs: None  # silence the load-time deprecation notice
    return fasttext.load_model(path)


_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def tokenize(text: str, lang: str = "en") -> list[str]:
    """Lower-cased tokens of a topic or word: whitespace split, and jieba segmentation of Chinese text."""
    lowered = text.lower()
    if lang == "zh" and _HAN.search(lowered):
        jieba.setLogLevel(60)  # no "Building prefix dict" chatter
        return [t for t in jieba.lcut(lowered) if t.strip()]
    return lowered.split()


class Embedder:
    """Unit-length fastText vectors for words and phrases, cached per text."""

    def __init__(self, model, lang: str = "en"):
        self.model = model
        self.lang = lang
        self.dim = int(model.get_dimension())
        self._cache: dict[str, np.ndarray] = {}
        self._zero = np.zeros(self.dim, dtype=np.float32)

    def vector(self, text: str | None) -> np.ndarray:
        """The unit vector of a text (fastText sentence vector of its lower-cased tokens); zeros if empty."""
        if not text:
            return self._zero
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        clean = " ".join(tokenize(str(text), self.lang))
        vec = np.asarray(self.model.get_sentence_vector(clean), dtype=np.float32) if clean else self._zero
        norm = float(np.linalg.norm(vec))
        vec = vec / norm if norm > 0 else self._zero
        if len(self._cache) < 2_000_000:
            self._cache[text] = vec
        return vec

    def matrix(self, texts: Sequence[str | None]) -> np.ndarray:
        """Stacked unit vectors (one row per text)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.vector(t) for t in texts])


class TopicScorer:
    """Applies the Topic Achieved rule with one language's embedder."""

    def __init__(self, embedder: Embedder, threshold: float = TOPIC_THRESHOLD):
        self.embedder = embedder
        self.threshold = threshold

    def achieved(self, predicted: Sequence[str | None], true_topics: Sequence[str]) -> list[bool]:
        """Per true group i: does ``predicted[i]`` (its matched prediction's topic, None if unmatched)
        achieve ``true_topics[i]``: cos >= threshold and strictly above its cosine to every other true topic?"""
        if not true_topics:
            return []
        pred = self.embedder.matrix(predicted)[None]
        true = self.embedder.matrix(true_topics)[None]
        present = np.array([[bool(p) for p in predicted]], dtype=bool)
        return [bool(f) for f in _achieved_flags(pred, true, present, self.threshold)[0]]

    def achieved_rates(self, predicted: Sequence[Sequence[str | None]], true_topics: Sequence[Sequence[str]]) -> np.ndarray:
        """Share of true topics achieved, for many games with the same number of groups at once."""
        if not predicted:
            return np.zeros(0)
        n = len(true_topics[0])
        table: dict[str, int] = {}
        texts: list[str | None] = [None]  # id 0: no topic (zero vector)

        def text_id(text: str | None) -> int:
            if not text:
                return 0
            found = table.get(text)
            if found is None:
                found = table[text] = len(texts)
                texts.append(text)
            return found

        pred_ids = np.array([text_id(t) for game in predicted for t in game], dtype=np.int64)
        true_ids = np.array([text_id(t) for game in true_topics for t in game], dtype=np.int64)
        vectors = self.embedder.matrix(texts)
        pred = vectors[pred_ids].reshape(len(predicted), n, -1)
        true = vectors[true_ids].reshape(len(true_topics), n, -1)
        present = (pred_ids != 0).reshape(len(predicted), n)
        return _achieved_flags(pred, true, present, self.threshold).mean(axis=1)


def _achieved_flags(pred: np.ndarray, true: np.ndarray, present: np.ndarray, threshold: float) -> np.ndarray:
    """(games x n) Topic Achieved flags from (games x n x dim) unit vectors of matched predictions and true topics."""
    return achieved_from_similarities(np.einsum("gid,gjd->gij", pred, true), present, threshold)


def achieved_from_similarities(sims: np.ndarray, present: np.ndarray, threshold: float = TOPIC_THRESHOLD) -> np.ndarray:
    """(games x n) Topic Achieved flags from (games x n x n) cosines, ``sims[g, i, j]`` = prediction i vs true
    topic j: prediction i is present, ``sims[g, i, i] >= threshold`` and strictly above every other ``sims[g, i, j]``."""
    n = sims.shape[1]
    own = np.einsum("gii->gi", sims).copy()
    if n > 1:
        others = sims.copy()
        diagonal = np.arange(n)
        others[:, diagonal, diagonal] = -np.inf
        best_other = others.max(axis=2)
    else:
        best_other = np.full_like(own, -np.inf)
    return np.asarray(present, dtype=bool) & (own >= threshold) & (own > best_other)


def _warn_missing(lang: str, path: Path | None) -> None:
    with _lock:
        if lang in _warned:
            return
        _warned.add(lang)
    where = f"{path} does not exist" if path else f"${FASTTEXT_ENV} is not set"
    print(  # one line per language and process, about the machine (not a line of code, so no warnings.warn)
        f"triangulate: note: no fastText vectors for '{lang}' ({where}): topic scores are NaN. For them run "
        f"`triangulate data fasttext {lang}` (cc.{lang}.300.bin, about 7 GB of disk and memory; see {DOWNLOAD_URL}) "
        f"and set {FASTTEXT_ENV} to its folder.",
        file=sys.stderr,
    )


def get_embedder(lang: str) -> Embedder | None:
    """The cached embedder for a language, or None (with one warning) when its model file is missing."""
    return _embedder_in(fasttext_dir(), lang)


@lru_cache(maxsize=64)
def _embedder_in(folder: Path | None, lang: str) -> Embedder | None:
    path = fasttext_path(lang, folder) if folder else None
    if path is None or not path.is_file():
        _warn_missing(lang, path)
        return None
    return _embedder_for(str(path.resolve()), lang)


@lru_cache(maxsize=16)
def _embedder_for(path: str, lang: str) -> Embedder:
    return Embedder(_load_model(path), lang)


def get_topic_scorer(lang: str) -> TopicScorer | None:
    """The cached :class:`TopicScorer` for a language, or None when its fastText model is missing."""
    embedder = get_embedder(lang)
    return None if embedder is None else _scorer_for(embedder)


@lru_cache(maxsize=16)
def _scorer_for(embedder: Embedder) -> TopicScorer:
    return TopicScorer(embedder)
