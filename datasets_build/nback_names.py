"""The n-back variants and answers: shared by the builder (:mod:`datasets_build.nback`) and the side runner's game
(:mod:`multiturn.games.nback`), so that registering a game's tasks loads no data library."""

from __future__ import annotations

MATCH, NON_MATCH = "m", "-"
#: variant -> its upstream block folder (under ChatGPT-WM/datasets) and system-prompt file name
KINDS: dict[str, dict[str, str]] = {
    "verbal": {"folder": "letters", "prompt": "verbal_{n}back.txt"},
    "spatial": {"folder": "grids_3*3", "prompt": "spatial_3x3_{n}back.txt"},
}
