"""Reading JSON and JSONL files with errors that name the file (and line); encoding JSON and text to write.

:func:`read_jsonl` is the one JSONL reader of the project (episode and sample files of run folders): a torn last line
is skipped and counted (``Records.skipped``; :func:`torn_last_lines` for the files a command read), any other
corrupt line is a ``UserError`` naming file and line.

:func:`dumps` is the one JSON encoder for every JSON and JSONL text written: it survives lone UTF-16 surrogates (a
hostile or broken server's ``"\\ud800"``), replacing each with U+FFFD and counting them (other text is written by
:func:`plumbing.atomic.write_text`, which replaces them as it encodes).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from plumbing import atomic
from plumbing.errors import UserError

log = logging.getLogger(__name__)


#: a lone UTF-16 surrogate (valid in a Python str and in JSON's ``\\uXXXX``, not encodable as UTF-8)
_SURROGATE = re.compile("[\ud800-\udfff]")
#: the field an episode record or sample gets when its text had lone surrogates replaced
SURROGATE_COUNT_KEY = "replaced_surrogates"


def clean_text(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate replaced by U+FFFD, and how many there were."""
    return _SURROGATE.subn("\ufffd", text)


def clean_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` (strings, and dicts, lists and tuples of them, keys included) with lone surrogates replaced; the count."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        out, total = {}, 0
        for key, item in value.items():
            key, n_key = clean_surrogates(key)
            out[key], n = clean_surrogates(item)
            total += n + n_key
        return out, total
    if type(value) in (list, tuple):
        items = [clean_surrogates(v) for v in value]
        return type(value)(v for v, _ in items), sum(n for _, n in items)
    return value, 0


def dumps(value: Any, *, count: bool = False, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` that can always be written as UTF-8: lone surrogates are
    replaced by U+FFFD; with ``count`` a dict records how many under ``replaced_surrogates``."""
    clean, n = clean_surrogates(value)
    if count and n and isinstance(clean, dict):
        clean[SURROGATE_COUNT_KEY] = int(clean.get(SURROGATE_COUNT_KEY) or 0) + n
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(clean, **kwargs)


def write_json(path: str | os.PathLike, value: Any, **dumps_kwargs: Any) -> Path:
    """Write ``value`` as JSON (:func:`dumps`: UTF-8, lone surrogates replaced) with the atomic writer."""
    text = dumps(value, **dumps_kwargs)
    return atomic.write_text(path, text)


def read_json(path: str | os.PathLike, what: str = "file") -> Any:
    """The parsed JSON of ``path``; ``UserError`` naming the file when it is missing or malformed."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: malformed JSON ({exc})") from None


class Records(list):
    """The records of one JSONL file (a list) and how many torn last lines were skipped (0 or 1)."""

    def __init__(self, path: Path, records: list[dict[str, Any]], skipped: int = 0, lines: list[int] | None = None):
        super().__init__(records)
        self.path = path
        self.skipped = skipped
        #: the line number of each record in its file (for errors naming file:line)
        self.lines = list(lines) if lines is not None else list(range(1, len(records) + 1))


class TornLines(dict):
    """file -> torn last lines (0 or 1) of the JSONL files a command read (:func:`torn_last_lines`)."""

    @property
    def count(self) -> int:
        return sum(self.values())

    def describe(self) -> str:
        """``"2 torn last lines skipped (a run killed mid-write): a.jsonl, b.jsonl"``; "" when none."""
        if not self:
            return ""
        n = self.count
        return f"{n} torn last line{'s' if n != 1 else ''} skipped (a run killed mid-write): {', '.join(map(str, sorted(self)))}"


def read_jsonl(path: str | os.PathLike, *, missing_ok: bool = False) -> Records:
    """The records (JSON objects, one per line) of a JSONL file: the one JSONL reader.

    Blank lines are ignored. A last line that is not a JSON object (the write a kill interrupted) is
    skipped, logged and counted (``Records.skipped``; :func:`torn_last_lines` tallies a command's files); any
    earlier such line raises a one-line ``UserError`` naming file and line. A missing file is an error,
    or no records with ``missing_ok``.
    """
    path = Path(path)
    try:
        fh = open(path, "rb")  # decoded line by line: a line of raw non-UTF-8 bytes is one bad line
    except FileNotFoundError:
        if missing_ok:
            return Records(path, [])
        raise UserError(f"cannot read {path}: no such file") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None
    records: list[dict[str, Any]] = []
    numbers: list[int] = []
    bad: tuple[int, str] | None = None  # (line number, why) of a bad line, an error unless it is the last
    with fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if bad is not None:
                raise UserError(f"{path}:{bad[0]}: {bad[1]} (a corrupt line before the last one)")
            record, why = parse_line(line)
            if why is not None:
                bad = (lineno, why)
                continue
            records.append(record)
            numbers.append(lineno)
    if bad is None:
        return Records(path, records, lines=numbers)
    log.warning("%s:%d: skipped a torn last line (%s; a run killed mid-write)", path, bad[0], bad[1])
    return Records(path, records, skipped=1, lines=numbers)


def parse_line(line: bytes | str) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """One JSONL line as ``(record, None)``, or ``(None, why)`` when it is none: not UTF-8, not JSON, nested too
    deep to read, not a JSON object (the reader's rule)."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, f"not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1})"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg})"
    except RecursionError:
        return None, "not a record (JSON nested too deep to read)"
    if not isinstance(record, dict):
        return None, f"not a JSON object ({type(record).__name__})"
    return record, None


def torn_last_lines(paths: Iterable[str | os.PathLike]) -> TornLines:
    """The files among ``paths`` whose last non-blank line :func:`read_jsonl` skips as torn (its own rule,
    :func:`parse_line`), each counted once: what a command that read them reports. Reads each file's tail only."""
    torn = TornLines()
    for path in dict.fromkeys(Path(p) for p in paths):
        line = _last_line(path)
        if line.strip() and parse_line(line)[1] is not None:
            torn[path] = 1
    return torn


def _last_line(path: Path, block: int = 1 << 16) -> bytes:
    """The last non-blank line of ``path`` as bytes (empty when none or unreadable), read backwards from its end."""
    try:
        with open(path, "rb") as fh:
            end = fh.seek(0, os.SEEK_END)
            tail = b""
            while end > 0 and b"\n" not in tail.strip():
                step = min(block, end)
                end -= step
                fh.seek(end)
                tail = fh.read(step) + tail
    except OSError:
        return b""
    return tail.strip().rsplit(b"\n", 1)[-1]
