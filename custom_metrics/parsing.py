"""Robust parsing of word-grouping answers (GlobalGroup seed 000 App. A, NYT Connections seed 001 App. A).

Handles the prompt's own format ``<Topic>: ['w1', 'w2', ...]`` and what models really write: Python
dicts, markdown (``**Topic**: [...]``, bullets, numbering), curly quotes, ``Category 1:`` prefixes,
reasoning followed by a final answer (the answer after the last "final answer"/"Groupings:" marker
wins), newlines stripped (``...BAGEL]Permission: [APPROVAL, ...]``), JSON objects, and, with a pool,
unbracketed ``Topic: a, b, c`` lists, word lines under a topic line, bulleted words, table rows; extra
groups are returned in order.  Words are mapped onto the pool's spelling case- and accent-insensitively;
words not in the pool are kept as written and so never match a gold word.

Safety: no eval; every regular expression is linear (bounded repeats over disjoint character
classes), the colon-list scan is a bounded loop, and :func:`parse_groups` never raises.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from custom_metrics.text import clean_item, normalize_quotes, word_key

__all__ = ["ParsedGroup", "PoolIndex", "parse_groups", "find_groups", "select_answer", "pool_index"]

MAX_RESPONSE_CHARS = 65_536  # only the end of a longer response is read (answers come last)
MAX_ITEM_CHARS = 200  # a longer "word" is prose, not a pool word
MAX_LIST_CHARS = 4000  # bracket contents scanned at most this far
MAX_TOPIC_LOOKBACK = 300
MAX_LISTS = 256  # only the last this many bracketed lists are read (answers come last)
MAX_LIST_ITEMS = 64  # a longer list is not a group
MAX_COLONS = 400  # only the last this many colons are examined by the unbracketed reader
COLON_BODY_CHARS = 1_500


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
            "," in joined or ";" in joined or (not joined.isascii() and any(sep in joined for sep in _SEPARATOR_CHARS))
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


# --- bracketed lists -------------------------------------------------------------------------
_BRACKET_LIST = re.compile(rf"\[[^\[\]]{{0,{MAX_LIST_CHARS}}}\]")
_SEPARATOR_CHARS = ",，、،;；\n"
_ITEM_SEPARATORS = re.compile(f"[{_SEPARATOR_CHARS}]")
_CONJUNCTIONS = ("and ", "& ", "y ", "e ", "et ", "und ", "और ", "و ")

# --- topics ----------------------------------------------------------------------------------
_ANGLE_TOPIC = re.compile(r"<([^<>\n]{1,200})>[^<>\w]{0,10}$")
_DQUOTE_TOPIC = re.compile(r'"((?:[^"\\\n]|\\.){1,200})"\s*$')
_SQUOTE_TOPIC = re.compile(r"'((?:[^'\\\n]|\\.){1,200})'\s*$")
_SENTENCE_FOLLOW = re.compile(r"\s+(?=\S)|(?=\d{1,2}[.)]\s)")
_SENTENCE_PREV = frozenset("abcdefghijklmnopqrstuvwxyz0123456789)\"'")
_LEADING_MARKERS = re.compile(r"^(?:\s|[-*•+#>|]|\d{1,3}[.)](?!\d)|\(\d{1,3}\)|[a-hA-H][.)]\s)+")
_CATEGORY_PREFIX = re.compile(
    r"^(?:category|group|grouping|topic|categoría|categoria|grupo|tema|catégorie|groupe|类别|类|组|分组|"
    r"主题|समूह|श्रेणी|मजमुआ|مجموعة|المجموعة|فئة|الفئة)\s*[#№]?\s*\d{1,3}\s*[:.)\-–—]?\s*",
    re.IGNORECASE,
)
_CATEGORY_WORD = re.compile(r"(?:category|group|categoría|grupo)\s*\d{1,3}\b")  # on lower-cased text
_GENERIC_KEYS = frozenset(
    ["words", "word", "items", "members", "group", "list", "answer", "palabras", "词语", "词", "单词", "शब्द", "كلمات"]
)
_TOPIC_FIELD = re.compile(
    r"[\"'](?:topic|category|name|theme|title|connection|label|tema|categoría|主题|类别|विषय|موضوع|فئة)[\"']"
    r"\s*:\s*[\"']((?:[^\"'\\\n]|\\.){1,200})[\"']",
    re.IGNORECASE,
)
_TOPIC_EDGE = " \t\r\n*_`'\"<>:=,;.-–—|#"

# --- final-answer markers ----------------------------------------------------------------------
_MARKERS = re.compile(
    r"final\s+(?:answer|grouping|groups|categor|solution|output)|groupings?\s*:|correct\s+answer|"
    r"revised\s+grouping|answer\s*(?:is)?\s*:|solution\s*:|in\s+summary|"
    r"respuesta\s+final|respuesta\s*:|soluci[oó]n\s*:|最终答案|最终|答案\s*[:：]|अंतिम\s+उत्तर|उत्तर\s*:|"
    r"الإجابة\s+النهائية|الإجابة\s*:|الجواب\s*:",
)
_MARKERS_ANY_CASE = re.compile(_MARKERS.pattern, re.IGNORECASE)
_THINK_END = "</think>"


def _label_from_prefix(prefix: str) -> str:
    """The label written just before a group's word list (``<Topic>:``, ``"Topic":``, ``**Topic**:``,
    ``Category 1 (Topic):``), without list markers and markdown."""
    line = prefix.rsplit("\n", 1)[-1]
    found = _ANGLE_TOPIC.search(line)
    if found:
        return _clean_label(found.group(1))
    text = line.rstrip().rstrip(" \t:=-–—>*_`")
    for pattern in (_DQUOTE_TOPIC, _SQUOTE_TOPIC):
        found = pattern.search(text)
        if found:
            label = _clean_label(found.group(1).replace('\\"', '"').replace("\\'", "'"))
            if label.casefold() in _GENERIC_KEYS:
                # JSON like {"topic": "Emotions", "words": [...]}: the topic is another field of the object.
                field_value = _TOPIC_FIELD.search(prefix[prefix.rfind("{") + 1 :])
                return _clean_label(field_value.group(1)) if field_value else ""
            return label
    for boundary in ("]", "}", ")", ":"):
        cut = text.rfind(boundary)
        if cut >= 0 and (boundary != ")" or "(" not in text[:cut]):
            text = text[cut + 1 :]
    text = _after_last_sentence(text)
    lowered = text.lower()
    if len(lowered) == len(text) and ("categ" in lowered or "grup" in lowered or "group" in lowered):
        inner = None
        for inner in _CATEGORY_WORD.finditer(lowered):  # noqa: B007 (the last match is wanted)
            pass
        if inner is not None and inner.start() > 0:
            text = text[inner.start() :]  # "KELVIN, METER Category2 (Espionage)" -> "Category2 (Espionage)"
    return _clean_label(text)


def _after_last_sentence(text: str) -> str:
    """The text after the last sentence end (``x. Next``, ``shape.2. Next``); all of it when none."""
    best = None
    for mark in ".!?":
        i = text.rfind(mark)
        while i > 0 and (best is None or i > best[0]):
            if text[i - 1] in _SENTENCE_PREV:
                follow = _SENTENCE_FOLLOW.match(text, i + 1)
                if follow is not None:
                    best = (i, follow.end())
                    break
            i = text.rfind(mark, 0, i)
    return text[best[1] :] if best else text


def _clean_label(label: str) -> str:
    text = label.strip()
    lead = _LEADING_MARKERS.match(text)
    if lead:
        text = text[lead.end() :]
    text = text.strip(_TOPIC_EDGE)
    return " ".join(text.split())[:200]


def _topic_from_label(label: str) -> str | None:
    """The topic named by a label: ``Category 1 (Sports)`` -> ``Sports``; a bare ``Category 1`` -> None."""
    text = _CATEGORY_PREFIX.sub("", label).strip(_TOPIC_EDGE)
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip(_TOPIC_EDGE)
    return text or None


def _drop_conjunction(item: str) -> str:
    """``and SQUASH`` -> ``SQUASH`` (a list's last item often starts with a conjunction)."""
    if " " in item:
        lowered = item[:5].lower()
        for word in _CONJUNCTIONS:
            if lowered.startswith(word):
                return item[len(word) :].lstrip()
    return item


@lru_cache(maxsize=65_536)
def _label_and_topic(prefix: str) -> tuple[str, str | None]:
    """Label and topic of the text before a list (cached: answers reuse topic names across games)."""
    label = _label_from_prefix(prefix)
    return label, _topic_from_label(label)


@lru_cache(maxsize=65_536)
def _split_items(body: str) -> tuple[str, ...]:
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
                item = _drop_conjunction(item)
            if len(item) <= MAX_ITEM_CHARS:
                items.append(item)
    return items


def _map_items(items: Sequence[str], index: PoolIndex | None, *, loose_last: bool = False) -> tuple[list[str], int, frozenset[str]]:
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


def _bracket_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the last MAX_LISTS + 1 ``[...]`` holding no other bracket (linear regex scan)."""
    spans = [match.span() for match in _BRACKET_LIST.finditer(text)]  # text is at most MAX_RESPONSE_CHARS
    return spans[-(MAX_LISTS + 1) :]


def _bracket_groups(text: str, index: PoolIndex | None) -> list[ParsedGroup]:
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
        if len(body) >= MAX_LIST_ITEMS and sum(body.count(sep) for sep in _SEPARATOR_CHARS) >= MAX_LIST_ITEMS:
            continue
        items = _split_items(body)
        if not items:
            label, topic = _label_and_topic(prefix)
            if label:  # "'Topic': []" is an (empty) answer group; a bare "[]" is not
                groups.append(ParsedGroup(topic, [], start, label, True, 0 if index else -1, frozenset()))
            continue
        words, hits, keys = _map_items(items, index)
        if hits == 0:
            continue  # "[Kitchen items]" or a citation: not a group of pool words
        if index is not None and _is_pool_echo(hits, index):
            continue
        label, topic = _label_and_topic(prefix)
        groups.append(ParsedGroup(topic, words, start, label, True, hits, keys))
    return groups


def _is_pool_echo(pool_hits: int, index: PoolIndex) -> bool:
    """A list naming most of a pool of six or more words (the pool repeated back) is not an answer group."""
    size = len(index.by_key)
    return size >= 6 and pool_hits >= 0.75 * size


def _colon_positions(text: str) -> list[int]:
    """Offsets of the last MAX_COLONS colons (ASCII or full-width), ascending."""
    found: list[int] = []
    for colon in (":", "："):
        end = len(text)
        while len(found) < 2 * MAX_COLONS:
            at = text.rfind(colon, 0, end)
            if at < 0:
                break
            found.append(at)
            end = at
    return sorted(found)[-MAX_COLONS:]


_COMMA_SEPARATORS = re.compile(r"[,，、،]")
_DASH_SEPARATORS = re.compile(r"(?:^|\s)[-–—•](?:\s|$)")
_LABEL_ITEM_BREAK = re.compile(r"\*\*|\s[-–—]\s")
_COLON_TAIL_CUT = re.compile(r"\s{2,}|\s[-–—(]\s?|[.;!?](?:\s|$)| - ")


def _colon_groups(text: str, index: PoolIndex | None) -> list[ParsedGroup]:
    """Unbracketed ``Topic: w1, w2, w3`` lists (a fallback when no bracketed list exists)."""
    groups: list[ParsedGroup] = []
    previous_end = 0
    colons = _colon_positions(text)
    for colon in colons:
        limit = min(len(text), colon + 1 + COLON_BODY_CHARS)
        stop = limit
        for terminator in ("\n", ":", "：", "["):
            found = text.find(terminator, colon + 1, stop)
            if found >= 0:
                stop = found
        stop -= colon + 1
        body = text[colon + 1 : colon + 1 + stop]
        raw_items = _COMMA_SEPARATORS.split(body)
        if len(raw_items) < 2:
            raw_items = _DASH_SEPARATORS.split(body)  # "Roads: - LANE - DRIVE - ALLEY - STREET"
            if len(raw_items) < 3:
                continue
        if len(raw_items) > MAX_LIST_ITEMS:
            continue
        last = raw_tail = raw_items[-1]
        if index is None:
            cut = _COLON_TAIL_CUT.search(last.strip())
            last = last.strip()[: cut.start()] if cut else last
        raw_items[-1] = last
        # "Category 1: Office Supplies** - PEN, STAPLE": the label runs into the first item.
        head_parts = _LABEL_ITEM_BREAK.split(raw_items[0])
        head = " ".join(head_parts[:-1]).strip() if len(head_parts) > 1 else ""
        raw_items[0] = head_parts[-1]
        items = [i for i in (_drop_conjunction(clean_item(r)) for r in raw_items) if i]
        if len(items) < 2 or any(len(i) > 60 for i in items[:-1]):
            continue
        words, hits, keys = _map_items(items, index, loose_last=True)
        if index is not None and hits < 2:
            continue  # an unbracketed list must name pool words, else it is prose with commas
        label_start = max(previous_end, colon - 120)
        label = _label_from_prefix(text[label_start:colon])
        if head:
            label = f"{label}: {_clean_label(head)}" if label else _clean_label(head)
        groups.append(ParsedGroup(_topic_from_label(label), words, colon, label, False, hits, keys))
        # The next label may start inside this list's last item (newlines stripped): look back from there.
        previous_end = colon + 1 + stop - len(raw_tail)
    return groups


MAX_LINES = 400  # only the last this many lines are examined by the line reader
_TABLE_RULE = re.compile(r"^[\s|:\-]+$")
_BULLET = re.compile(r"^(?:[-*•+]|\d{1,2}[.)])\s+(.{1,200})$")


def _line_groups(text: str, index: PoolIndex) -> list[ParsedGroup]:
    """Lists of pool words without brackets or colons: ``Water, Fire, Earth, Wind`` under a topic line,
    a markdown table row ``| Elements | Water, Fire, Earth, Wind |``, or one bulleted word per line."""
    groups: list[ParsedGroup] = []
    lines = text.split("\n")[-MAX_LINES:]
    start = len(text) - sum(len(line) + 1 for line in lines) + 1
    previous = ""
    run: list[str] = []
    run_label = ""
    run_start = 0

    def flush() -> None:
        if len(run) >= 2:
            words, hits, keys = _map_items(run, index)
            label = _clean_label(run_label) if len(run_label) <= 200 else ""
            groups.append(ParsedGroup(_topic_from_label(label), words, run_start, label, False, hits, keys))
        run.clear()

    for line in lines:
        line_start, start = start, start + len(line) + 1
        stripped = line.strip()
        label_text = previous
        if stripped and not _TABLE_RULE.match(stripped):
            previous = stripped
        bullet = _BULLET.match(stripped)
        if bullet and "," not in stripped and index.lookup(bullet.group(1)) is not None:
            if not run:
                run_label, run_start = label_text, line_start
            run.append(bullet.group(1))
            continue
        flush()
        if not stripped or "[" in stripped or ":" in stripped or "：" in stripped or len(stripped) > 1500:
            continue
        if stripped.startswith("|"):
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if len(cells) < 2:
                continue
            label_text, body = cells[-2], cells[-1]
        else:
            body = stripped
        raw_items = _COMMA_SEPARATORS.split(body)
        if len(raw_items) < 2 or len(raw_items) > MAX_LIST_ITEMS:
            continue
        items = [i for i in (_drop_conjunction(clean_item(r)) for r in raw_items) if i]
        words, hits, keys = _map_items(items, index)
        if hits < 2 or 2 * hits < len(items):
            continue  # a list of pool words, not prose
        label = _clean_label(label_text) if len(label_text) <= 200 else ""
        groups.append(ParsedGroup(_topic_from_label(label), words, line_start, label, False, hits, keys))
    flush()
    return groups


def _prepare(response: object) -> str:
    """Quotes normalised; reasoning before a closing ``</think>`` dropped."""
    if not isinstance(response, str):
        return ""
    think_end = response.rfind(_THINK_END)
    text = response[think_end + len(_THINK_END) :] if think_end >= 0 else response
    text = text[-MAX_RESPONSE_CHARS:]
    return text if text.isascii() else normalize_quotes(text)


def _find(text: str, index: PoolIndex | None, n_groups: int | None = None) -> list[ParsedGroup]:
    bracketed = _bracket_groups(text, index)
    if bracketed and index is None:
        return bracketed
    if len(bracketed) >= (n_groups or 1):
        tail = text.rfind("]") + 1
        if text.find(":", tail) < 0 and text.find("：", tail) < 0 and text.find("\n", tail) < 0:
            return bracketed  # nothing after the last list can be an unbracketed group
    # With a pool, unbracketed lists of pool words count too (``**Sports**: POLO, CRICKET, ...``,
    # a topic line followed by a line of words, markdown table rows).
    prose = _colon_groups(text, index)
    if index is not None:
        taken = {g.start for g in prose}
        prose += [g for g in _line_groups(text, index) if g.start not in taken]
    return sorted(bracketed + prose, key=lambda g: g.start)


def find_groups(response: str, pool: Sequence[str] | None = None) -> list[ParsedGroup]:
    """Every group written anywhere in the response, in order: bracketed lists, and (with a pool, or
    when there is no bracketed list) unbracketed ``Topic: a, b, c`` / ``Topic: - a - b`` lists."""
    try:
        return _find(_prepare(response), pool_index(pool))
    except Exception:  # pragma: no cover - defensive: the parser must never raise
        return []


def merge_restated(groups: list[ParsedGroup]) -> list[ParsedGroup]:
    """A group restated under the same label replaces the earlier one in place (a corrected answer,
    seed 000 App. D); groups without a label are kept as they are."""
    out: list[ParsedGroup] = []
    position: dict[str, int] = {}
    for group in groups:
        key = word_key(group.label) if group.label else ""
        if key and key in position:
            out[position[key]] = group
            continue
        if key:
            position[key] = len(out)
        out.append(group)
    return out


def _select(text: str, groups: list[ParsedGroup], n_groups: int | None) -> list[ParsedGroup]:
    if not groups:
        return []
    need = max(1, n_groups or 1)
    chosen = None
    starts = [g.start for g in groups]  # ascending
    if len(groups) <= need:
        markers: list[int] = []  # no marker can select fewer groups and still hold ``need`` of them
    else:
        lowered = text.lower()
        if len(lowered) == len(text):
            markers = [m.end() for m in _MARKERS.finditer(lowered)]
        else:
            markers = [m.end() for m in _MARKERS_ANY_CASE.finditer(text)]
    for marker in reversed(markers):
        first = bisect_left(starts, marker)
        if len(groups) - first >= need:
            chosen = groups[first:]
            break
    if chosen is None:
        chosen = groups
    bracketed = [g for g in chosen if g.bracketed]
    if len(bracketed) >= min(need, len(chosen)) or (chosen is groups and bracketed):
        chosen = bracketed
    return merge_restated(chosen)


def select_answer(response: str, groups: list[ParsedGroup], n_groups: int | None = None) -> list[ParsedGroup]:
    """The final answer among the groups: those after the last "final answer"-style marker that is
    followed by at least ``n_groups`` groups (1 when unknown), else all groups; bracketed lists win over
    unbracketed ones when there are enough of them; a group restated under the same label replaces the
    earlier one (:func:`merge_restated`)."""
    try:
        return _select(_prepare(response), groups, n_groups)
    except Exception:  # pragma: no cover
        return list(groups)


def parse_groups(response: str, pool: Sequence[str] | None = None, n_groups: int | None = None) -> list[ParsedGroup]:
    """Parse a model's answer into groups (the final answer when it restates one; see :func:`select_answer`).

    Words are mapped onto ``pool`` spellings when a pool is given.  Never raises; unusable input -> [].
    """
    try:
        text = _prepare(response)
        return _select(text, _find(text, pool_index(pool), n_groups), n_groups)
    except Exception:  # pragma: no cover - defensive: the parser must never raise
        return []
