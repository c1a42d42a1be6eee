"""The known range of each main metric, one table for every part of the report that puts scores on a scale.

Any metric not listed is a fraction in [0, 1] (accuracy, F1, exact match, ...). ``None``: unbounded (d',
counts), shown as it is and never normalised.
"""

from __future__ import annotations

#: clembench's scores are 0-100 (seed 002 Sec. 2), as are EQ-Bench's and SPLAT's O/A (seed 004 eq. 5);
#: Connections' clustering scores are 0-4 and 0-10 (seed 001 eq. 1-2).
METRIC_RANGES: dict[str, tuple[float, float] | None] = {
    "clemscore": (0.0, 100.0),
    "quality": (0.0, 100.0),
    "played": (0.0, 100.0),
    "main_score": (0.0, 100.0),
    "eqbench": (0.0, 100.0),
    "overall": (0.0, 100.0),
    "unweighted_clustering": (0.0, 4.0),
    "weighted_clustering": (0.0, 10.0),
    "dprime": None,
    "dprime_valid": None,
    "abs_dprime_notebook": None,
    "rounds": None,
    "perseverative_errors": None,
}

FRACTION = (0.0, 1.0)


def metric_range(metric: str) -> tuple[float, float] | None:
    """(low, high) of ``metric`` (a metric name, ``"acc,none"`` or ``"clemscore+..."`` forms accepted);
    None when unbounded. An unlisted metric is a fraction in [0, 1]."""
    name = metric.split("+")[0].split(",")[0]
    return METRIC_RANGES.get(name, FRACTION)
