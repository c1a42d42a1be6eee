"""A small real run for the viewer and report tests: ``triangulate play``'s engine with the ``random``
chance player on one task of every family, plus a scripted player whose n-back replies carry a
``<script>`` (the escaping check). Built data (connections, clembench, nback, splat) go to a temporary folder."""

from __future__ import annotations

import os
from pathlib import Path

EVIL = "<script>alert(1)</script>"
#: one task per family; ``--limit 2`` keeps it to seconds
FAMILY_TASKS = {
    "n-back": "nback_verbal_1",
    "WCST": "wcst",
    "LNT": "lnt",
    "interactive Connections": "connections_interactive",
    "SPLAT": "splat_easy",
    "clembench Wordle": "wordle",
    "clembench taboo": "taboo",
    "clembench reference game": "referencegame",
    "clembench image game": "imagegame",
    "clembench private/shared": "privateshared",
}


def build_data(upstream: Path, root: Path) -> Path:
    """Build the datasets the play tasks read into ``root``; sets TRIANGULATE_UPSTREAM / TRIANGULATE_DATA."""
    from datasets_build.registry import builders

    os.environ["TRIANGULATE_UPSTREAM"] = str(upstream)
    os.environ["TRIANGULATE_DATA"] = str(root)
    available = builders()
    for name in ("connections", "clembench", "nback", "splat"):
        if not (root / name / "README.md").is_file():
            available[name](root / name)
    return root


def play(out: Path, tasks: list[str], lm, model_name: str, limit: int = 2, seed: int = 1) -> Path:
    """Play ``tasks`` with ``lm`` in every role; returns the results JSON path under ``out/<model_name>``."""
    from multiturn.engine.runner import run_tasks
    from tests.support.play_settings import play_settings

    settings = play_settings(tasks, model_name, None, out, limit=limit, seed=seed, overwrite=True)
    _, path = run_tasks(settings, {"player": lm, "player_b": lm, "judge": lm})
    return Path(path)


def played_run(upstream: Path, root: Path) -> Path:
    """``root/runs``: the random player on every family and the scripted n-back player with ``<script>`` replies."""
    from models.chance import RandomLM
    from models.scripted import ScriptedLM

    build_data(upstream, root / "data")
    runs = root / "runs"
    play(runs, list(FAMILY_TASKS.values()), RandomLM(seed=7), "random")
    evil = ScriptedLM(lambda messages: f"m {EVIL}", name="evil")
    play(runs, ["nback_verbal_1"], evil, "scripted-evil")
    return runs
