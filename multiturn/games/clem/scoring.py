"""clembench's aggregation: % played, quality score and clemscore (seed 002 Sec. 2).

Seed 002 Sec. 2: "An overall score is computed by averaging this metric [the game's main score,
0-100] by game and then over games. Games where a player violates the parsing rules count as not
played (to end). We track the percentage of games played to end [...] The overall score is the
product of the two scores."

Per game: ``played`` = 100 x share of episodes not aborted; ``quality`` = mean Main Score of the
played episodes (NaN when none was played). Per model over games: the mean ``played`` over the
games, the mean ``quality`` over the games that have one (games without a played episode are left
out), and ``clemscore = played / 100 x quality``.

:func:`episode_pooled` is **not** that rule: it is what seed 003's code computed for its Interactive score
(see its docstring); kept beside the clemscore under its own name, never in its place.
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


def episode_pooled(per_game: Mapping[str, tuple[float, float, int]]) -> dict[str, float]:
    """Seed 003's code's Interactive score: one % played and one quality pooled over every episode of every game.

    Seed 003 (Triangulating) Sec. 3.1 names clembench's games as its Interactive assessment and App. E.2.1
    its "clemscore"; the paper's rule is seed 002's (:func:`aggregate`: "averaging ... by game and then over
    games"). The authors' code (momentino/playpen_eval ``utils/utils.py`` ``clembench_report(model_name,
    game_name)`` at bf980808) is called with the task registry's name ``clembench`` and keeps every
    ``scores.json`` below ``results/clembench/<model>`` with a parent folder of that name, i.e. every episode
    of every game: ``played = len(scores) / num_episodes`` (episodes whose "Main Score" is not NaN),
    ``score = sum(scores) / len(scores)``, ``clemscore = score * (played / 100)`` (0-1; here x 100 so it sits
    on the clemscore's 0-100 scale). A game with more episodes weighs more (v1.6: the reference game has 180
    of 420).

    ``per_game``: ``{game: (percent_played, quality, episodes)}``; played episodes per game are
    ``percent_played / 100 x episodes`` (a published table's rounded % played gives them to the nearest
    episode). Games with NaN ``percent_played`` are left out. Returns ``played_episode_pooled``,
    ``quality_episode_pooled`` and ``clemscore_episode_pooled`` (0 when nothing was played, as the code)."""
    kept = [(float(p), q, int(n)) for p, q, n in per_game.values() if not _is_nan(p) and int(n) > 0]
    episodes = sum(n for _, _, n in kept)
    if not episodes:
        nan = float("nan")
        return {"played_episode_pooled": nan, "quality_episode_pooled": nan, "clemscore_episode_pooled": nan}
    played = [(round(p / 100.0 * n), q) for p, q, n in kept]
    n_played = sum(k for k, _ in played)
    quality = sum(k * float(q) for k, q in played if k) / n_played if n_played else float("nan")
    share = n_played / episodes
    return {
        "played_episode_pooled": 100.0 * share,
        "quality_episode_pooled": quality,
        "clemscore_episode_pooled": 0.0 if not n_played else quality * share,
    }
