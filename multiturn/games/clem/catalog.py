"""The episodes each clembench task plays (from built datasets, or a folder given as the ``instances`` option).

The catalogue of games by task name is the registry's (:func:`multiturn.games.clem.task.games`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from plumbing.errors import UserError

_TAG = re.compile(r'["「]([^"「」]+?[:：])\s*["」]')


def prompt_tag(prompt: str) -> str:
    """The response tag a prompt asks for: the last quoted ``word:`` in its last line."""
    lines = prompt.strip().split("\n")
    for line in reversed(lines):
        found = _TAG.findall(line)
        if found:
            return found[-1]
    raise ValueError("no quoted response tag found in the prompt")


def multilingual_patterns(instance: Mapping[str, Any], labels: Iterable[str]) -> dict[str, str]:
    """Response patterns for an instance without them, in the shape of the English v1.6 ones."""
    tag1 = re.escape(prompt_tag(instance["player_1_prompt_header"]))
    tag2 = re.escape(prompt_tag(instance["player_2_prompt_header"]))
    choices = "|".join(re.escape(x) for x in sorted(set(labels), key=lambda s: (-len(s), s)))
    return {
        "player_1_response_pattern": rf"^{tag1}\s*(?P<content>.+)\n*(?P<remainder>.*)",
        "player_2_response_pattern": rf"^{tag2}\s*(?P<content>{choices})\n*(?P<remainder>.*)",
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
    from datasets_build.clembench import load_clembench  # the data loader (datasets) only when episodes are read

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
