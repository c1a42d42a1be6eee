"""A predicted group (:class:`ParsedGroup`) and the pool its words are matched against (:class:`PoolIndex`): case- and
accent-insensitive keys, prefix lookup for annotated items, one cached index per pool."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from custom_metrics.text import word_key

#: list separators; a pool word holding one (``20,000``) makes the item mapper re-join split items
SEPARATOR_CHARS = ",，、،;；\n"


@dataclass(slots=True)
class ParsedGroup:
    """One predicted group: its topic (None when the model gave none) and words (pool spelling when known)."""

    topic: str | None
    words: list[str]
    start: int = field(default=0, compare=False, repr=False)  # offset of the group in the response
    label: str = field(default="", compare=False, repr=False)  # the label as written (``Category 1``)
    bracketed: bool = field(default=True, compare=False, repr=False)  # ``[...]`` list, not ``a, b, c`` prose
    pool_hits: int = field(default=-1, compare=False, repr=False)  # distinct pool words named (-1: no pool)
    keys: frozenset[str] | None = field(default=None, compare=False, repr=False)  # word keys, set at parse time


class PoolIndex:
    """Pool words by matching key, with prefix lookup for annotated items (``TIRE (circular)``)."""

    def __init__(self, pool: Sequence[str]):
        try:
            "".join(pool)  # TypeError unless every word is a str
            words = pool
        except TypeError:
            words = [str(w) for w in pool]
        backwards = words[::-1] if isinstance(words, (list, tuple)) else list(reversed(words))
        self.by_key: dict[str, str] = dict(zip(map(word_key, backwards), backwards))  # first spelling wins
        self.by_key.pop("", None)
        self._max_key_len = -1
        # Pool words that contain a list separator ("20,000") need adjacent items re-joined.
        joined = "\x00".join(self.by_key)
        self.has_separator_words = (
            "," in joined or ";" in joined or (not joined.isascii() and any(sep in joined for sep in SEPARATOR_CHARS))
        )

    @property
    def max_key_len(self) -> int:
        if self._max_key_len < 0:
            self._max_key_len = max(map(len, self.by_key), default=0)
        return self._max_key_len

    def lookup(self, item: str, *, loose_tail: bool = False) -> str | None:
        """The pool word an item names, or None.  A pool word followed by an annotation (``(..)``, ``-``,
        two spaces) also counts; with ``loose_tail`` any text after a word boundary is ignored."""
        key = word_key(item)
        hit = self.by_key.get(key)
        if hit is not None or not key:
            return hit
        best = None
        limit = min(len(key), self.max_key_len)
        for i in range(1, limit + 1):
            if i < len(key) and key[i].isalnum():
                continue
            candidate = self.by_key.get(key[:i].rstrip())
            if candidate is None:
                continue
            rest = key[i:]
            if loose_tail or _ANNOTATION_TAIL.match(rest):
                best = candidate
        return best


_ANNOTATION_TAIL = re.compile(r"\s*(?:$|[(\[\-–—:/=]|\s\s)")


@lru_cache(maxsize=4096)
def _pool_index_cached(pool: tuple[str, ...]) -> PoolIndex:
    return PoolIndex(pool)


def pool_index(pool: Sequence[str] | None) -> PoolIndex | None:
    """A (cached) :class:`PoolIndex` for a pool, or None."""
    if pool is None:
        return None
    try:
        return _pool_index_cached(tuple(pool))  # PoolIndex turns non-string words into strings
    except TypeError:
        return None
