"""Reading JSON and JSONL files with errors that name the file (and line), and output folders.

:func:`read_jsonl` is the one JSONL reader of the project (episode and sample files of run folders): a torn last line
is skipped and counted, any other corrupt line is a ``UserError`` naming file and line.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from plumbing.errors import UserError

log = logging.getLogger(__name__)


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

    def __init__(self, path: Path, records: list[dict[str, Any]], skipped: int = 0):
        super().__init__(records)
        self.path = path
        self.skipped = skipped


class TornLines(dict):
    """file -> torn last lines skipped by :func:`read_jsonl` inside a :func:`torn_lines` block."""

    @property
    def count(self) -> int:
        return sum(self.values())

    def describe(self) -> str:
        """``"2 torn last lines skipped (a run killed mid-write): a.jsonl, b.jsonl"``; "" when none."""
        if not self:
            return ""
        n = self.count
        return f"{n} torn last line{'s' if n != 1 else ''} skipped (a run killed mid-write): {', '.join(map(str, sorted(self)))}"


_TALLIES: list[TornLines] = []


@contextmanager
def torn_lines() -> Iterator[TornLines]:
    """Collect the torn last lines every :func:`read_jsonl` call skips inside the block (a file read
    twice counts once), so a command can say how many it skipped."""
    tally = TornLines()
    _TALLIES.append(tally)
    try:
        yield tally
    finally:
        _TALLIES.remove(tally)


def read_jsonl(path: str | os.PathLike, *, missing_ok: bool = False) -> Records:
    """The records (JSON objects, one per line) of a JSONL file: the one JSONL reader.

    Blank lines are ignored. A last line that is not a JSON object (the write a kill interrupted) is
    skipped, logged and counted (``Records.skipped``, and in every open :func:`torn_lines` tally); any
    earlier such line raises a one-line ``UserError`` naming file and line. A missing file is an error,
    or no records with ``missing_ok``.
    """
    path = Path(path)
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return Records(path, [])
        raise UserError(f"cannot read {path}: no such file") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None
    records: list[dict[str, Any]] = []
    bad: tuple[int, str] | None = None  # (line number, why) of a bad line, an error unless it is the last
    with fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if bad is not None:
                raise UserError(f"{path}:{bad[0]}: {bad[1]} (a corrupt line before the last one)")
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                bad = (lineno, f"not valid JSON ({exc.msg})")
                continue
            if isinstance(record, dict):
                records.append(record)
            else:
                bad = (lineno, f"not a JSON object ({type(record).__name__})")
    if bad is None:
        return Records(path, records)
    log.warning("%s:%d: skipped a torn last line (%s; a run killed mid-write)", path, bad[0], bad[1])
    for tally in _TALLIES:
        tally[path] = 1
    return Records(path, records, skipped=1)


def ensure_output_dir(value: str | os.PathLike, flag: str) -> Path:
    """Create ``value`` (with parents) and check that files can be written in it; ``UserError`` naming
    ``flag`` otherwise (a path that is a file, a read-only location, ...)."""
    path = Path(value).expanduser()
    probe = path / f".triangulate-write-check-{os.getpid()}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe.touch()
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UserError(f"{flag} {value} is not a writable folder ({reason}); choose another folder") from exc
    return path
