"""Output folders of the commands (``--output_path``, ``--out``): created, checked writable, and removed again
when a command that created one fails before writing anything."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from plumbing import atomic
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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale_builds(final: Path) -> list[Path]:
    """Delete the ``.<name>.building-<pid>-*`` / ``.<name>.old-<pid>-*`` siblings of ``final`` that a killed build
    left (their process is gone; a live concurrent build's folder is kept). Returns the folders removed."""
    removed = []
    for path in Path(final).parent.glob(f".{Path(final).name}.*-*"):
        kind, _, rest = path.name[len(Path(final).name) + 2 :].partition("-")
        pid = rest.split("-", 1)[0]
        if kind in ("building", "old") and pid.isdigit() and not _pid_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


#: the file that marks a folder triangulate wrote whole (a built dataset, a report): only such a folder, an empty
#: one or none is replaced by :func:`replacing_dir`
OWNER_MARKER = ".triangulate-folder"


def is_replaceable(path: Path, legacy: Callable[[Path], bool] | None = None) -> bool:
    """``path`` may be replaced whole: it does not exist, is an empty folder, or a folder triangulate wrote
    (:data:`OWNER_MARKER`, or ``legacy(path)``: what such a folder held before the marker existed)."""
    if not path.exists() and not path.is_symlink():
        return True
    if path.is_symlink() or not path.is_dir():
        return False
    if (path / OWNER_MARKER).is_file() or (legacy is not None and legacy(path)):
        return True
    return not any(path.iterdir())


def check_replaceable(value: str | os.PathLike, flag: str, what: str, legacy: Callable[[Path], bool] | None = None) -> Path:
    """``value`` as an absolute path that :func:`replacing_dir` may replace; ``UserError`` naming ``flag`` for a file,
    a device, a link or a folder holding anything triangulate did not write there (nothing of the user's is removed)."""
    path = Path(os.path.abspath(Path(value).expanduser()))  # "." and "a/.." by their real names
    if is_replaceable(path, legacy):
        return path
    kind = "is not a folder" if path.exists() and not path.is_dir() else "holds files that triangulate did not write"
    if path.is_symlink():
        kind = "is a symbolic link"
    raise UserError(f"{flag} {value} {kind}; a {what} replaces its folder whole: choose a new or empty folder")


@contextmanager
def replacing_dir(value: str | os.PathLike, flag: str, what: str, legacy: Callable[[Path], bool] | None = None) -> Iterator[Path]:
    """Yield a fresh temporary sibling of ``value``; when the block ends it is marked (:data:`OWNER_MARKER`) and swapped
    in for ``value`` (the previous folder moved aside first and removed last), so nothing of an earlier output stays
    beside the new one and a kill leaves the old or the new folder, never a mix. An exception removes the temporary
    folder and leaves ``value`` untouched. ``value`` must be replaceable (:func:`check_replaceable`)."""
    final = check_replaceable(value, flag, what, legacy)
    if final.parent.is_dir():
        remove_stale_builds(final)  # what a killed run left beside it
    token = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = final.parent / f".{final.name}.building-{token}"
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UserError(f"{flag} {value} cannot be written ({reason}); choose another folder") from exc
    try:
        yield tmp
        atomic.write_text(tmp / OWNER_MARKER, f"written by triangulate: {what}\n")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = final.parent / f".{final.name}.old-{token}"
    if not is_replaceable(final, legacy):  # something of the user's arrived while the block ran: keep it
        shutil.rmtree(tmp, ignore_errors=True)
        check_replaceable(final, flag, what, legacy)
    atomic.swap_dir(tmp, final, old)
