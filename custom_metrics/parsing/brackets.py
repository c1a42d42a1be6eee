"""Bracketed lists: ``<Topic>: ['w1', 'w2', ...]`` (the prompts' own format), Python dicts and JSON objects alike."""

from __future__ import annotations

import re

from custom_metrics.parsing.items import MAX_LIST_ITEMS, map_items, split_items
from custom_metrics.parsing.labels import label_and_topic
from custom_metrics.parsing.pool import SEPARATOR_CHARS, ParsedGroup, PoolIndex

MAX_LIST_CHARS = 4000  # bracket contents scanned at most this far
MAX_TOPIC_LOOKBACK = 300
MAX_LISTS = 256  # only the last this many bracketed lists are read (answers come last)
_BRACKET_LIST = re.compile(rf"\[[^\[\]]{{0,{MAX_LIST_CHARS}}}\]")


def _bracket_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the last MAX_LISTS + 1 ``[...]`` holding no other bracket (linear regex scan)."""
    spans = [match.span() for match in _BRACKET_LIST.finditer(text)]  # text is at most MAX_RESPONSE_CHARS
    return spans[-(MAX_LISTS + 1) :]


def bracket_groups(text: str, index: PoolIndex | None) -> list[ParsedGroup]:
    groups: list[ParsedGroup] = []
    previous_end = 0
    spans = _bracket_spans(text)
    if len(spans) > MAX_LISTS:
        previous_end = spans[-MAX_LISTS - 1][1]
        spans = spans[-MAX_LISTS:]
    for start, end in spans:
        prefix = text[max(previous_end, start - MAX_TOPIC_LOOKBACK) : start]
        previous_end = end
        body = text[start + 1 : end - 1]
        if len(body) >= MAX_LIST_ITEMS and sum(body.count(sep) for sep in SEPARATOR_CHARS) >= MAX_LIST_ITEMS:
            continue
        items = split_items(body)
        if not items:
            label, topic = label_and_topic(prefix)
            if label:  # "'Topic': []" is an (empty) answer group; a bare "[]" is not
                groups.append(ParsedGroup(topic, [], start, label, True, 0 if index else -1, frozenset()))
            continue
        words, hits, keys = map_items(items, index)
        if hits == 0:
            continue  # "[Kitchen items]" or a citation: not a group of pool words
        if index is not None and _is_pool_echo(hits, index):
            continue
        label, topic = label_and_topic(prefix)
        groups.append(ParsedGroup(topic, words, start, label, True, hits, keys))
    return groups


def _is_pool_echo(pool_hits: int, index: PoolIndex) -> bool:
    """A list naming most of a pool of six or more words (the pool repeated back) is not an answer group."""
    size = len(index.by_key)
    return size >= 6 and pool_hits >= 0.75 * size
