"""The clembench games by task name, and the episodes each task plays (from built datasets)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from datasets_build.clembench import load_clembench
from datasets_build.clembench_names import MULTILINGUAL_LANGUAGES
from multiturn.games.clem.common import PLAYER_A, PLAYER_B, ClemGame
from multiturn.games.clem.imagegame import ImageGame
from multiturn.games.clem.privateshared import PrivateSharedGame
from multiturn.games.clem.referencegame import ReferenceGame, multilingual_patterns
from multiturn.games.clem.taboo import TabooGame
from multiturn.games.clem.wordle import WordleGame
from plumbing.errors import UserError

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
    """The episodes of task ``game`` in a built clembench folder, ready to play: those of ``data_dir`` (the
    ``instances`` task option), which must hold a config for ``game`` (else a one-line error: playing the
    published episodes instead would record a folder that was not used), or without it the published ones
    of the built ``clembench`` dataset."""
    if data_dir is not None:
        check_instances_folder(game, data_dir)
    episodes = load_clembench(game, data_dir)
    return with_patterns(episodes) if game.startswith("referencegame_") else episodes


def check_instances_folder(game: str, data_dir: Path) -> None:
    """``UserError`` unless ``data_dir`` (the ``instances`` task option) holds a config for ``game``."""
    if not (Path(data_dir) / "data" / game).is_dir():
        held = sorted(p.name for p in (Path(data_dir) / "data").iterdir() if p.is_dir()) if (Path(data_dir) / "data").is_dir() else []
        raise UserError(
            f"--task_args instances={data_dir} has no episodes of {game} "
            f"({'it holds: ' + ', '.join(held) if held else 'not a built or generated clembench folder'}); "
            f"generate them with `triangulate data generate --benchmark clembench --game {game} --out DIR`, or play only the games it holds"
        )


GAMES.update({f"referencegame_{lang}": ReferenceGame for lang in MULTILINGUAL_LANGUAGES})
