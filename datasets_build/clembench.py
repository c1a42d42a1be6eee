"""The ``clembench`` dataset: clembench v1.6 game instances as a Hub-ready folder, and fresh instances.

``triangulate data build`` writes one config per game (``taboo``, ``wordle``, ``wordle_withclue``,
``wordle_withcritic``, ``referencegame``, ``imagegame``, ``privateshared``) and one per language of
the multilingual reference game (``referencegame_<lang>``), split ``test``. A row is one episode:
``id``, ``game``, ``experiment``, ``experiment_index``, ``game_id``, ``lang`` and ``instance`` (the
episode's full clembench instance as JSON: experiment settings and prompts merged with the game
instance, as :mod:`datasets_build.clembench_upstream` flattens them). Rows carry what their game
reads besides the instance, so the runner needs nothing else: Wordle rows the allowed-word list
(``english_words``), private/shared rows the experiment's texts (``resources``).

Fresh instances (``triangulate data generate --benchmark clembench``) are :mod:`datasets_build.clembench_fresh`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets

from datasets_build.clembench_names import CLEMBENCH_GAMES, MULTILINGUAL_LANGUAGES
from datasets_build.clembench_upstream import (
    load_instances,
    load_multilingual_instances,
    privateshared_resources,
    wordle_word_list,
)
from datasets_build.hub import CardInfo, write_hub_folder
from datasets_build.load import load_config
from datasets_build.registry import register_builder

NAME = "clembench"
CARD = Path(__file__).with_name("cards") / "clembench.md"

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "game": datasets.Value("string"),
        "experiment": datasets.Value("string"),
        "experiment_index": datasets.Value("int32"),
        "game_id": datasets.Value("int32"),
        "lang": datasets.Value("string"),
        "instance": datasets.Value("string"),
    }
)

CITATION = """@inproceedings{beyer-etal-2024-clembench,
  title = {clembench-2024: A Challenging, Dynamic, Complementary, Multilingual Benchmark and Underlying Flexible Framework for {LLM}s as Multi-Action Agents},
  author = {Beyer, Anne and Chalamalasetti, Kranti and Hakimov, Sherzod and Madureira, Brielen and Sadler, Philipp and Schlangen, David},
  year = {2024},
  eprint = {2405.20859},
  archivePrefix = {arXiv}
}"""


def game_extras(game: str, episode: dict[str, Any]) -> dict[str, Any]:
    """What ``game`` reads besides the instance: Wordle's allowed words, the private/shared texts."""
    if game.startswith("wordle"):
        return {"english_words": sorted(wordle_word_list())}
    if game == "privateshared":
        return {"resources": privateshared_resources(episode["experiment"], episode.get("lang", "en"))}
    return {}


def playable(game: str, episode: dict[str, Any]) -> dict[str, Any]:
    """A flattened episode with its game's extras (:func:`game_extras`): what one built row holds."""
    return {**episode, **game_extras(game, episode)}


def episode_row(game: str, episode: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    """One dataset row from a playable episode dict (:func:`playable`)."""
    instance = dict(episode)
    return {
        "id": f"{game}_{episode['id']}",
        "game": game,
        "experiment": str(episode.get("experiment", "")),
        "experiment_index": int(episode.get("experiment_index", 0)),
        "game_id": int(episode.get("game_id", 0)),
        "lang": str(episode.get("lang", lang)),
        # key order kept: Private/Shared asks its probes in the order of the instance's own keys
        "instance": json.dumps(instance, ensure_ascii=False),
    }


def v16_configs() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """{config: {"test": rows}} of the published v1.6 instances in upstream clembench."""
    configs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for game in sorted(CLEMBENCH_GAMES):
        configs[game] = {"test": [episode_row(game, playable(game, ep)) for ep in load_instances(game)]}
    for lang in MULTILINGUAL_LANGUAGES:
        game = f"referencegame_{lang}"
        configs[game] = {"test": [episode_row(game, {**ep, "lang": lang}, lang=lang) for ep in load_multilingual_instances(lang)]}
    return configs


def card(body_extra: str = "") -> CardInfo:
    return CardInfo(
        pretty_name="clembench v1.6 game instances",
        license="mit",
        citation=CITATION,
        body=CARD.read_text(encoding="utf-8") + body_extra,
        language=("en", "de", "it", "ja", "pt", "te", "tk", "tr", "zh"),
        task_categories=("text-generation",),
        tags=("dialogue-games", "clembench", "interactive-evaluation"),
        source="https://github.com/clp-research/clembench (v1.6 commits of May 2024; see the card body).",
    )


@register_builder(NAME)
def build(out_dir: Path) -> dict:
    """Write the clembench folder (one config per game, split ``test``) into ``out_dir``."""
    return write_hub_folder(out_dir, v16_configs(), FEATURES, card())


def load_clembench(config: str, data_dir: Path | None = None) -> list[dict[str, Any]]:
    """The episodes of one config of a built (or generated) clembench folder, as flattened instance dicts.

    ``data_dir`` defaults to the built ``clembench`` dataset; a folder without ``config`` is a one-line error."""
    return [json.loads(text) for text in load_config(NAME, config, data_dir)["test"]["instance"]]
