"""clembench's aggregation: % played, quality score and clemscore (seed 002 Sec. 2).

Seed 002 Sec. 2: "An overall score is computed by averaging this metric [the game's main score,
0-100] by game and then over games. Games where a player violates the parsing rules count as not
played (to end). We track the percentage of games played to end [...] The overall score is the
product of the two scores."

Per game: ``played`` = 100 x share of episodes not aborted; ``quality`` = mean Main Score of the
played episodes (NaN when none was played). Per model over games: the mean ``played`` over the
games, the mean ``quality`` over the games that have one (games without a played episode are left
out), and ``clemscore = played / 100 x quality``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from plumbing.stats import nanmean


def _is_nan(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def game_summary(episodes: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """``played``, ``quality`` and ``clemscore`` of one game from its episodes' ``aborted`` / ``main_score``."""
    rows = list(episodes)
    if not rows:
        return {"played": float("nan"), "quality": float("nan"), "clemscore": float("nan")}
    played = 100.0 * (1.0 - sum(float(r["aborted"]) for r in rows) / len(rows))
    quality = nanmean(r["main_score"] for r in rows if not float(r["aborted"]))
    return {"played": played, "quality": quality, "clemscore": clemscore(played, quality)}


def clemscore(played: float, quality: float) -> float:
    """``played / 100 x quality``; 0 when nothing was played (quality undefined)."""
    if _is_nan(played):
        return float("nan")
    if _is_nan(quality):
        return 0.0 if played == 0 else float("nan")
    return played / 100.0 * quality


def aggregate(per_game: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    """clembench's model-level scores from ``{game: (percent_played, quality)}``.

    Games whose ``percent_played`` is NaN (not run) are left out entirely; games whose quality is
    NaN (no played episode) count in ``played`` but are left out of ``quality``.
    """
    played_values = [float(p) for p, _ in per_game.values() if not _is_nan(p)]
    quality_values = [float(q) for p, q in per_game.values() if not _is_nan(p) and not _is_nan(q)]
    played = sum(played_values) / len(played_values) if played_values else float("nan")
    quality = sum(quality_values) / len(quality_values) if quality_values else float("nan")
    return {"played": played, "quality": quality, "clemscore": clemscore(played, quality)}
