"""One writer per run folder and task: an OS file lock beside the file it guards.

``RunLock(path)`` takes ``fcntl.flock`` on ``<path>.lock`` and writes its PID into it; the OS drops the lock
when the process ends in any way (kill -9 included), so a lock is never stale. A second process gets a one-line
:class:`~plumbing.errors.UserError` naming the holder's PID, or waits for it with ``wait=True``
(``--wait_lock``). The holder removes the lock file on release, while it still holds the lock, so a run folder
keeps no ``*.lock`` files; a process that locked the file just removed holds a lock on nothing, sees that the
path no longer names its file (another inode, or none) and locks the new one instead (the usual
unlink-while-locked protocol; only a holder killed with -9 leaves its file, for the next holder to remove).
"""

from __future__ import annotations

import fcntl
import os
from contextlib import ExitStack
from pathlib import Path

from plumbing.errors import UserError


class RunLock:
    """An exclusive lock on ``<path>.lock`` for as long as the ``with`` block (or until :meth:`release`)."""

    def __init__(self, path: str | os.PathLike, *, wait: bool = False, what: str | None = None):
        self.target = Path(path)
        self.path = self.target.with_name(self.target.name + ".lock")
        self.wait = wait
        self.what = what or str(self.target)
        self._fh = None

    def acquire(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fh = open(self.path, "a+", encoding="utf-8")
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | (0 if self.wait else fcntl.LOCK_NB))
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip() or "?"
                fh.close()
                raise UserError(
                    f"{self.what} is being written by another process (PID {holder}, lock {self.path}); "
                    "wait for it to finish, pass --wait_lock to wait, or use another --output_path"
                ) from None
            if self._names_file(fh):
                break
            fh.close()  # the holder before us removed this file while we waited: lock the path's new file
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh
        return self

    def _names_file(self, fh) -> bool:
        """Whether the lock path still names the open file ``fh`` (not removed or replaced meanwhile)."""
        try:
            return os.stat(self.path).st_ino == os.fstat(fh.fileno()).st_ino
        except FileNotFoundError:
            return False

    def release(self) -> None:
        if self._fh is not None:
            self.path.unlink(missing_ok=True)  # while still locked: see the module docstring
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def lock_all(paths: list[Path], *, wait: bool = False) -> ExitStack:
    """Locks on every path (in sorted order, so two processes never deadlock); release them all by closing the stack."""
    stack = ExitStack()
    try:
        for path in sorted(set(paths)):
            stack.enter_context(RunLock(path, wait=wait))
    except BaseException:
        stack.close()
        raise
    return stack
