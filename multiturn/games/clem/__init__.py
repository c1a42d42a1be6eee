"""The seven clembench v1.6 dialogue games on the multi-turn runner (issue 4; seed 002).

Tasks: ``taboo``, ``wordle``, ``wordle_withclue``, ``wordle_withcritic``, ``referencegame``,
``imagegame``, ``privateshared`` (group ``clembench``) and ``referencegame_<lang>`` for every
language of the multilingual reference game upstream. Per episode: ``main_score`` (NaN when
aborted), ``aborted``, ``lose``, ``success`` and request counts; per task also ``played``,
``quality`` and ``clemscore``. Each game module registers its own task (a :class:`~multiturn.games.clem.task.ClemTask`
subclass with its facts on the class); ``GAMES`` and ``CLEMBENCH_GAMES`` are read from the registry. See README.md in
this folder.

Episodes come from the built ``clembench`` dataset (``triangulate data build``); the task option
``instances=FOLDER`` (``--task_args instances=./fresh_wordle``) plays the episodes of another built
or generated clembench folder instead.
"""

from __future__ import annotations

from typing import Any

from datasets_build.clembench_names import MULTILINGUAL_LANGUAGES
from multiturn.games.clem.catalog import candidate_instances
from multiturn.games.clem.replay import play_game, replay_episode
from multiturn.games.clem.scoring import aggregate, episode_pooled, game_summary
from multiturn.games.clem.task import CLEMBENCH, ClemTask, games, group_scores
from multiturn.registry import group_names

__all__ = [
    "replay_episode",
    "aggregate",
    "episode_pooled",
    "game_summary",
    "group_scores",
    "play_game",
    "GAMES",
    "ClemTask",
    "CLEMBENCH_GAMES",
    "MULTILINGUAL_LANGUAGES",
    "candidate_instances",
    "games",
]


def __getattr__(name: str) -> Any:
    """``GAMES`` (the catalogue, :func:`games`) and ``CLEMBENCH_GAMES`` (the ``clembench`` group's members), read
    from the registry when asked for: the game modules register themselves, so neither is a list kept here."""
    if name == "GAMES":
        return games()
    if name == "CLEMBENCH_GAMES":
        return tuple(group_names()[CLEMBENCH])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
