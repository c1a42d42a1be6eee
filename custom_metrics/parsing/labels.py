"""The label written before a group's word list and the topic it names (``<Topic>:``, ``"Topic":``, ``**Topic**:``,
``Category 1 (Topic):``, a JSON object's ``"topic"`` field)."""

from __future__ import annotations

import re
from functools import lru_cache

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


def label_from_prefix(prefix: str) -> str:
    """The label written just before a group's word list (``<Topic>:``, ``"Topic":``, ``**Topic**:``,
    ``Category 1 (Topic):``), without list markers and markdown."""
    line = prefix.rsplit("\n", 1)[-1]
    found = _ANGLE_TOPIC.search(line)
    if found:
        return clean_label(found.group(1))
    text = line.rstrip().rstrip(" \t:=-–—>*_`")
    for pattern in (_DQUOTE_TOPIC, _SQUOTE_TOPIC):
        found = pattern.search(text)
        if found:
            label = clean_label(found.group(1).replace('\\"', '"').replace("\\'", "'"))
            if label.casefold() in _GENERIC_KEYS:
                # JSON like {"topic": "Emotions", "words": [...]}: the topic is another field of the object.
                field_value = _TOPIC_FIELD.search(prefix[prefix.rfind("{") + 1 :])
                return clean_label(field_value.group(1)) if field_value else ""
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
    return clean_label(text)


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


def clean_label(label: str) -> str:
    text = label.strip()
    lead = _LEADING_MARKERS.match(text)
    if lead:
        text = text[lead.end() :]
    text = text.strip(_TOPIC_EDGE)
    return " ".join(text.split())[:200]


def topic_from_label(label: str) -> str | None:
    """The topic named by a label: ``Category 1 (Sports)`` -> ``Sports``; a bare ``Category 1`` -> None."""
    text = _CATEGORY_PREFIX.sub("", label).strip(_TOPIC_EDGE)
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip(_TOPIC_EDGE)
    return text or None


@lru_cache(maxsize=65_536)
def label_and_topic(prefix: str) -> tuple[str, str | None]:
    """Label and topic of the text before a list (cached: answers reuse topic names across games)."""
    label = label_from_prefix(prefix)
    return label, topic_from_label(label)
