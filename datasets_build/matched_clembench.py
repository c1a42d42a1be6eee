"""Fresh twins of clembench Wordle and Taboo, matched on the games' own word-frequency bands (issue 33).

One fresh episode per published v1.6 episode, in the published order, with the published episode's
settings and prompts and a new target word from the same band:

* Wordle (seed 002 §3, clembench ``wordle/resources``): the published episodes' bands are
  ``target_word_difficulty`` ``high_frequency`` (10) and ``medium_frequency`` (20); the game's band lists
  are ``easy_words.txt`` (high) and ``medium_words.txt`` (medium) (``hard_words.txt``, low, is empty upstream).
  Fresh targets: band-list words that clembench accepts as guesses and that no published Wordle instance
  file (``wordle``, ``wordle_withclue``, ``wordle_withcritic``; v0.9, v1.0, v1.6) ever used.
* Taboo: the bands are the experiments ``high_en``, ``medium_en``, ``low_en`` (20 each), built upstream from
  the word-frequency lists ``resources/target_words/en/<band>_freq_100_v1.*.txt``, with three related words
  per target picked by hand from the Merriam-Webster thesaurus (not redistributable). Fresh targets: the words
  of the same band in clembench's *earlier* instance files (v0.1/v0.9, v1.0) that v1.6 does not use, with their
  hand-picked related words (78 words: 29 / 25 / 24), and with ``related`` (``--related FILE``: JSON
  ``{word: [related words]}``) also the band-list words no instance file ever used. The first kind is fresh
  relative to v1.6, not never-published: the card says so.
"""

from __future__ import annotations

import json
import random
from typing import Any

from datasets_build import clembench as cb
from datasets_build.clembench_upstream import game_dir, load_instances, read_json, wordle_word_list
from datasets_build.hub import CardInfo
from plumbing.checks import first_n
from plumbing.errors import UserError

WORDLE_BANDS = {"high_frequency": "easy_words.txt", "medium_frequency": "medium_words.txt", "low_frequency": "hard_words.txt"}
WORDLE_FOLDERS = ("wordle", "wordle_withclue", "wordle_withcritic")
TABOO_BANDS = {"high_en": "high", "medium_en": "medium", "low_en": "low"}
TABOO_OLD_FILES = ("in/instances_v0.9.json", "in/instances_v1.0.json", "resources/v01_instances.json")
INSTANCE_FILES = ("in/instances.json", "in/instances_v0.9.json", "in/instances_v1.0.json")


