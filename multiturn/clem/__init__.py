"""The seven clembench v1.6 dialogue games on the multi-turn runner (issue 4; seed 002).

Tasks: ``taboo``, ``wordle``, ``wordle_withclue``, ``wordle_withcritic``, ``referencegame``,
``imagegame``, ``privateshared`` (group ``clembench``) and ``referencegame_<lang>`` for every
language of the multilingual reference game upstream. Per episode: ``main_score`` (NaN when
aborted), ``aborted``, ``lose``, ``success`` and request counts; per task also ``played``,
``quality`` and ``clemscore``. See README.md in this folder.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping

from multiturn.clem.common import CLEM_GEN_KWARGS, PLAYER_A, PLAYER_B, ClemGame
from multiturn.clem.imagegame import ImageGame
from multiturn.clem.instances import (load_instances, load_multilingual_instances)
from multiturn.clem.privateshared import PrivateSharedGame
from multiturn.clem.referencegame import ReferenceGame, multilingual_patterns
from multiturn.clem.replay import play_game, replay_episode
from multiturn.clem.scoring import aggregate, game_summary
from multiturn.clem.taboo import TabooGame
from multiturn.clem.wordle import WordleGame
from multiturn.game import Game, TaskSpec
from plumbing.stats import mean_of_keys
from multiturn.registry import register, register_group

__all__ = ["replay_episode", "aggregate", "game_summary", "play_game", "GAMES", "ClemTask", "CLEMBENCH_GAMES"]

GameFactory = Callable[..., ClemGame]

#: a built or generated ``clembench`` dataset folder whose episodes replace the published ones
INSTANCES_ENV = "TRIANGULATE_CLEM_INSTANCES"

GAMES: dict[str, GameFactory] = {
    "taboo": TabooGame,
    "wordle": partial(WordleGame, game_name="wordle"),
    "wordle_withclue": partial(WordleGame, game_name="wordle_withclue"),
    "wordle_withcritic": partial(WordleGame, game_name="wordle_withcritic"),
    "referencegame": ReferenceGame,
    "imagegame": ImageGame,
    "privateshared": PrivateSharedGame,
}

#: the seven games of clembench v1.6 in the order of its results table
CLEMBENCH_GAMES: tuple[str, ...] = ("imagegame", "privateshared", "referencegame", "taboo", "wordle",
                                    "wordle_withclue", "wordle_withcritic")

ROLES: dict[str, tuple[str, ...]] = {
    "taboo": (PLAYER_A, PLAYER_B),
    "wordle": (PLAYER_A,),
    "wordle_withclue": (PLAYER_A,),
    "wordle_withcritic": (PLAYER_A, PLAYER_B),
    "referencegame": (PLAYER_A, PLAYER_B),
    "imagegame": (PLAYER_A, PLAYER_B),
    "privateshared": (PLAYER_A,),
}

#: languages of the multilingual reference game in upstream clembench (branch multilingual_reference,
#: instances_v1.5_<lang>.json); tests check this list against the upstream folder
MULTILINGUAL_LANGUAGES: tuple[str, ...] = ("de", "en", "it", "ja", "pt", "te", "tk", "tr", "zh")


def multilingual_instances(lang: str) -> list[dict[str, Any]]:
    """Multilingual reference-game episodes with response patterns built from their prompts."""
    episodes = load_multilingual_instances(lang)
    labels = sorted({label for ep in episodes for label in ep["target_grid_name"]})
    return [{**ep, **multilingual_patterns(ep, labels), "lang": lang} for ep in episodes]


def candidate_instances(game: str) -> list[dict[str, Any]]:
    if game.startswith("referencegame_"):
        return multilingual_instances(game.split("_", 1)[1])
    return load_instances(game)


class ClemTask(TaskSpec):
    """One clembench game as a runner task over the published v1.6 instances."""

    gen_kwargs = dict(CLEM_GEN_KWARGS)

    def __init__(self, name: str, game: str, roles: tuple[str, ...], loader: Callable[[], list[dict[str, Any]]]):
        self.name = name
        self.game = game
        self.roles = roles
        self._loader = loader

    def instances(self, seed: int) -> list[dict[str, Any]]:
        """The published v1.6 instances in clembench's order (fixed stimuli: the seed does not change them),
        or the episodes of a built / generated ``clembench`` folder named by ``$TRIANGULATE_CLEM_INSTANCES``
        when it has a config for this task."""
        folder = os.environ.get(INSTANCES_ENV)
        if folder and (Path(folder) / "data" / self.name).is_dir():
            from datasets_build.clembench import load_clembench

            return load_clembench(self.name, Path(folder))
        return self._loader()

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return GAMES[self.game](instance)

    def aggregate(self, episode_scores: list[dict[str, float]]) -> dict[str, float]:
        """Means of the episode metrics (main score over played episodes) plus played / quality / clemscore."""
        out = mean_of_keys(episode_scores)
        out.update(game_summary(episode_scores))
        return out

    def higher_is_better(self) -> dict[str, bool]:
        return {"main_score": True, "played": True, "quality": True, "clemscore": True, "aborted": False,
                "lose": False, "success": True}


def _register() -> None:
    for name in CLEMBENCH_GAMES:
        register(name)(partial(ClemTask, name, name, ROLES[name], partial(load_instances, name)))
    for lang in MULTILINGUAL_LANGUAGES:
        name = f"referencegame_{lang}"
        register(name)(partial(ClemTask, name, "referencegame", ROLES["referencegame"], partial(multilingual_instances, lang)))
    register_group("clembench", list(CLEMBENCH_GAMES), aggregate=group_scores)


def group_scores(per_task: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The clembench group's ``played``, ``quality`` and ``clemscore`` from its tasks' metrics (:func:`aggregate`)."""
    nan = float("nan")
    return aggregate({task: (m.get("played", nan), m.get("quality", nan)) for task, m in per_task.items()})


GAMES.update({f"referencegame_{lang}": ReferenceGame for lang in MULTILINGUAL_LANGUAGES})
_register()
