"""The one exception type for mistakes a user can fix.

The CLI prints ``UserError`` as one line (``triangulate: error: ...``) and exits non-zero; every
other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """A problem the user can fix (bad flag, missing data, unreadable file); the message says how."""


def did_you_mean(name: str, known: Iterable[str], n: int = 3) -> str:
    """`` (did you mean a, b?)`` with the closest of ``known`` to ``name`` (difflib), or ``""`` when none is close."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=n, cutoff=0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def unknown_names(kind: str, unknown: Iterable[str], known: Iterable[str], listing: str) -> UserError:
    """One line for names that are not ``kind``: each with its closest known names, and the command that lists
    them all (never the whole list: it runs to a thousand characters)."""
    known = list(known)
    parts = [f"{name!r}{did_you_mean(name, known)}" for name in unknown]
    return UserError(f"unknown {kind}: {'; '.join(parts)}; {listing}")
