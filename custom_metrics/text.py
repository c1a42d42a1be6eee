"""Text normalisation shared by the parsers and scorers.

Words are matched to the game's pool case- and accent-insensitively (issue 2, Metrics): a model that
writes ``cafe`` for the pool word ``Café`` or ``“Heat”`` for ``Heat`` is given the word.  Accents
are removed only from Latin, Greek and Cyrillic letters, and Arabic short-vowel marks (harakat) and
tatweel are dropped; the vowel signs of Indic scripts are letters of the word and are kept.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Curly and typographic quotes, primes and full-width quotes -> ASCII.
_QUOTE_TABLE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u00b4": "'",
        "\u0060": "'",
        "\uff07": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\uff02": '"',
        "\u300c": '"',
        "\u300d": '"',
        "\u300e": '"',
        "\u300f": '"',
        "\u00a0": " ",
        "\u2009": " ",
        "\u202f": " ",
        "\u3000": " ",
        "\u200b": "",
        "\u200e": "",
        "\u200f": "",
        "\ufeff": "",
    }
)
_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_SPACES = re.compile(r"\s+")
# Characters stripped from both ends of a word: quotes, markdown emphasis, list punctuation.
_EDGE = " \t\r\n'\"*_`.,;:!?()<>{}[]-–—•·‘’“”«»「」『』，、。：；！？"


def _strip_latin_accents(text: str) -> str:
    """Remove combining marks that sit on Latin, Greek or Cyrillic base letters (é -> e, ü -> u)."""
    out: list[str] = []
    base_is_alphabetic = False
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch):
            if base_is_alphabetic:
                continue
        else:
            base_is_alphabetic = ord(ch) < 0x0530 or 0x1E00 <= ord(ch) <= 0x1FFF
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


_QUOTE_CHARS = tuple((chr(code), replacement) for code, replacement in _QUOTE_TABLE.items())


def normalize_quotes(text: str) -> str:
    """Curly/typographic quotes and exotic spaces -> their ASCII forms (length may shrink by zero-widths)."""
    if text.isascii():
        return text
    for char, replacement in _QUOTE_CHARS:  # a few str.replace calls beat a per-character translate
        if char in text:
            text = text.replace(char, replacement)
    return text


@lru_cache(maxsize=262_144)
def word_key(word: str) -> str:
    """The matching key of a word: NFKC, ASCII quotes, casefold, no Latin accents or Arabic harakat,
    single spaces, no surrounding quotes/markdown/punctuation.  ``word_key('“Café”') == 'cafe'``."""
    text = unicodedata.normalize("NFKC", word).translate(_QUOTE_TABLE)
    text = text.strip(_EDGE).casefold()
    if not text.isascii():
        text = _strip_latin_accents(text)
        text = _ARABIC_MARKS.sub("", text)
    return _SPACES.sub(" ", text).strip()


def clean_item(item: str) -> str:
    """A list item as written, minus surrounding whitespace, quotes and markdown (spelling kept)."""
    text = item.strip(_EDGE)
    if "  " in text or "\n" in text or "\t" in text or "\r" in text:
        text = _SPACES.sub(" ", text).strip()
    return text
