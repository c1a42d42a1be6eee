"""The one atomic file writer: every file a command writes whole (results JSON, run settings, suite markers,
job status, rewritten lm-eval files, HTML pages, CSV tables) goes through :func:`write_text` or :func:`write_lines`
(a set of files at once through :func:`write_files`)
(JSON through :func:`plumbing.jsonio.write_json`, which encodes and calls them), and every log that grows a line at a
time through :class:`LineAppender`. Text is written as UTF-8 with each lone UTF-16 surrogate (a hostile or broken
server's ``"\\ud800"``, valid in a Python ``str``, not encodable) replaced by U+FFFD (:data:`REPLACE_SURROGATES`, the
default ``errors``), so no write fails on one.

A whole-file write goes to a hidden temporary file beside the target (``.<name>.<pid>.tmp``, so two processes
never share one), is flushed and fsynced, then renamed over the target (``os.replace``, atomic on POSIX): a
reader sees the old file or the new one, never half of one, and a failed write leaves no temporary file.
An appended line is written and flushed at once, so a kill loses at most the line being written (the JSONL
reader, :func:`plumbing.jsonio.read_jsonl`, skips and counts such a torn last line).

Bytes go through :func:`write_bytes`; a streamed download or unpacking writes ``<target>.part``
(:func:`part_path`) and :func:`promote` fsyncs and renames it over the target; a folder built beside its target
replaces it through :func:`swap_dir` (the old one moved aside, the new one renamed in, the old one removed; a
failure puts the old one back).
"""

from __future__ import annotations

import codecs
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

#: the ``errors`` handler that encodes each lone surrogate as U+FFFD (what :func:`plumbing.jsonio.clean_text` does to
#: a string), the writers' default
REPLACE_SURROGATES = "plumbing.replace_surrogates"


def _replace_surrogates(error: UnicodeError) -> tuple[bytes, int]:
    """U+FFFD for each lone surrogate, as UTF-8 bytes (the UTF-8 encoder takes only ASCII text back from a handler)."""
    if isinstance(error, UnicodeEncodeError) and all(0xD800 <= ord(c) <= 0xDFFF for c in error.object[error.start : error.end]):
        return "\ufffd".encode() * (error.end - error.start), error.end
    raise error


codecs.register_error(REPLACE_SURROGATES, _replace_surrogates)


def write_text(path: str | os.PathLike, text: str, *, errors: str = REPLACE_SURROGATES) -> Path:
    """Replace ``path`` with ``text`` (UTF-8; lone surrogates as U+FFFD, or ``errors`` as in ``str.encode``, e.g.
    ``"surrogateescape"`` to write back bytes read that way) atomically; parent folders are created. Returns the path."""
    return write_lines(path, [text], errors=errors)


def write_lines(path: str | os.PathLike, chunks: Iterable[str], *, errors: str = REPLACE_SURROGATES) -> Path:
    """Replace ``path`` with the concatenation of ``chunks`` (e.g. JSONL lines, each ending in a newline) atomically,
    without building the whole text in memory."""
    return _replace(path, (chunk.encode("utf-8", errors) for chunk in chunks))


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Replace ``path`` with ``data`` atomically (as :func:`write_lines`); parent folders are created."""
    return _replace(path, [data])


def _replace(path: str | os.PathLike, chunks: Iterable[bytes]) -> Path:
    """Write ``chunks`` to a temporary sibling, flush it to disk and rename it over ``path`` (parents created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_files(files: Iterable[tuple[str | os.PathLike, str | bytes]]) -> list[Path]:
    """Replace each ``(path, content)`` of ``files`` atomically, one after another (text as :func:`write_text` writes
    it, bytes as :func:`write_bytes`): a command's whole set of outputs written by one call, each file's content made
    only as it is written when ``files`` is a generator. Returns the paths."""
    return [write_bytes(path, content) if isinstance(content, bytes) else write_text(path, content) for path, content in files]


def part_path(target: str | os.PathLike) -> Path:
    """Where a streamed write of ``target`` goes until :func:`promote` (``<name>.part``, kept to resume)."""
    target = Path(target)
    return target.with_name(target.name + ".part")


def promote(part: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Rename the finished ``part`` over ``target`` after syncing it to disk. Returns ``target``."""
    with open(part, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(part, target)
    return Path(target)


def swap_dir(new: str | os.PathLike, final: str | os.PathLike, old: str | os.PathLike) -> Path:
    """Put the finished folder ``new`` in place of ``final``: the previous ``final`` (if any) is renamed to ``old``
    first and deleted after ``new`` is in place; if the rename of ``new`` fails, ``old`` is put back and ``new``
    removed. Returns ``final``."""
    new, final, old = Path(new), Path(final), Path(old)
    if final.exists():
        final.rename(old)
    try:
        new.rename(final)
    except BaseException:
        if old.exists() and not final.exists():
            old.rename(final)
        shutil.rmtree(new, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)
    return final


class LineAppender:
    """Appends one line at a time to ``path`` (created with its folders) and flushes each at once."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("a", encoding="utf-8")

    def write(self, line: str) -> None:
        """Append ``line`` and a newline, flushed."""
        self._fh.write(line + "\n")
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> LineAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
