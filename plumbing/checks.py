"""The one check of a number a user gives (a command-line flag, a suite file's value): finite, in range.

``float("nan")``, ``float("inf")`` and ``1e400`` (which Python reads as infinity) pass ``value > 0``-style
checks or fail later with a traceback (``int(nan)``); a 30-digit ``--seed`` overflows the C integer a
random generator takes. :func:`number_problem` says why a value is not acceptable, :func:`check_number` turns
that into a one-line ``UserError`` and :func:`number_arg` into an ``argparse`` type (one line at parse time).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from plumbing.errors import UserError

#: the largest seed accepted: random generators take an unsigned 32-bit seed (numpy: 0 <= seed < 2**32)
MAX_SEED = 2**32 - 1
#: the default seed: play's stimuli, episode order and sampling, and lm-eval's own default (its few-shot and
#: sampling seeds, ``simple_evaluate``'s 1234)
DEFAULT_SEED = 1234

T = TypeVar("T")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _wanted(integer: bool, minimum: float | None, above: float | None, maximum: float | None) -> str:
    """``a number > 0``, ``a number from 0 to 4294967295 (an integer)``: what a check wants, in words."""
    whole = " (an integer)" if integer else ""
    if minimum is not None and maximum is not None:
        return f"a number from {_num(minimum)} to {_num(maximum)}{whole}"
    bounds = [f">= {_num(minimum)}" if minimum is not None else "", f"> {_num(above)}" if above is not None else ""]
    bounds.append(f"<= {_num(maximum)}" if maximum is not None else "")
    return " ".join(["a number", *(b for b in bounds if b)]) + whole


def number_problem(
    value: Any, *, integer: bool = False, minimum: float | None = None, above: float | None = None, maximum: float | None = None
) -> str | None:
    """``"must be a number > 0, got nan"`` when ``value`` is not a number of that kind (a bool, NaN, an
    infinity, out of range, a fraction where an integer is wanted); None when it is."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    ok = ok and (isinstance(value, int) or (math.isfinite(value) and (not integer or value.is_integer())))
    ok = ok and (minimum is None or value >= minimum) and (above is None or value > above)
    ok = ok and (maximum is None or value <= maximum)
    return None if ok else f"must be {_wanted(integer, minimum, above, maximum)}, got {value!r}"


def check_number(value: Any, name: str, **bounds: Any) -> Any:
    """``value`` when :func:`number_problem` finds nothing wrong, else a one-line ``UserError`` naming ``name``."""
    problem = number_problem(value, **bounds)
    if problem is not None:
        raise UserError(f"{name} {problem}")
    return int(value) if bounds.get("integer") else value


def number_arg(*, integer: bool = False, **bounds: Any) -> Callable[[str], int | float]:
    """An ``argparse`` ``type=``: the flag's text read as an integer (``integer``) or a float and checked by
    :func:`number_problem`; a bad value is argparse's one-line error at parse time."""

    def parse(text: str) -> int | float:
        try:
            value: int | float = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {_wanted(integer, *_bounds(bounds))}, got {text!r}") from None
        problem = number_problem(value, integer=integer, **bounds)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
        return value

    return parse


def _bounds(bounds: dict[str, Any]) -> tuple[Any, Any, Any]:
    return bounds.get("minimum"), bounds.get("above"), bounds.get("maximum")


def first_n(items: Sequence[T], count: int | None, name: str, what: str) -> list[T]:
    """The first ``count`` of ``items`` (all when ``count`` is None); ``count`` must be an integer from 1 to
    ``len(items)`` (one line naming ``name`` and ``what`` the items are), never silently fewer or all."""
    if count is None:
        return list(items)
    try:
        check_number(count, name, integer=True, minimum=1, maximum=len(items))
    except UserError as exc:
        raise UserError(f"{exc} ({what}: {len(items)})") from None
    return list(items[: int(count)])