def _targets(folder: str, files: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """target word -> (the last) game instance with its experiment name, over the instance files that exist."""
    out: dict[str, dict[str, Any]] = {}
    for name in files:
        path = game_dir(folder) / name
        if path.is_file():
            for experiment in read_json(path)["experiments"]:
                for inst in experiment["game_instances"]:
                    out[str(inst["target_word"]).lower()] = {**inst, "experiment": experiment["name"]}
    return out


def _words(path) -> list[str]:
    return sorted({w.strip().lower() for w in path.read_text(encoding="utf-8").split() if w.strip()}) if path.is_file() else []


def wordle_pools() -> dict[str, list[str]]:
    """band -> candidate fresh targets (sorted): the band list, minus every published target, within the guess list."""
    used = {w for folder in WORDLE_FOLDERS for w in _targets(folder, INSTANCE_FILES)}
    allowed = wordle_word_list()
    resources = game_dir("wordle") / "resources"
    return {band: [w for w in _words(resources / f) if w not in used and w in allowed] for band, f in WORDLE_BANDS.items()}


def taboo_pools(related: dict[str, list[str]] | None = None) -> dict[str, list[tuple[str, list[str]]]]:
    """experiment (band) -> candidate (target, related words), sorted: earlier versions' words v1.6 does not use,
    plus band-list words no instance file used that ``related`` gives three related words for."""
    published = _targets("taboo", ("in/instances.json",))
    older = _targets("taboo", TABOO_OLD_FILES)
    everything = {**older, **published}
    pools: dict[str, dict[str, list[str]]] = {band: {} for band in TABOO_BANDS}
    for word, inst in older.items():
        if word not in published and inst["experiment"] in pools and len(inst["related_word"]) >= 3:
            pools[inst["experiment"]][word] = list(inst["related_word"][:3])
    lists = game_dir("taboo") / "resources" / "target_words" / "en"
    for band, prefix in TABOO_BANDS.items():
        for path in sorted(lists.glob(f"{prefix}_freq_100_v*.txt")):
            for word in _words(path):
                rel = (related or {}).get(word, [])
                if word not in everything and len(rel) >= 3:
                    pools[band].setdefault(word, list(rel[:3]))
    return {band: sorted(words.items()) for band, words in pools.items()}


def _pick(rng: random.Random, pool: list, n: int, what: str) -> list:
    if len(pool) < n:
        raise UserError(f"only {len(pool)} fresh {what} candidates for {n} published episodes (give --related FILE or a smaller --count)")
    return rng.sample(pool, n)


def matched_wordle(seed: int, count: int | None = None) -> list[dict[str, Any]]:
    published = first_n(load_instances("wordle"), count, "--count", "published Wordle episodes")
    pools, rng = wordle_pools(), random.Random(f"{seed}:wordle")
    bands = [ep["target_word_difficulty"] for ep in published]
    picks = {band: iter(_pick(rng, pools[band], bands.count(band), f"Wordle {band}")) for band in dict.fromkeys(bands)}
    return [{**ep, "target_word": next(picks[ep["target_word_difficulty"]]), "target_word_clue": ""} for ep in published]


def matched_taboo(seed: int, count: int | None = None, related: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    published = first_n(load_instances("taboo"), count, "--count", "published Taboo episodes")
    pools, rng = taboo_pools(related), random.Random(f"{seed}:taboo")
    bands = [ep["experiment"] for ep in published]
    picks = {band: iter(_pick(rng, pools[band], bands.count(band), f"Taboo {band}")) for band in dict.fromkeys(bands)}
    out = []
    for ep in published:
        word, rel = next(picks[ep["experiment"]])
        base = {k: v for k, v in ep.items() if k not in ("target_word_stem", "related_word_stem")}  # stems: the game computes them
        out.append({**base, "target_word": word, "related_word": rel})
    return out


def card(game: str, seed: int, n: int) -> CardInfo:
    how = {
        "wordle": (
            "target words from the game's own frequency bands (`wordle/resources/easy_words.txt` for the published "
            "`high_frequency` episodes, `medium_words.txt` for `medium_frequency`), restricted to Wordle's allowed guesses and "
            "to words no published Wordle instance file (wordle, wordle_withclue, wordle_withcritic; v0.9, v1.0, v1.6) used"
        ),
        "taboo": (
            "target words of the same band (experiment `high_en` / `medium_en` / `low_en`) taken from clembench's earlier "
            "instance files (v0.1/v0.9, v1.0) where v1.6 does not use them, with their hand-picked related words; these "
            "words were published in 2023 with those versions, so this set is fresh relative to v1.6, not never-published "
            "(with `--related FILE`, band-list words no instance file used are candidates too)"
        ),
    }[game]
    body = (
        f"\n\n## Fresh twin of `{game}` (seed {seed})\n\nConfig `{game}`, split `test`: {n} episodes, one per published v1.6 "
        f"episode in the published order, each with its settings and prompts and a new target word: {how}. Matched on "
        f"the game's frequency band only (exact counts per band). Generated with `triangulate data generate --matched "
        f"{game} --seed {seed}`; played by the task `{game}_fresh`."
    )
    return cb.card(body)


def matched_rows(game: str, seed: int, count: int | None = None, related: dict | None = None):
    """(rows, card, features, config) of the fresh twin of ``game`` as a clembench folder (config ``game``)."""
    episodes = matched_wordle(seed, count) if game == "wordle" else matched_taboo(seed, count, related)
    rows = [cb.episode_row(game, cb.playable(game, ep)) for ep in episodes]
    return rows, card(game, seed, len(rows)), cb.FEATURES, game


def targets_of(rows: list[dict[str, Any]]) -> list[str]:
    return [json.loads(r["instance"])["target_word"] for r in rows]
