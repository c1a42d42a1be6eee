"""The words of one list: split at its separators, conjunctions dropped, mapped onto the pool's spelling."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from custom_metrics.parsing.pool import SEPARATOR_CHARS, PoolIndex
from custom_metrics.text import clean_item, word_key

MAX_ITEM_CHARS = 200  # a longer "word" is prose, not a pool word
MAX_LIST_ITEMS = 64  # a longer list is not a group
_ITEM_SEPARATORS = re.compile(f"[{SEPARATOR_CHARS}]")
COMMA_SEPARATORS = re.compile(r"[,，、،]")
_CONJUNCTIONS = ("and ", "& ", "y ", "e ", "et ", "und ", "और ", "و ")


def drop_conjunction(item: str) -> str:
    """``and SQUASH`` -> ``SQUASH`` (a list's last item often starts with a conjunction)."""
    if " " in item:
        lowered = item[:5].lower()
        for word in _CONJUNCTIONS:
            if lowered.startswith(word):
                return item[len(word) :].lstrip()
    return item


@lru_cache(maxsize=65_536)
def split_items(body: str) -> tuple[str, ...]:
    """The items of a list body (cached: the same groups recur across games and models)."""
    return tuple(_split_items_uncached(body))


def _split_items_uncached(body: str) -> list[str]:
    if "\n" in body or ";" in body or not body.isascii():
        pieces = _ITEM_SEPARATORS.split(body)
    else:
        pieces = body.split(",")
    items = []
    for raw in pieces:
        item = clean_item(raw)
        if item:
            if " " in item:
                item = drop_conjunction(item)
            if len(item) <= MAX_ITEM_CHARS:
                items.append(item)
    return items


def map_items(items: Sequence[str], index: PoolIndex | None, *, loose_last: bool = False) -> tuple[list[str], int, frozenset[str]]:
    """Items in pool spelling where they name a pool word, the number of distinct pool words named, and
    the matching keys of the resulting words."""
    if index is None:
        keys = frozenset(map(word_key, items))
        return list(items), -1, keys - _NO_KEY if "" in keys else keys
    if index.has_separator_words:
        items = _rejoin_separated(items, index)
    item_keys = list(map(word_key, items))
    found = list(map(index.by_key.get, item_keys))
    if None not in found:
        return found, len(set(found)), frozenset(item_keys)
    last = len(items) - 1
    for position, item in enumerate(items):
        if found[position] is None:
            hit = index.lookup(item, loose_tail=loose_last and position == last)
            if hit is not None:
                found[position] = hit
                item_keys[position] = word_key(hit)
    named = set(found)
    named.discard(None)
    keys = frozenset(item_keys)
    mapped = [item if hit is None else hit for hit, item in zip(found, items)]
    return mapped, len(named), keys - _NO_KEY if "" in keys else keys


_NO_KEY = frozenset([""])


def _rejoin_separated(items: Sequence[str], index: PoolIndex) -> list[str]:
    """Join ``'20'`` + ``'000'`` back into the pool word ``20,000`` when the split item is not a pool word."""
    out: list[str] = []
    i = 0
    while i < len(items):
        if i + 1 < len(items) and word_key(items[i]) not in index.by_key:
            for glue in (",", ", "):
                joined = items[i] + glue + items[i + 1]
                if word_key(joined) in index.by_key:
                    out.append(joined)
                    i += 2
                    break
            else:
                out.append(items[i])
                i += 1
            continue
        out.append(items[i])
        i += 1
    return out
