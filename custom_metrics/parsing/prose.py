"""Unbracketed lists: ``Topic: a, b, c`` / ``Topic: - a - b`` after a colon, and (with a pool) lines of pool words
under a topic line, markdown table rows, one bulleted word per line."""

from __future__ import annotations

import re

from custom_metrics.parsing.items import COMMA_SEPARATORS, MAX_LIST_ITEMS, drop_conjunction, map_items
from custom_metrics.parsing.labels import clean_label, label_from_prefix, topic_from_label
from custom_metrics.parsing.pool import ParsedGroup, PoolIndex
from custom_metrics.text import clean_item

MAX_COLONS = 400  # only the last this many colons are examined by the unbracketed reader
COLON_BODY_CHARS = 1_500


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


_DASH_SEPARATORS = re.compile(r"(?:^|\s)[-–—•](?:\s|$)")
_LABEL_ITEM_BREAK = re.compile(r"\*\*|\s[-–—]\s")
_COLON_TAIL_CUT = re.compile(r"\s{2,}|\s[-–—(]\s?|[.;!?](?:\s|$)| - ")


def colon_groups(text: str, index: PoolIndex | None) -> list[ParsedGroup]:
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
        raw_items = COMMA_SEPARATORS.split(body)
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
        items = [i for i in (drop_conjunction(clean_item(r)) for r in raw_items) if i]
        if len(items) < 2 or any(len(i) > 60 for i in items[:-1]):
            continue
        words, hits, keys = map_items(items, index, loose_last=True)
        if index is not None and hits < 2:
            continue  # an unbracketed list must name pool words, else it is prose with commas
        label_start = max(previous_end, colon - 120)
        label = label_from_prefix(text[label_start:colon])
        if head:
            label = f"{label}: {clean_label(head)}" if label else clean_label(head)
        groups.append(ParsedGroup(topic_from_label(label), words, colon, label, False, hits, keys))
        # The next label may start inside this list's last item (newlines stripped): look back from there.
        previous_end = colon + 1 + stop - len(raw_tail)
    return groups


MAX_LINES = 400  # only the last this many lines are examined by the line reader
_TABLE_RULE = re.compile(r"^[\s|:\-]+$")
_BULLET = re.compile(r"^(?:[-*•+]|\d{1,2}[.)])\s+(.{1,200})$")


def line_groups(text: str, index: PoolIndex) -> list[ParsedGroup]:
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
            words, hits, keys = map_items(run, index)
            label = clean_label(run_label) if len(run_label) <= 200 else ""
            groups.append(ParsedGroup(topic_from_label(label), words, run_start, label, False, hits, keys))
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
        raw_items = COMMA_SEPARATORS.split(body)
        if len(raw_items) < 2 or len(raw_items) > MAX_LIST_ITEMS:
            continue
        items = [i for i in (drop_conjunction(clean_item(r)) for r in raw_items) if i]
        words, hits, keys = map_items(items, index)
        if hits < 2 or 2 * hits < len(items):
            continue  # a list of pool words, not prose
        label = clean_label(label_text) if len(label_text) <= 200 else ""
        groups.append(ParsedGroup(topic_from_label(label), words, line_start, label, False, hits, keys))
    flush()
    return groups
