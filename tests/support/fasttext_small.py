"""Test support: train a tiny real fastText model for tests and benchmarks (no 7 GB download needed).

The model is trained with ``fasttext.train_unsupervised`` on a generated corpus in which the words of
each topic co-occur with the topic's own words, and saved under the official file name
``cc.<lang>.300.bin`` so that :mod:`custom_metrics.topics` loads it through the normal path.
Its vectors are small (``dim``) and only roughly semantic: use it to exercise the code, never to
report Topic Achieved figures.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


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
    """Train on :func:`synthetic_corpus` and save ``folder/cc.<lang>.300.bin``; returns the path.

    Training runs in a fresh Python process: in a process that has loaded a torch model, fastText's
    training diverged here (vectors of norm ~1e21), so the parent's state must not leak into it.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / f"corpus.{lang}.txt"
    corpus.write_text("\n".join(synthetic_corpus(topics, sentences, seed)) + "\n", encoding="utf-8")
    target = folder / f"cc.{lang}.300.bin"
    words = sorted({w.lower() for members in topics.values() for w in members})
    (folder / f"words.{lang}.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), str(corpus), str(target), str(dim)],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    (folder / f"words.{lang}.txt").unlink()
    corpus.unlink()
    if proc.returncode != 0:
        raise RuntimeError(f"fastText training failed: {proc.stderr.strip()[-500:]}")
    return target


def _train_in_this_process(corpus: Path, target: Path, dim: int) -> None:
    """Train with gentler learning rates until every topic word gets a usable vector; save to ``target``."""
    import fasttext

    words = Path(str(corpus).replace("corpus.", "words.")).read_text(encoding="utf-8").split()
    for lr in (0.05, 0.025, 0.01, 0.005):  # fastText can diverge (NaN loss) on tiny corpora: retry gentler
        try:
            model = fasttext.train_unsupervised(
                str(corpus),
                model="skipgram",
                dim=dim,
                epoch=5,
                minCount=1,
                minn=2,
                maxn=4,
                bucket=20_000,
                thread=1,
                verbose=0,
                lr=lr,
            )
        except RuntimeError as error:
            if "NaN" not in str(error):
                raise
            continue
        if _usable(model, words):
            model.save_model(str(target))
            return
    raise RuntimeError("fastText training diverged at every learning rate")


def _usable(model, words: Sequence[str]) -> bool:
    """True when every word has a finite, non-zero, not exploded vector (training can diverge silently)."""
    import numpy as np

    for word in words:
        vector = np.asarray(model.get_word_vector(word), dtype=np.float64)
        if not np.all(np.isfinite(vector)) or not np.any(vector) or np.abs(vector).max() > 1e3:
            return False
    return True


if __name__ == "__main__":
    _train_in_this_process(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))
