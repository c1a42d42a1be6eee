"""``taboo_fresh``: clembench Taboo on its matched fresh twin (issues 33, 42).

It plays the published game's rules and scoring on the episodes of the fresh twin
(:mod:`datasets_build.matched_clembench`: one new target word per published episode, matched on Zipf frequency
and part of speech): the lab's private twin when one was written, else the seed-0 twin generated on first use
(:func:`datasets_build.matched.fresh_folder`). The task option ``instances=FOLDER`` plays another twin
(``triangulate data generate --matched taboo --seed 3 --out FOLDER``). The report's "Published vs fresh" section
compares a model's ``taboo`` and ``taboo_fresh`` results. Wordle has no twin
(:data:`datasets_build.matched.NOT_TWINNED`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from datasets_build.fresh_names import twin
from multiturn.games.clem.catalog import candidate_instances, check_instances_folder
from multiturn.games.clem.common import PLAYER_A, PLAYER_B, ClemGame
from multiturn.games.clem.taboo import TabooGame
from multiturn.games.clem.task import ClemTask
from multiturn.registry import register


class _Fresh:
    """Mixin: episodes from the fresh twin folder of the game ``game`` plays."""

    game: ClassVar[type[ClemGame]]
    fresh_dir: Path | None

    def _set_folder(self, instances: str | None) -> None:
        self.fresh_dir = Path(instances).expanduser() if instances else None
        if self.fresh_dir is not None:
            check_instances_folder(self.game.game_name, self.fresh_dir)

    def instances(self, seed: int) -> list[dict[str, Any]]:
        """The fresh twin's episodes (fixed stimuli: the seed does not change them)."""
        from datasets_build.matched import fresh_folder  # the generator (datasets, fastText) only when episodes are read

        return candidate_instances(self.game.game_name, self.fresh_dir or fresh_folder(self.game.game_name))


@register(twin("taboo"))
class TabooFreshTask(_Fresh, ClemTask):
    game = TabooGame
    roles = (PLAYER_A, PLAYER_B)

    def __init__(self, *, instances: str | None = None):
        """``instances``: a ``--matched taboo`` folder (default: the seed-0 twin)."""
        super().__init__(twin("taboo"))
        self._set_folder(instances)
