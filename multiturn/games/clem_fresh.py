"""``wordle_fresh`` and ``taboo_fresh``: the clembench games on their matched fresh twins (issue 33).

Each plays the published game's rules and scoring on the episodes of its fresh twin
(:mod:`datasets_build.matched_clembench`: one new target word per published episode, from the same
frequency band), generated on first use with seed 0 into ``$TRIANGULATE_DATA/fresh/<game>_seed0``. The task
option ``instances=FOLDER`` plays another twin (``triangulate data generate --matched wordle --seed 3 --out FOLDER``).
The report's "Published vs fresh" section compares a model's ``<game>`` and ``<game>_fresh`` results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datasets_build.matched import fresh_folder, twin
from multiturn.games.clem import ClemTask, WordleTask
from multiturn.games.clem.catalog import ROLES, candidate_instances, check_instances_folder
from multiturn.registry import register


class _Fresh:
    """Mixin: episodes from the fresh twin folder of ``self.game``."""

    game: str
    fresh_dir: Path | None

    def _set_folder(self, instances: str | None) -> None:
        self.fresh_dir = Path(instances).expanduser() if instances else None
        if self.fresh_dir is not None:
            check_instances_folder(self.game, self.fresh_dir)

    def instances(self, seed: int) -> list[dict[str, Any]]:
        """The fresh twin's episodes (fixed stimuli: the seed does not change them)."""
        return candidate_instances(self.game, self.fresh_dir or fresh_folder(self.game))


@register(twin("wordle"))
class WordleFreshTask(_Fresh, WordleTask):
    def __init__(self, *, instances: str | None = None, speed: str = "v1.6"):
        """``instances``: a ``--matched wordle`` folder (default: the seed-0 twin); ``speed`` as ``wordle``."""
        super().__init__(twin("wordle"), "wordle", ROLES["wordle"], speed=speed)
        self._set_folder(instances)


@register(twin("taboo"))
class TabooFreshTask(_Fresh, ClemTask):
    def __init__(self, *, instances: str | None = None):
        """``instances``: a ``--matched taboo`` folder (default: the seed-0 twin)."""
        super().__init__(twin("taboo"), "taboo", ROLES["taboo"])
        self._set_folder(instances)
