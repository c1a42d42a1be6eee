"""The seven clembench v1.6 dialogue games on the multi-turn runner (issue 4; seed 002).

Tasks: ``taboo``, ``wordle``, ``wordle_withclue``, ``wordle_withcritic``, ``referencegame``,
``imagegame``, ``privateshared`` (group ``clembench``) and ``referencegame_<lang>`` for every
language of the multilingual reference game upstream. Per episode: ``main_score`` (NaN when
aborted), ``aborted``, ``lose``, ``success`` and request counts; per task also ``played``,
``quality`` and ``clemscore``. See README.md in this folder.

Episodes come from the built ``clembench`` dataset (``triangulate data build``); the task option
``instances=FOLDER`` (``--task_args instances=./fresh_wordle``) plays the episodes of another built
or generated clembench folder instead.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from datasets_build.clembench_names import CLEMBENCH_GAMES, MULTILINGUAL_LANGUAGES
from multiturn.game import EpisodeSummary, Game, Request, TaskSpec
from multiturn.games.clem.catalog import GAMES, ROLES, candidate_instances, check_instances_folder
from multiturn.games.clem.common import CLEM_GEN_KWARGS, CLEMBENCH_MAX_TOKENS, episode_summary
from multiturn.games.clem.replay import play_game, replay_episode
from multiturn.games.clem.scoring import aggregate, episode_pooled, game_summary
from multiturn.games.clem.wordle_rules import SPEED_VERSIONS
from multiturn.registry import register, register_group
from plumbing.errors import UserError
from plumbing.stats import mean_of_keys

__all__ = [
    "replay_episode",
    "aggregate",
    "episode_pooled",
    "game_summary",
    "play_game",
    "GAMES",
    "ClemTask",
    "CLEMBENCH_GAMES",
    "MULTILINGUAL_LANGUAGES",
    "candidate_instances",
]


class ClemTask(TaskSpec):
    """One clembench game as a runner task over the published v1.6 instances."""

    gen_kwargs = dict(CLEM_GEN_KWARGS)

    def __init__(
        self,
        dataset_config: str,
        game: str,
        roles: tuple[str, ...],
        *,
        instances: str | None = None,
        max_tokens: int = CLEMBENCH_MAX_TOKENS,
    ):
        """``dataset_config``: the clembench dataset's config holding the episodes (e.g. ``referencegame_en``);
        ``game``: the game class in :data:`GAMES`; ``instances`` (task option): a built or generated clembench
        folder whose episodes replace the published ones. ``max_tokens`` (task option): new tokens per reply,
        clembench's own v1.6 default 100 (:data:`~multiturn.games.clem.common.CLEMBENCH_MAX_TOKENS`); seed 003
        ran the games with 250 (:data:`~multiturn.games.clem.common.TRIANGULATING_MAX_TOKENS`,
        ``suites/triangulating.yaml``)."""
        try:
            tokens = int(max_tokens)
        except (TypeError, ValueError):
            raise UserError(f"--task_args max_tokens: a positive whole number, got {max_tokens!r}") from None
        if tokens < 1:
            raise UserError(f"--task_args max_tokens: a positive whole number, got {max_tokens!r}")
        self.gen_kwargs = {**CLEM_GEN_KWARGS, "max_gen_toks": tokens}
        self.dataset_config = dataset_config
        self.game = game
        self.roles = roles
        self.instances_dir = Path(instances).expanduser() if instances else None
        if self.instances_dir is not None:  # at construction: the CLI refuses it before loading any model
            check_instances_folder(dataset_config, self.instances_dir)

    def instances(self, seed: int) -> list[dict[str, Any]]:
        """The published v1.6 instances in clembench's order from the built dataset (fixed stimuli: the seed
        does not change them), or the episodes of the folder given as the ``instances`` task option."""
        return candidate_instances(self.dataset_config, self.instances_dir)

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return GAMES[self.game](instance)

    def aggregate(self, episode_scores: list[dict[str, float]]) -> dict[str, float]:
        """Means of the episode metrics (main score over played episodes) plus played / quality / clemscore, and
        the number of episodes scored (``episodes``: the weight of the game in :func:`scoring.episode_pooled`)."""
        out = mean_of_keys(episode_scores)
        out.update(game_summary(episode_scores))
        out["episodes"] = len(episode_scores)
        return out

    def summary(self, record: Mapping[str, Any]) -> EpisodeSummary:
        return episode_summary(record)

    def chance_reply(self, request: Request, rng: random.Random) -> str | None:
        """The game's own random reply of the right form (its class's ``chance_reply``)."""
        factory = GAMES[self.game]
        return getattr(factory, "func", factory).chance_reply(request, rng)

    def higher_is_better(self) -> dict[str, bool]:
        return {"main_score": True, "played": True, "quality": True, "clemscore": True, "aborted": False, "lose": False, "success": True}


class WordleTask(ClemTask):
    """A Wordle game; task option ``speed`` = ``v1.6`` (default) or ``v1.5`` (:func:`wordle_rules.speed_score`)."""

    def __init__(
        self,
        dataset_config: str,
        game: str,
        roles: tuple[str, ...],
        *,
        instances: str | None = None,
        speed: str = "v1.6",
        max_tokens: int = CLEMBENCH_MAX_TOKENS,
    ):
        super().__init__(dataset_config, game, roles, instances=instances, max_tokens=max_tokens)
        if speed not in SPEED_VERSIONS:
            raise UserError(f"--task_args speed: one of {', '.join(SPEED_VERSIONS)}, got {speed!r}")
        self.speed = speed

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return GAMES[self.game](instance, speed=self.speed)

    def config(self) -> dict[str, Any]:
        cfg = super().config()
        cfg["speed"] = self.speed
        return cfg


def _register() -> None:
    for name in CLEMBENCH_GAMES:
        task = WordleTask if name.startswith("wordle") else ClemTask
        register(name)(partial(task, name, name, ROLES[name]))
    for lang in MULTILINGUAL_LANGUAGES:
        name = f"referencegame_{lang}"
        register(name)(partial(ClemTask, name, "referencegame", ROLES["referencegame"]))
    register_group("clembench", list(CLEMBENCH_GAMES), aggregate=group_scores)


def group_scores(per_task: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The clembench group's ``played``, ``quality`` and ``clemscore`` from its tasks' metrics (:func:`aggregate`,
    seed 002's rule), the episodes in all, and seed 003's code's ``*_episode_pooled`` variant beside them
    (:func:`scoring.episode_pooled`) when every game reports its ``episodes``."""
    nan = float("nan")
    out = aggregate({task: (m.get("played", nan), m.get("quality", nan)) for task, m in per_task.items()})
    if per_task and all("episodes" in m for m in per_task.values()):
        out["episodes"] = sum(int(m["episodes"]) for m in per_task.values())
        out.update(episode_pooled({t: (m.get("played", nan), m.get("quality", nan), int(m["episodes"])) for t, m in per_task.items()}))
    return out


_register()
