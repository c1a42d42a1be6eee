"""The clembench games by task name, and the episodes each task plays (from built datasets)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from datasets_build.clembench import load_clembench
from datasets_build.clembench_upstream import MULTILINGUAL_LANGUAGES
from multiturn.games.clem.common import PLAYER_A, PLAYER_B, ClemGame
from multiturn.games.clem.imagegame import ImageGame
from multiturn.games.clem.privateshared import PrivateSharedGame
from multiturn.games.clem.referencegame import ReferenceGame, multilingual_patterns
from multiturn.games.clem.taboo import TabooGame
from multiturn.games.clem.wordle import WordleGame

GameFactory = Callable[..., ClemGame]

GAMES: dict[str, GameFactory] = {
    "taboo": TabooGame,
    "wordle": partial(WordleGame, game_name="wordle"),
    "wordle_withclue": partial(WordleGame, game_name="wordle_withclue"),
    "wordle_withcritic": partial(WordleGame, game_name="wordle_withcritic"),
    "referencegame": ReferenceGame,
    "imagegame": ImageGame,
    "privateshared": PrivateSharedGame,
}

ROLES: dict[str, tuple[str, ...]] = {
    "taboo": (PLAYER_A, PLAYER_B),
    "wordle": (PLAYER_A,),
    "wordle_withclue": (PLAYER_A,),
    "wordle_withcritic": (PLAYER_A, PLAYER_B),
    "referencegame": (PLAYER_A, PLAYER_B),
    "imagegame": (PLAYER_A, PLAYER_B),
    "privateshared": (PLAYER_A,),
}


def with_patterns(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Multilingual reference-game episodes with response patterns built from their prompts
    (upstream's multilingual instances carry none; the labels are those of all episodes of the language)."""
    labels = sorted({label for ep in episodes for label in ep["target_grid_name"]})
    return [{**ep, **multilingual_patterns(ep, labels)} for ep in episodes]


def candidate_instances(game: str, data_dir: Path | None = None) -> list[dict[str, Any]]:
    """The episodes of task ``game`` in a built clembench folder, ready to play: those of ``data_dir`` when it
    holds a config for ``game``, else the published ones of the built ``clembench`` dataset."""
    has_config = data_dir is not None and (Path(data_dir) / "data" / game).is_dir()
    episodes = load_clembench(game, data_dir if has_config else None)
    return with_patterns(episodes) if game.startswith("referencegame_") else episodes


GAMES.update({f"referencegame_{lang}": ReferenceGame for lang in MULTILINGUAL_LANGUAGES})
