"""clembench v1.6 instances and game resources, read from the upstream files (for the builder only).

clembench's ``in/instances.json`` holds experiments, each with shared settings (prompts, turn
limits) and a list of game instances. We flatten them to one dict per episode:
``{"id", "experiment", "experiment_index", **experiment settings, **game instance}`` in file order,
so ``--limit 1`` plays clembench's first episode. Wordle's 12,953-word list is kept out of the
flattened dicts (it is the same in every experiment) and loaded once by :func:`wordle_word_list`;
the builder (:mod:`datasets_build.clembench`) adds it, and the private/shared texts, to the rows of
the games that need them, so the runner plays from the built dataset alone.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from datasets_build.sources import source_dir
from plumbing.errors import UserError

UPSTREAM = "clembench"

#: game -> (folder in upstream clembench/, instance file) of the published v1.6 run
INSTANCE_FILES: dict[str, tuple[str, str]] = {
    "taboo": ("taboo", "in/instances.json"),
    "wordle": ("wordle", "in/instances.json"),
    "wordle_withclue": ("wordle_withclue", "in/instances.json"),
    "wordle_withcritic": ("wordle_withcritic", "in/instances.json"),
    "referencegame": ("referencegame", "in/instances.json"),
    "imagegame": ("imagegame", "in/instances.json"),
    "privateshared": ("privateshared", "in/instances.json"),
}

#: (game, earlier release) -> (folder, instance file) of the release's instances that upstream still holds: only the
#: reference game's v1.5 set (``referencegame/in/instances_v1.5.json``; seed 003 App. E ran clembench v1.5)
OLDER_INSTANCE_FILES: dict[tuple[str, str], tuple[str, str]] = {
    ("referencegame", "v1.5"): ("referencegame", "in/instances_v1.5.json"),
}

#: keys too large to copy into every episode
SHARED_ONLY_KEYS = ("english_words",)


def clem_dir() -> Path:
    """The upstream clembench files (``$TRIANGULATE_UPSTREAM/clembench`` or the pinned download)."""
    return source_dir(UPSTREAM)


def game_dir(folder: str) -> Path:
    path = clem_dir() / folder
    if not path.is_dir():
        raise UserError(f"clembench game folder {path} is missing from the upstream data")
    return path


@lru_cache(maxsize=32)
def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def read_json(path: Path) -> Any:
    if not path.is_file():
        raise UserError(f"clembench file {path} is missing from the upstream data")
    return _read_json(str(path))


def flatten(experiments: list[dict[str, Any]], prefix: str = "") -> list[dict[str, Any]]:
    """One dict per episode: experiment settings + game instance, ids ``<exp index>_<exp name>_<game_id>``."""
    out: list[dict[str, Any]] = []
    for exp_index, experiment in enumerate(experiments):
        shared = {k: v for k, v in experiment.items() if k != "game_instances" and k not in SHARED_ONLY_KEYS}
        name = shared.get("name", str(exp_index))
        for game_instance in experiment["game_instances"]:
            episode = {**shared, **game_instance}
            episode["experiment"] = name
            episode["experiment_index"] = exp_index
            episode["id"] = f"{prefix}{exp_index}_{name}_{game_instance['game_id']}"
            out.append(episode)
    return out


def load_instances(game: str, version: str = "v1.6") -> list[dict[str, Any]]:
    """The published episodes of ``game`` (a key of :data:`INSTANCE_FILES`): v1.6's, or an earlier release's
    where upstream holds them (:data:`OLDER_INSTANCE_FILES`)."""
    if game not in INSTANCE_FILES:
        raise UserError(f"unknown clembench game {game!r}; known: {', '.join(INSTANCE_FILES)}")
    if version != "v1.6" and (game, version) not in OLDER_INSTANCE_FILES:
        held = ", ".join(f"{g} {v}" for g, v in OLDER_INSTANCE_FILES)
        raise UserError(f"no clembench {version} instances of {game} upstream (earlier releases held: {held})")
    folder, file_name = INSTANCE_FILES[game] if version == "v1.6" else OLDER_INSTANCE_FILES[(game, version)]
    data = read_json(game_dir(folder) / file_name)
    return flatten(data["experiments"])


def multilingual_languages() -> list[str]:
    """Languages of the multilingual reference game upstream provides (``instances_v1.5_<lang>.json``)."""
    folder = game_dir("referencegame_multilingual") / "in"
    return sorted(p.stem.rsplit("_", 1)[-1] for p in folder.glob("instances_v1.5_*.json"))


def load_multilingual_instances(lang: str) -> list[dict[str, Any]]:
    path = game_dir("referencegame_multilingual") / "in" / f"instances_v1.5_{lang}.json"
    if not path.is_file():
        raise UserError(f"no multilingual reference game for language {lang!r}; known: {', '.join(multilingual_languages())}")
    return flatten(read_json(path)["experiments"])


@lru_cache(maxsize=1)
def _wordle_words(path: str) -> frozenset[str]:
    data = _read_json(path)
    return frozenset(data["experiments"][0]["english_words"])


def wordle_word_list() -> frozenset[str]:
    """The words clembench's Wordle accepts as guesses (the 3b1b allowed-words list in the instances)."""
    return _wordle_words(str(game_dir("wordle") / "in" / "instances.json"))


def privateshared_resources(subtype: str, lang: str = "en") -> dict[str, Any]:
    """The upstream texts of one private/shared experiment: words, probing questions, requests, re-prompt suffixes."""
    base = game_dir("privateshared") / "resources"
    return {
        "words": read_json(base / f"{lang}_words.json"),
        "probes": read_json(base / "texts" / subtype / "probing_questions.json"),
        "requests": read_json(base / "texts" / subtype / "requests.json"),
        "retries": read_json(base / "texts" / "reprompts.json")["suffixes"],
    }
