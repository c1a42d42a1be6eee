"""GlobalGroup boards played one guess at a time, by the NYT Connections app's rules.

The game, its prompt, parse rule and metrics are those of :mod:`multiturn.games.connections_interactive`
(one group of four per turn, "Correct" / "One away" / "Incorrect", four mistakes end the game); only
the opening line differs (no NYT branding) and there is no ``weighted_clustering``, since GlobalGroup
groups carry no difficulty colour.

Tasks: ``globalgroup_interactive_<subset>`` (the 300 4x4 test games of dataset ``globalgroup``,
config ``<subset>_4x4``) for every GlobalGroup subset (:data:`datasets_build.globalgroup.SUBSET_NAMES`,
the subsets' one home), and the group ``globalgroup_interactive`` over them.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from datasets_build.globalgroup_names import SUBSET_NAMES
from multiturn.games.connections_interactive import ConnectionsInteractiveTask
from multiturn.registry import register, register_group

INTRO = "Let's play a word-grouping game like NYT Connections, one guess at a time, as the New York Times app plays it."
GROUP = "globalgroup_interactive"


class GlobalGroupInteractiveTask(ConnectionsInteractiveTask):
    """GlobalGroup 4x4 test games of one subset, played guess by guess (no colours, so no weighted score)."""

    intro = INTRO

    def __init__(self, subset: str):
        self.subset = subset

    def instances(self, seed: int) -> list[dict[str, Any]]:
        from datasets_build.load import load_globalgroup

        return [dict(row) for row in load_globalgroup(f"{self.subset}_4x4")["test"]]

    def config(self) -> dict[str, Any]:
        return {**super().config(), "dataset": "globalgroup", "dataset_config": f"{self.subset}_4x4", "split": "test"}


def task_names() -> list[str]:
    """``globalgroup_interactive_<subset>`` for every GlobalGroup subset, in the dataset's order."""
    return [f"{GROUP}_{subset}" for subset in SUBSET_NAMES]


for _subset in SUBSET_NAMES:
    register(f"{GROUP}_{_subset}")(partial(GlobalGroupInteractiveTask, _subset))
register_group(GROUP, task_names())
