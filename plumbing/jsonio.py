"""Reading JSON and JSONL files with errors that name the file (and line), and output folders."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plumbing.errors import UserError


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


def iter_jsonl(path: str | os.PathLike, skip_bad_last_line: bool = False) -> Iterator[dict[str, Any]]:
    """The object records of a JSONL file (blank lines and non-object values skipped).

    A corrupt line raises a ``UserError`` naming file and line; with ``skip_bad_last_line`` a truncated
    last line (a run killed mid-write) is skipped instead.
    """
    path = Path(path)
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        lines = fh.readlines() if skip_bad_last_line else fh
        last = len(lines) if skip_bad_last_line else -1
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                if lineno == last:
                    return
                raise UserError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if isinstance(record, dict):
                yield record


def read_jsonl(path: str | os.PathLike, skip_bad_last_line: bool = False) -> list[dict[str, Any]]:
    """:func:`iter_jsonl` as a list."""
    return list(iter_jsonl(path, skip_bad_last_line=skip_bad_last_line))


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
