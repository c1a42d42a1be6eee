"""The clembench games and languages by name: shared by the builder (:mod:`datasets_build.clembench`) and the
side runner's clem games (:mod:`multiturn.games.clem`), so neither imports the other's internals."""

from __future__ import annotations

#: the seven games of clembench v1.6 in the order of its results table
CLEMBENCH_GAMES: tuple[str, ...] = (
    "imagegame",
    "privateshared",
    "referencegame",
    "taboo",
    "wordle",
    "wordle_withclue",
    "wordle_withcritic",
)

#: languages of the multilingual reference game in upstream clembench (branch multilingual_reference,
#: instances_v1.5_<lang>.json); tests check this list against the upstream folder
MULTILINGUAL_LANGUAGES: tuple[str, ...] = ("de", "en", "it", "ja", "pt", "te", "tk", "tr", "zh")
