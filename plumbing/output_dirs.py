"""Output folders of the commands (``--output_path``, ``--out``): created, checked writable, and removed again
when a command that created one fails before writing anything."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from plumbing.errors import UserError


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


@contextmanager
def new_output_dir(value: str | os.PathLike, flag: str) -> Iterator[Path]:
    """:func:`ensure_output_dir` for a command that may fail: a folder it created is removed again, with the
    partial output in it, if the block raises, so a failed ``report``/``view``/``export`` leaves no empty or
    half-written ``--out`` behind (a folder that existed before is left as it is)."""
    path = Path(value).expanduser()
    existed = path.exists()
    ensure_output_dir(path, flag)
    try:
        yield path
    except BaseException:
        if not existed and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        raise


def remove_if_empty(folder: Path) -> None:
    """Remove ``folder`` when it is empty (a failed run leaves no empty output folder behind); else nothing."""
    try:
        Path(folder).rmdir()  # only an empty folder
    except OSError:
        pass
