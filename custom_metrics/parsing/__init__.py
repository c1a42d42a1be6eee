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

from custom_metrics.parsing.brackets import bracket_groups
from custom_metrics.parsing.pool import ParsedGroup, PoolIndex, pool_index
from custom_metrics.parsing.prose import colon_groups, line_groups
from custom_metrics.text import normalize_quotes, word_key

__all__ = ["ParsedGroup", "PoolIndex", "parse_groups", "find_groups", "select_answer", "merge_restated", "pool_index"]

MAX_RESPONSE_CHARS = 65_536  # only the end of a longer response is read (answers come last)

# --- final-answer markers ----------------------------------------------------------------------
_MARKERS = re.compile(
    r"final\s+(?:answer|grouping|groups|categor|solution|output)|groupings?\s*:|correct\s+answer|"
    r"revised\s+grouping|answer\s*(?:is)?\s*:|solution\s*:|in\s+summary|"
    r"respuesta\s+final|respuesta\s*:|soluci[oó]n\s*:|最终答案|最终|答案\s*[:：]|अंतिम\s+उत्तर|उत्तर\s*:|"
    r"الإجابة\s+النهائية|الإجابة\s*:|الجواب\s*:",
)
_MARKERS_ANY_CASE = re.compile(_MARKERS.pattern, re.IGNORECASE)
_THINK_END = "</think>"


def _prepare(response: object) -> str:
    """Quotes normalised; reasoning before a closing ``</think>`` dropped."""
    if not isinstance(response, str):
        return ""
    think_end = response.rfind(_THINK_END)
    text = response[think_end + len(_THINK_END) :] if think_end >= 0 else response
    text = text[-MAX_RESPONSE_CHARS:]
    return text if text.isascii() else normalize_quotes(text)


def _find(text: str, index: PoolIndex | None, n_groups: int | None = None) -> list[ParsedGroup]:
    bracketed = bracket_groups(text, index)
    if bracketed and index is None:
        return bracketed
    if len(bracketed) >= (n_groups or 1):
        tail = text.rfind("]") + 1
        if text.find(":", tail) < 0 and text.find("：", tail) < 0 and text.find("\n", tail) < 0:
            return bracketed  # nothing after the last list can be an unbracketed group
    # With a pool, unbracketed lists of pool words count too (``**Sports**: POLO, CRICKET, ...``,
    # a topic line followed by a line of words, markdown table rows).
    prose = colon_groups(text, index)
    if index is not None:
        taken = {g.start for g in prose}
        prose += [g for g in line_groups(text, index) if g.start not in taken]
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
