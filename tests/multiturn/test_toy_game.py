"""Adding a game touches one module: a toy game written into a temporary folder (its module, and the
entry-point line that names it, as a package's ``pyproject.toml`` would) is played by the chance
player, shown by the viewer with its own reading and verdict, and re-scored, through the real CLI,
with no file of the project edited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TOY_MODULE = '''
"""A toy game: the game shows numbers one at a time; the player says whether each is even or odd."""

from __future__ import annotations

import re

from multiturn.game import EpisodeSummary, Game, Request, TaskSpec, TurnView
from multiturn.registry import register


def parse(reply):
    found = re.search(r"\\b(even|odd)\\b", reply.lower())
    return found.group(1) if found else None


class ParityGame(Game):
    def __init__(self, instance):
        super().__init__(instance)
        self.history = [{"role": "system", "content": "Say even or odd, nothing else."}]
        self.trials = []

    @property
    def done(self):
        return len(self.trials) == len(self.instance["numbers"])

    def next_request(self):
        if self.done:
            return None
        number = self.instance["numbers"][len(self.trials)]
        return Request(messages=self.history + [{"role": "user", "content": f"Number: {number}"}])

    def on_reply(self, reply):
        number = self.instance["numbers"][len(self.trials)]
        reading = parse(reply)
        self.trials.append({"number": number, "reading": reading, "correct": reading == ("even" if number % 2 == 0 else "odd")})
        self.transcript.append({"role": "player", "content": reply})

    def scores(self):
        return {"accuracy": sum(t["correct"] for t in self.trials) / len(self.trials)}

    def record(self):
        return {"trials": self.trials}

    def reply_view(self, request, reply):
        t = self.trials[-1]
        why = f"toy: {t['number']} is {'even' if t['number'] % 2 == 0 else 'odd'}"
        if t["reading"] is None:
            why = "toy parser expects the word even or odd; " + why
        return TurnView(request.role, reply, reading=t["reading"], verdict=t["correct"], why=why)


@register("toy_parity")
class ParityTask(TaskSpec):
    name = "toy_parity"

    def instances(self, seed):
        return [{"id": f"toy_{i}", "numbers": [i, i + 1, i * 7]} for i in range(3)]

    def make_game(self, instance, seed):
        return ParityGame(instance)

    def summary(self, record):
        right = sum(t["correct"] for t in record.get("trials", []))
        return EpisodeSummary(f"toy summary: {right} right", [("numbers", str(record["instance"]["numbers"]))], "toy numbers")

    def chance_reply(self, request, rng):
        return rng.choice(["even", "odd"])
'''


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
    assert "toy: 0 is even" in page and "toy summary:" in page and "toy numbers" in page  # its why and summary
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
