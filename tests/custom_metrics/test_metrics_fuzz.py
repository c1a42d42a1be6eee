"""Fuzzing the parser: it never raises, round-trips rendered answers, and parses 1 MB in < 100 ms."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from custom_metrics.connections import score_connections
from custom_metrics.difficulty import word_overlap
from custom_metrics.globalgroup import score_groups
from custom_metrics.matching import key_set
from custom_metrics.parsing import ParsedGroup, parse_groups

POOL = ["Water", "Fire", "Earth", "Wind", "Happy", "Sad", "Angry", "Surprised", "Café", "Niño", "苹果", "सेब"]
TOKENS = [
    "[",
    "]",
    "<",
    ">",
    ":",
    "：",
    ",",
    "，",
    "、",
    "،",
    "'",
    '"',
    "’",
    "“",
    "\\",
    "\n",
    " ",
    "  ",
    "**",
    "-",
    " - ",
    "1.",
    "Category 1",
    "Final answer:",
    "Groupings:",
    "</think>",
    "{",
    "}",
    "(",
    ")",
    "and ",
    "Water",
    "fire",
    "EARTH",
    "Wind",
    "Sad",
    "cafe",
    "苹果",
    "सेब",
    "تفاح",
    "x" * 300,
]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(groups) -> None:
    assert isinstance(groups, list)
    for group in groups:
        assert isinstance(group, ParsedGroup)
        assert group.topic is None or isinstance(group.topic, str)
        assert all(isinstance(w, str) for w in group.words)
        assert group.keys == key_set(group.words)  # keys carried from parsing match the words


@SETTINGS
@given(st.text(max_size=3000), st.booleans(), st.one_of(st.none(), st.integers(0, 6)))
def test_random_text_never_raises(text, with_pool, n_groups):
    groups = parse_groups(text, POOL if with_pool else None, n_groups=n_groups)
    _check(groups)
    word_overlap(text)


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=400), st.booleans())
def test_token_soup_never_raises(tokens, with_pool):
    text = "".join(tokens)
    _check(parse_groups(text, POOL if with_pool else None, n_groups=4))
    scored = score_connections(text, [POOL[:4], POOL[4:8], POOL[8:10], POOL[10:]])
    assert 0 <= scored["unweighted"] <= 4 and 0 <= scored["weighted"] <= 10
    gold = [{"topic": "a", "words": POOL[:4]}, {"topic": "b", "words": POOL[4:8]}]
    scores = score_groups(parse_groups(text, POOL, n_groups=2), gold, POOL, None)
    assert 0.0 <= scores["group_f1"] <= 1.0 and 0.0 <= scores["ctd"] <= 1.0


_STYLES = [
    lambda t, ws: f"<{t}>: [" + ", ".join(f"'{w}'" for w in ws) + "]",
    lambda t, ws: f"**{t}**: [" + ", ".join(f"“{w}”" for w in ws) + "]",
    lambda t, ws: f'"{t}": [' + ", ".join(f'"{w.upper()}"' for w in ws) + "]",
    lambda t, ws: f"- {t}: [" + ", ".join(w.lower() for w in ws) + "]",
]


@SETTINGS
@given(
    st.permutations(POOL),
    st.sampled_from([2, 3, 4]),  # a single group would be the whole pool (an echo, not an answer)
    st.sampled_from(range(len(_STYLES))),
    st.sampled_from(["\n", ", ", " ", ""]),
    st.sampled_from(["", "Sure! Here is my answer:\n", "Reasoning... Final answer: "]),
)
def test_rendered_answers_round_trip(words, n_groups, style, joiner, preamble):
    size = len(words) // n_groups
    groups = [list(words[i * size : (i + 1) * size]) for i in range(n_groups)]
    topics = [f"Topic {chr(65 + i)}" for i in range(n_groups)]
    text = preamble + joiner.join(_STYLES[style](t, ws) for t, ws in zip(topics, groups))
    parsed = parse_groups(text, POOL, n_groups=n_groups)
    assert [g.words for g in parsed] == groups
    assert [g.topic for g in parsed] == topics


def _repeat(piece: str, size: int = 1_000_000) -> str:
    return (piece * (size // len(piece) + 1))[:size]


ADVERSARIAL = {
    "open_brackets": _repeat("["),
    "one_open_bracket": "[" + "a" * 999_999,
    "colons": _repeat(":"),
    "empty_lists": _repeat("[]"),
    "tiny_lists": _repeat("[Water,]"),
    "answers": _repeat("<E>: ['Water', 'Fire', 'Earth', 'Wind'], "),
    "markers": _repeat("Final answer: [Water, Fire] "),
    "colon_lists": _repeat("T: Water, Fire, Earth, Wind "),
    "dash_lists": _repeat("a: - Water - Fire "),
    "angles": _repeat("<" + "x" * 150),
    "escapes": _repeat('"' + "x\\" * 50),
    "long_list": _repeat("[" + "Water," * 700 + "]"),
    "no_structure": _repeat("lorem ipsum dolor sit amet "),
    "word_lines": _repeat("Water, Fire, Earth, Wind\n"),
    "table_rows": _repeat("| a | Water, Fire, Sad |\n"),
    "bullets": _repeat("- Water\n"),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_one_megabyte_parses_under_100_ms(name):
    text = ADVERSARIAL[name]
    assert len(text) == 1_000_000
    best = min(_timed(lambda: parse_groups(text, POOL, n_groups=4)) for _ in range(3))
    assert best < 0.1, f"{name}: {best * 1000:.1f} ms"
    best = min(_timed(lambda: word_overlap(text)) for _ in range(3))
    assert best < 0.1, f"{name} (word_overlap): {best * 1000:.1f} ms"


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started
