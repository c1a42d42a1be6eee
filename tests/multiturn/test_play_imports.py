"""Playing with the chance player loads no torch (issue 38, item 7).

``--model random`` imported torch, transformers and aiohttp (7.3 s and 828 MB to play one toy episode): the batch
size default imported the prefix cache (torch), ``load_lm`` imported the prefix cache and the API client for every
model, and the engine imported torch to seed it. Each now loads only for the models that use it. Playing one game
imports that game's data loaders only (issue 38, item 6): the registry imports every game module to list the tasks,
and a game module imports its loader where it reads episodes (``lnt`` reads none: no loader, no ``datasets``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "aiohttp", "datasets")

PLAY = f"""
import json, sys
from triangulation.cli.main import main
code = main(["play", "--model", "random", "--tasks", "lnt", "--limit", "1", "--output_path", sys.argv[1]])
loaders = sorted(m for m in sys.modules if m.startswith("datasets_build.") and not m.endswith("_names"))
print(json.dumps({{"code": code, "loaded": [m for m in {HEAVY!r} if m in sys.modules], "loaders": loaders}}))
"""


def test_the_chance_player_plays_one_game_without_torch(tmp_path):
    proc = subprocess.run([sys.executable, "-c", PLAY, str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    outcome = json.loads(proc.stdout.strip().splitlines()[-1])
    assert outcome == {"code": 0, "loaded": [], "loaders": []}
    assert list((tmp_path / "out" / "random").glob("results_*.json"))
