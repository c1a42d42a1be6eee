"""Adding a game touches one module: the complete example of ``multiturn/games/README.md`` (the one recipe), written
into a temporary folder with the entry-point line that names it (as a package's ``pyproject.toml`` would), is played
by the chance player, shown by the viewer with its own reading and verdict, and re-scored through the real CLI, with
no file of the project edited; after a scoring change (a new ``version``) ``score`` rewrites the stored per-episode
scores, so the viewer and the results agree."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

RECIPE = ROOT / "multiturn" / "games" / "README.md"


def recipe_module() -> str:
    """The complete example of ``multiturn/games/README.md`` (its first ``python`` block after "A complete example")."""
    text = RECIPE.read_text(encoding="utf-8")
    found = re.search(r"## A complete example.*?```python\n(.*?)```", text, re.S)
    assert found, "multiturn/games/README.md has no complete example"
    return found.group(1)


TOY_MODULE = recipe_module()


def triangulate(commands: list[list[str]], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run ``triangulate <command>`` for each command in one fresh interpreter (one start-up, a registry that
    has not been filled yet); stops at the first non-zero exit status, which becomes the process's."""
    script = (
        "import sys\nfrom triangulation.cli.main import main\nfor argv in {!r}:\n    rc = main(argv)\n    if rc:\n        sys.exit(rc)\n"
    )
    return subprocess.run([sys.executable, "-c", script.format(commands)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory) -> dict[str, str]:
    plugins = tmp_path_factory.mktemp("plugins")
    (plugins / "toy_parity_game.py").write_text(textwrap.dedent(TOY_MODULE), encoding="utf-8")
    dist = plugins / "toy_parity_game-0.1.dist-info"
    dist.mkdir()
    (dist / "entry_points.txt").write_text("[triangulate.games]\ntoy_parity = toy_parity_game\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(plugins)]), OMP_NUM_THREADS="1")
    return env


def test_a_toy_game_in_one_module_plays_shows_and_rescores(plugin_env, tmp_path):
    out, view = tmp_path / "out", tmp_path / "view"
    commands = [
        ["play", "--model", "random", "--tasks", "toy_parity", "--output_path", str(out)],
        ["view", str(out), "--out", str(view)],
        ["score", str(out)],
    ]
    done = triangulate(commands, plugin_env)
    assert done.returncode == 0, done.stderr[-2000:]
    [episodes] = list(out.glob("*/episodes_toy_parity.jsonl"))
    records = [json.loads(line) for line in episodes.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 3 and all(c["reply"] in ("even", "odd") for r in records for c in r["calls"])  # its own chance reply

    page = (view / "toy_parity.html").read_text(encoding="utf-8")
    assert "read as: <bdi>even</bdi>" in page or "read as: <bdi>odd</bdi>" in page  # its parsed reading
    assert "&#10003;" in page or "&#10007;" in page  # its verdict
    assert "0 is even" in page and "of 3 right" in page and "numbers" in page  # its why and summary
    assert "Say even or odd, nothing else." in page and "Number: 7" in page  # the exact prompts

    assert "toy_parity: 0 episode(s) scored differently" in done.stdout and "0 metric value(s) changed" in done.stdout


def test_the_entry_point_line_is_what_registers_it(plugin_env, tmp_path, monkeypatch):
    """The registry finds the module through its entry point; the same module on the path without it is no family."""
    from multiturn import registry

    plugins = Path(plugin_env["PYTHONPATH"].split(os.pathsep)[1])
    monkeypatch.syspath_prepend(str(plugins))
    modules = registry.family_modules()
    assert modules[-1] == "toy_parity_game" and "multiturn.games.nback" in modules  # the built-in games are found too
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "toy_parity_game.py").write_text((plugins / "toy_parity_game.py").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(plugins)] + [str(bare)])
    assert "toy_parity_game" not in registry.family_modules()


def _episodes(out: Path) -> list[dict]:
    [episodes] = list(out.glob("*/episodes_toy_parity.jsonl"))
    return [json.loads(line) for line in episodes.read_text(encoding="utf-8").splitlines()]


def test_after_a_scoring_change_score_rewrites_the_stored_episode_scores(plugin_env, tmp_path):
    out, view = tmp_path / "out", tmp_path / "view"
    play = ["play", "--model", "random", "--tasks", "toy_parity", "--output_path", str(out)]
    assert triangulate([play], plugin_env).returncode == 0
    before = {r["id"]: r["scores"]["accuracy"] for r in _episodes(out)}

    module = Path(plugin_env["PYTHONPATH"].split(os.pathsep)[1]) / "toy_parity_game.py"
    changed = module.read_text(encoding="utf-8")
    assert "version = 1.0" in changed and 'reading == ("even" if number % 2 == 0 else "odd")' in changed
    changed = changed.replace("version = 1.0", "version = 2.0")  # a new rule: the verdicts flip
    changed = changed.replace('reading == ("even" if number % 2 == 0 else "odd")', 'reading == ("odd" if number % 2 == 0 else "even")')
    module.write_text(changed, encoding="utf-8")
    try:
        done = triangulate([["score", str(out)], ["view", str(out), "--out", str(view)], play], plugin_env)
    finally:
        module.write_text(recipe_module(), encoding="utf-8")
    assert done.returncode == 0, done.stderr[-2000:]

    records = _episodes(out)
    after = {r["id"]: r["scores"]["accuracy"] for r in records}
    assert after.keys() == before.keys() and all(abs(after[i] - (1 - a)) < 1e-9 for i, a in before.items())  # the stored scores
    results = sorted(out.glob("*/results_*.json"), key=lambda p: p.stat().st_mtime)[-1]
    data = json.loads(results.read_text(encoding="utf-8"))
    assert data["versions"]["toy_parity"] == 2.0
    mean = sum(r["scores"]["accuracy"] for r in records) / len(records)
    assert abs(data["results"]["toy_parity"]["accuracy,none"] - mean) < 1e-9  # the results say what the episodes say
    page = (view / "toy_parity.html").read_text(encoding="utf-8")
    right = sum(t["correct"] for r in records for t in r["trials"])
    assert page.count("&#10003;") == right  # the viewer's verdicts are the stored scores' verdicts
    settings = json.loads(next(out.glob("*/episodes_toy_parity.settings.json")).read_text(encoding="utf-8"))
    assert settings["scoring_version"] == 2.0
    assert "nothing left to play" in done.stdout  # the re-scored episodes resume under the new version
