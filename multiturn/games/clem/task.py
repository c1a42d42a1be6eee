"""``ClemTask``: a clembench game as a runner task, the ``clembench`` group and its aggregate.

A clembench game module (``taboo.py``, ``wordle.py``, ...) follows the one recipe of ``multiturn/games/README.md``:
its :class:`~multiturn.games.clem.common.ClemGame` subclass (the game master) and a ``ClemTask`` subclass
registered with ``@register("<game>")`` that names the game class (``game``) and declares the task's facts on the
class: ``roles``, ``groups = ("clembench",)`` (the benchmark's group), ``cost`` (:class:`~multiturn.game.CostHints`).
The catalogue (:func:`games`), the group's members and the suite's cost model read them from the registry.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from multiturn.game import DRY_RUN_COUNT, CostHints, EpisodeSummary, Game, Request, TaskSpec
from multiturn.games.clem.catalog import candidate_instances, check_instances_folder
from multiturn.games.clem.common import CLEM_GEN_KWARGS, CLEMBENCH_MAX_TOKENS, TRIANGULATING_MAX_TOKENS, ClemGame, episode_summary
from multiturn.games.clem.scoring import aggregate, episode_pooled, game_summary
from multiturn.registry import register_group, task_facts, task_names
from plumbing.errors import UserError
from plumbing.stats import mean_of_keys

#: the group of clembench v1.6's seven games (seed 002): a task joins it with ``groups = (CLEMBENCH,)``
CLEMBENCH = "clembench"
#: a clembench reply, for the cost model: one clue, guess or grid line (assumed), at most the suite's max_tokens
REPLY_TOKENS = 30


def clem_cost(episodes: int, turns: int, prompt_tokens: int) -> CostHints:
    """A clembench game's cost hints: its episodes, and its turns and prompt tokens as a dry run counted them;
    replies of :data:`REPLY_TOKENS` expected, at most :data:`~multiturn.games.clem.common.TRIANGULATING_MAX_TOKENS`."""
    reply = (
        f"expected reply {REPLY_TOKENS} tokens (assumed: one clue, guess or grid line), "
        f"at most max_tokens {TRIANGULATING_MAX_TOKENS} (the suite's task_args)"
    )
    return CostHints(episodes, turns, prompt_tokens, REPLY_TOKENS, TRIANGULATING_MAX_TOKENS, f"{DRY_RUN_COUNT}; {reply}")


class ClemTask(TaskSpec):
    """One clembench game as a runner task over the published v1.6 instances."""

    #: the game master that plays each episode (a subclass states its own)
    game: ClassVar[type[ClemGame]]
    gen_kwargs = dict(CLEM_GEN_KWARGS)

    def __init__(self, dataset_config: str | None = None, *, instances: str | None = None, max_tokens: int = CLEMBENCH_MAX_TOKENS):
        """``dataset_config``: the clembench dataset's config holding the episodes (default: the game's name; e.g.
        ``referencegame_en``); ``instances`` (task option): a built or generated clembench folder whose episodes
        replace the published ones. ``max_tokens`` (task option): new tokens per reply, clembench's own v1.6
        default 100 (:data:`~multiturn.games.clem.common.CLEMBENCH_MAX_TOKENS`); seed 003 ran the games with 250
        (:data:`~multiturn.games.clem.common.TRIANGULATING_MAX_TOKENS`, ``suites/triangulating.yaml``)."""
        try:
            tokens = int(max_tokens)
        except (TypeError, ValueError):
            raise UserError(f"--task_args max_tokens: a positive whole number, got {max_tokens!r}") from None
        if tokens < 1:
            raise UserError(f"--task_args max_tokens: a positive whole number, got {max_tokens!r}")
        self.gen_kwargs = {**CLEM_GEN_KWARGS, "max_gen_toks": tokens}
        self.dataset_config = dataset_config or self.game.game_name
        self.instances_dir = Path(instances).expanduser() if instances else None
        if self.instances_dir is not None:  # at construction: the CLI refuses it before loading any model
            check_instances_folder(self.dataset_config, self.instances_dir)

    def instances(self, seed: int) -> list[dict[str, Any]]:
        """The published v1.6 instances in clembench's order from the built dataset (fixed stimuli: the seed
        does not change them), or the episodes of the folder given as the ``instances`` task option."""
        return candidate_instances(self.dataset_config, self.instances_dir)

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return self.game(instance)

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
        return self.game.chance_reply(request, rng)

    def higher_is_better(self) -> dict[str, bool]:
        return {"main_score": True, "played": True, "quality": True, "clemscore": True, "aborted": False, "lose": False, "success": True}


def games() -> dict[str, type[ClemGame]]:
    """The catalogue: every registered clembench task's game class by task name (read from the classes: builds no
    task, loads no data)."""
    out = {}
    for name in task_names():
        cls = task_facts(name).task_class
        if cls is not None and issubclass(cls, ClemTask):
            out[name] = cls.game
    return out


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


register_group(CLEMBENCH, [], aggregate=group_scores)
