"""Output folders named on the command line: created up front, or one clear error before any work."""

from __future__ import annotations

import os
from pathlib import Path

from triangulation.errors import UserError


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
