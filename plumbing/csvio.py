"""The one CSV writer: every CSV triangulate writes goes through :func:`write_csv` (tables) or :func:`write_rows` (rows),
or is made by :func:`csv_text` for a command that writes its files at once (:func:`plumbing.atomic.write_files`).

Spreadsheets run a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return, which
some strip first) as a formula: a model named ``=cmd|' /C calc'!A0`` would run a command when someone opens
``scores.csv``. Following OWASP's CSV-injection guidance (https://owasp.org/www-community/attacks/CSV_Injection)
every text cell, header and index label that starts with one of these characters is written with a leading
single quote, which a spreadsheet shows as text; numbers are written as numbers (``-0.5`` stays a number).
A text cell that itself starts with a quote and one of these characters gets one more quote, so
:func:`unescape_cell` gives back exactly the text that was written (``triangulate report --external`` reads our
own ``leaderboard.csv`` back through it).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from plumbing.atomic import write_text

#: a cell starting with one of these is a formula to a spreadsheet (OWASP: ``= + - @``, tab, carriage return)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def _needs_quote(text: str) -> bool:
    return text.startswith(FORMULA_STARTS) or (text.startswith(QUOTE) and text[1:].startswith((*FORMULA_STARTS, QUOTE)))


def escape_cell(value: Any) -> Any:
    """``value`` as a spreadsheet shows it as text: a string that starts like a formula gets a leading ``'``
    (anything else, numbers included, is returned unchanged)."""
    if isinstance(value, str) and _needs_quote(value):
        return QUOTE + value
    return value


def unescape_cell(value: Any) -> Any:
    """The inverse of :func:`escape_cell` (a string it quoted loses that one quote)."""
    if isinstance(value, str) and value.startswith(QUOTE) and _needs_quote(value[1:]):
        return value[1:]
    return value


def escape_frame(frame: Any) -> Any:
    """A copy of a pandas DataFrame with every text cell, column label and index label escaped."""
    out = frame.map(escape_cell).rename(index=escape_cell, columns=escape_cell)
    out.index = out.index.set_names([escape_cell(n) for n in out.index.names])
    out.columns = out.columns.set_names([escape_cell(n) for n in out.columns.names])
    return out


def unescape_frame(frame: Any) -> Any:
    """:func:`escape_frame` undone (a table read back from a CSV this module wrote)."""
    out = frame.map(unescape_cell).rename(index=unescape_cell, columns=unescape_cell)
    out.index = out.index.set_names([unescape_cell(n) for n in out.index.names])
    return out


def csv_text(frame: Any, *, index: bool = True) -> str:
    """A pandas DataFrame as CSV text with every text cell escaped (:func:`escape_cell`). Lines end in CRLF (RFC 4180),
    so a cell holding a carriage return is quoted and cannot start a new row (the ``csv`` module quotes only the
    characters of its line terminator)."""
    escaped = escape_frame(frame)
    return escaped.to_csv(index=index, lineterminator="\r\n")


def write_csv(frame: Any, path: str | os.PathLike, *, index: bool = True) -> Path:
    """Write a pandas DataFrame as CSV (:func:`csv_text`; UTF-8, atomically)."""
    text = csv_text(frame, index=index)
    return write_text(path, text)


def write_rows(path: str | os.PathLike, header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> Path:
    """Write a header and rows as CSV (UTF-8, atomically) with every text cell escaped (:func:`escape_cell`)."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    for row in [header, *rows]:
        writer.writerow([escape_cell(v) for v in row])
    return write_text(path, buffer.getvalue())
