"""What a callable accepts, read from its signature (never from the text of the error a wrong call raises)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` takes keyword argument ``name`` (a parameter of that name, or ``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: assume it does, as a plain call would
        return True
    return any(p.name == name and p.kind != p.POSITIONAL_ONLY or p.kind == p.VAR_KEYWORD for p in params)
