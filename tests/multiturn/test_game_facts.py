"""A game owns its facts (issue 38 item 6): its name (the registration), roles, groups and cost hints are class
attributes, and the catalogue (``play --tasks list``, clem's ``GAMES``), the ``clembench`` group, the report's
clembench list and the suite's cost model read them from the registry. A game added in one module, as
``multiturn/games/README.md`` (any game) and ``multiturn/games/clem/README.md`` (a clembench game) describe it,
appears in all of them with no other file edited; reading the facts loads no game's data."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from datasets_build.clembench_names import CLEMBENCH_GAMES
from multiturn.api import clembench_games, task_facts
from multiturn.games.clem import GAMES
from multiturn.games.clem.referencegame import ReferenceGame

ROOT = Path(__file__).resolve().parents[2]
GAMES_README = ROOT / "multiturn" / "games" / "README.md"
CLEM_README = ROOT / "multiturn" / "games" / "clem" / "README.md"
#: data libraries (and what they pull in) that listing games must not load
HEAVY = ("datasets", "pyarrow", "pandas", "numpy", "torch", "transformers")


def toy_game() -> str:
    """The complete example of ``multiturn/games/README.md``."""
    found = re.search(r"## A complete example.*?```python\n(.*?)```", GAMES_README.read_text(encoding="utf-8"), re.S)
    assert found
    return found.group(1)


def toy_clem_game() -> str:
    """The example of ``multiturn/games/clem/README.md`` (a quoted block)."""
    found = re.search(r"> ```python\n(.*?)> ```", CLEM_README.read_text(encoding="utf-8"), re.S)
    assert found
    return "\n".join(line[2:] if line.startswith("> ") else line.lstrip(">") for line in found.group(1).splitlines()) + "\n"


def run_python(script: str, env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


LOOK = """
import contextlib, io, json
from models.scripted import ScriptedLM  # noqa: F401  (the engine's players; only to load what play loads)
from multiturn.api import clembench_games, task_facts
from multiturn.games.clem import GAMES
from multiturn.games.clem.replay import play_game
from triangulation.cli.main import main
from triangulation.report.analyses.clembench import is_game
from triangulation.suite.task_stats import table_counts

listing = io.StringIO()
with contextlib.redirect_stdout(listing):
    main(["play", "--tasks", "list"])
toy, = table_counts("toy_parity", ["toy_parity"]).values()
toy_one, = table_counts("toy_parity", ["toy_parity"], limit=1).values()
group, = table_counts("clembench", ["clembench"]).values()
echo = play_game(GAMES["echo"]({"prompt": "Say hi.", "target": "hi"}), {"player": lambda messages: "hi"})
print(json.dumps({
    "listing": listing.getvalue(),
    "toy": toy.as_json(), "toy_one": toy_one.as_json(), "group": group.as_json(),
    "members_turns": sum(task_facts(t).cost.turns for t in clembench_games()),
    "clembench": list(clembench_games()), "echo_game": GAMES["echo"].__name__, "echo_roles": list(task_facts("echo").roles),
    "echo_is_game": is_game("echo"), "echo_score": echo.scores()["main_score"],
}))
"""


def test_a_game_in_one_module_is_in_the_catalogue_the_group_and_the_cost_model(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "toy_parity_game.py").write_text(textwrap.dedent(toy_game()), encoding="utf-8")
    (plugins / "toy_echo_game.py").write_text(toy_clem_game(), encoding="utf-8")
    dist = plugins / "toy_games-0.1.dist-info"
    dist.mkdir()
    (dist / "entry_points.txt").write_text("[triangulate.games]\ntoy_parity = toy_parity_game\necho = toy_echo_game\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(plugins)]), OMP_NUM_THREADS="1")

    seen = run_python(LOOK, env)

    assert "toy_parity  (--task_args episodes=3)" in seen["listing"] and "echo  (--task_args" in seen["listing"]
    # the README's hints: 3 episodes, 9 turns, 90 prompt tokens, replies of 1 token (at most 5)
    assert seen["toy"] == {
        "kind": "play",
        "requests": 9,
        "prompt_tokens": 90,
        "gen_tokens": 9,
        "max_gen_tokens": 45,
        "source": seen["toy"]["source"],
    }
    assert "3 numbers per episode" in seen["toy"]["source"]
    assert (seen["toy_one"]["requests"], seen["toy_one"]["prompt_tokens"]) == (3, 30)  # --limit 1: one of three episodes
    # the clem game joined the clembench group: the catalogue, the report's list and the group's cost row
    assert "echo" in seen["clembench"] and set(CLEMBENCH_GAMES) < set(seen["clembench"])
    assert seen["echo_game"] == "EchoGame" and seen["echo_roles"] == ["player"] and seen["echo_is_game"]
    assert "echo" in seen["group"]["source"] and seen["group"]["requests"] == seen["members_turns"]
    assert seen["echo_score"] == 100.0  # the catalogue's class plays


def test_reading_every_games_facts_loads_no_data_library():
    """The registry imports every game module to list tasks and read their facts: none may load its data loader."""
    script = f"""
import json, sys
from multiturn.registry import group_names, task_facts, task_names
facts = [task_facts(name) for name in task_names()]
group_names()
print(json.dumps({{"tasks": len(facts), "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""
    seen = run_python(script, dict(os.environ, PYTHONPATH=str(ROOT)))
    assert seen["tasks"] > 40 and seen["loaded"] == []


def test_the_clembench_games_declare_their_facts():
    """The group is the seven games the builder builds; each declares its roles and cost hints; the multilingual
    reference games play the reference game outside the group."""
    assert sorted(clembench_games()) == sorted(CLEMBENCH_GAMES)
    assert task_facts("wordle_withcritic").roles == ("player", "player_b") and task_facts("wordle").roles == ("player",)
    assert task_facts("privateshared").roles == ("player",) and task_facts("taboo").roles == ("player", "player_b")
    for game in CLEMBENCH_GAMES:
        hints = task_facts(game).cost
        assert hints is not None and hints.turns >= hints.episodes > 0 and hints.max_reply_tokens == 250
    assert all(GAMES[game].game_name == game for game in CLEMBENCH_GAMES)  # a game plays its own dataset config
    assert GAMES["referencegame_de"] is ReferenceGame and "referencegame_de" not in clembench_games()
    assert task_facts("referencegame_de").cost is None
