"""Reading JSON and JSONL files with errors that name the file (and line), output folders, and the one
encoder for every text written to JSON, JSONL and HTML (:func:`dumps`, :func:`write_text`): it survives lone
UTF-16 surrogates (a hostile or broken server's ``"\\ud800"``), replacing each with U+FFFD and counting them."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plumbing.errors import UserError

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


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` as UTF-8 (an HTML page, a CSV) with lone surrogates replaced, through a temporary file and a rename."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(clean_text(text)[0], encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


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


@contextlib.contextmanager
def new_output_dir(value: str | os.PathLike, flag: str) -> Iterator[Path]:
    """:func:`ensure_output_dir` for a command that may fail: a folder it created is removed again (when still
    empty) if the block raises, so a failed ``report``/``view`` leaves no empty ``--out`` behind."""
    path = Path(value).expanduser()
    existed = path.exists()
    ensure_output_dir(path, flag)
    try:
        yield path
    except BaseException:
        if not existed and path.is_dir() and not any(path.iterdir()):
            path.rmdir()
        raise
