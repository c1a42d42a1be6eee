"""Train a tiny real fastText model for smoke runs, tests and benchmarks (no 7 GB download needed).

The model is trained with ``fasttext.train_unsupervised`` on a generated corpus in which the words of
each topic co-occur with the topic's own words, and saved under the official file name
``cc.<lang>.300.bin`` so that :mod:`custom_metrics.topics` loads it through the normal path.
Its vectors are small (``dim``) and only roughly semantic: use it to exercise the code, never to
report Topic Achieved figures.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Mapping, Sequence


def synthetic_corpus(topics: Mapping[str, Sequence[str]], sentences: int = 2000, seed: int = 0) -> list[str]:
    """Sentences mixing each topic's name tokens with random members of that topic."""
    rng = random.Random(seed)
    names = list(topics)
    lines = []
    for _ in range(sentences):
        topic = rng.choice(names)
        members = list(topics[topic])
        picked = rng.sample(members, k=min(len(members), 3))
        tokens = topic.lower().split() + [w.lower() for w in picked]
        rng.shuffle(tokens)
        lines.append(" ".join(tokens))
    return lines


def train_small_fasttext(
    folder: str | Path,
    topics: Mapping[str, Sequence[str]],
    lang: str = "en",
    dim: int = 16,
    sentences: int = 2000,
    seed: int = 0,
) -> Path:
    """Train on :func:`synthetic_corpus` and save ``folder/cc.<lang>.300.bin``; returns the path."""
    import fasttext

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / f"corpus.{lang}.txt"
    corpus.write_text("\n".join(synthetic_corpus(topics, sentences, seed)) + "\n", encoding="utf-8")
    model = None
    for lr in (0.05, 0.025, 0.01, 0.005):  # fastText can diverge (NaN loss) on tiny corpora: retry gentler
        try:
            model = fasttext.train_unsupervised(
                str(corpus), model="skipgram", dim=dim, epoch=5, minCount=1, minn=2, maxn=4, bucket=20_000,
                thread=1, verbose=0, lr=lr,
            )
        except RuntimeError as error:
            if "NaN" not in str(error):
                raise
            continue
        if _usable(model, topics):
            break
        model = None  # silently diverged (NaN or all-zero vectors): retry gentler
    if model is None:
        raise RuntimeError("fastText training diverged at every learning rate")
    target = folder / f"cc.{lang}.300.bin"
    model.save_model(str(target))
    corpus.unlink()
    return target


def _usable(model, topics: Mapping[str, Sequence[str]]) -> bool:
    """True when every topic word has a finite, non-zero vector (training can diverge without raising)."""
    import numpy as np

    for words in topics.values():
        for word in words:
            vector = np.asarray(model.get_word_vector(word.lower()), dtype=np.float64)
            if not np.all(np.isfinite(vector)) or not np.any(vector):
                return False
    return True
