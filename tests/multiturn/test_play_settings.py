"""One ``PlaySettings`` per ``triangulate play`` (issue 28): built once from the command line, ``model_args`` parsed once
per command (play, and a suite file's models), and one comparison rule for "nothing left to play", the resume check
and the settings file."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from models.scripted import ScriptedLM
from multiturn import registry
from multiturn.game import Game, Request, TaskSpec
from plumbing.errors import UserError
from triangulation.cli.main import main


class EchoGame(Game):
    @property
    def done(self) -> bool:
        return bool(self.transcript)

    def next_request(self) -> Request | None:
        return None if self.done else Request(messages=[{"role": "user", "content": f"Say {self.instance['word']}."}])

    def on_reply(self, reply: str) -> None:
        self.transcript.append({"role": "player", "content": reply})

    def scores(self) -> dict[str, float]:
        return {"accuracy": float(self.instance["word"] in self.transcript[-1]["content"])}


class EchoTask(TaskSpec):
    def instances(self, seed: int) -> list[dict]:
        return [{"id": f"e{i}", "word": w} for i, w in enumerate(["red", "blue", "green"])]

    def make_game(self, instance, seed: int) -> Game:
        return EchoGame(instance)


@pytest.fixture
def echo_task(monkeypatch):
    registry.TASKS.load()
    monkeypatch.setattr(registry.TASKS, "_items", dict(registry.TASKS._items))
    registry.register("settings_echo")(EchoTask)


def test_play_parses_model_args_once_and_builds_its_settings_once(echo_task, parses, monkeypatch, tmp_path, capsys):
    from multiturn.engine.settings import PlaySettings

    built = []
    real_from_args = PlaySettings.from_args.__func__
    monkeypatch.setattr(PlaySettings, "from_args", classmethod(lambda cls, *a: built.append(a) or real_from_args(cls, *a)))
    argv = ["play", "--model", "random", "--model_args", "seed=3", "--tasks", "settings_echo", "--output_path", str(tmp_path)]
    for run in ("plays", "finds nothing left to play"):
        parses.clear()
        built.clear()
        assert main(argv) == 0, run
        raw = built[0][0].model_args  # the command's model_args as argparse gave them
        assert len(parses) == 1 and parses[0] is raw, run  # the one parse, at the edge; every later step reads the ModelRef
        assert not any(isinstance(a, str) and "seed" in a for a in parses), run  # nothing re-parses a string form of them
        assert len(built) == 1, run
    assert "nothing left to play" in capsys.readouterr().out


def _settings(tmp_path, model_args: str = "seed=3", **changes) -> object:
    from tests.support.play_settings import play_settings

    return play_settings(["settings_echo"], "random", model_args, tmp_path, **changes)


def test_the_settings_file_nothing_left_and_the_resume_check_use_one_rule(echo_task, tmp_path):
    from multiturn.engine.runner import run_tasks, unchanged_results
    from multiturn.engine.store import same_settings
    from plumbing import run_folder
    from plumbing.jsonio import read_json

    settings = _settings(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.seed = 1  # frozen: built once, read everywhere
    lm = ScriptedLM(lambda m: m[-1]["content"])

    def play(s) -> None:
        run_tasks(s, {"player": lm}, progress=False)

    play(settings)
    stored = read_json(run_folder.settings_path(run_folder.model_dir(tmp_path, settings.folder()), "settings_echo"))
    assert same_settings(stored, settings.for_task(registry.get_task("settings_echo")).episode_settings)  # the file is the rule's input
    assert stored["model_args"] == "seed=3"  # lm-eval's string form, as files written before PlaySettings hold it
    assert _settings(tmp_path, None).model_settings() == {"model": "random", "model_args": ""}  # no model_args: "", as before
    assert unchanged_results(settings) is not None
    transport = _settings(tmp_path, "seed=3,base_url=http://elsewhere:1")  # how a model is reached: same episodes
    assert unchanged_results(transport) is not None
    changed = _settings(tmp_path, gen_kwargs={"temperature": 0.5})
    assert unchanged_results(changed) is None  # not "nothing left": the resume check decides, and refuses
    with pytest.raises(UserError, match=r"other settings \(gen_kwargs: \{\} -> \{\"temperature\": 0.5\}\)"):
        play(changed)


def test_a_suite_model_stores_its_model_args_parsed_once(parses, tmp_path):
    from triangulation.suite.runner import cell_argv
    from triangulation.suite.spec import cells, load_suite

    path = tmp_path / "s.yaml"
    data = {"models": [{"name": "a", "model": "hf", "model_args": "pretrained=org/a,dtype=float32"}], "tasks": [{"play": "wcst"}]}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    suite = load_suite(path)
    [model] = suite.models
    assert dict(model.ref.args) == {"pretrained": "org/a", "dtype": "float32"}
    for cell in cells(suite):
        argv = cell_argv(cell, tmp_path, ["triangulate"])
        assert argv[argv.index("--model_args") + 1] == "pretrained=org/a,dtype=float32"  # passed on as written
    assert [a for a in parses if isinstance(a, str)] == ["pretrained=org/a,dtype=float32"]


def _play_args(argv: list[str]):
    import argparse

    from multiturn import cli as play_cli

    return play_cli.add_parser(argparse.ArgumentParser().add_subparsers()).parse_args(argv)


def test_each_role_model_is_parsed_once_at_the_flags(parses):
    from multiturn.engine.settings import PlaySettings

    argv = ["--model", "random", "--model_args", "seed=3", "--model_b", "random", "--model_args_b", "seed=4"]
    args = _play_args([*argv, "--judge_model", "random", "--judge_model_args", "seed=5", "--tasks", "wordle"])
    parses.clear()
    settings = PlaySettings.from_args(args, {"player_b", "judge"})
    forms = settings.config(), settings.model_settings(), settings.folder(), [r.args_string for r in settings.role_models().values()]
    assert len(parses) == 3, parses  # player, player_b, judge: once each
    assert forms[0]["model_args_b"] == "seed=4" and forms[0]["judge_model_args"] == "seed=5"


def test_a_suite_cells_play_options_are_read_back_by_play_as_given(tmp_path):
    """The one writer of play's flags (:meth:`PlayOptions.flags`, the suite's play cells) and play's reader agree."""
    from models.ref import ModelRef
    from multiturn.engine.flags import PlayOptions
    from multiturn.engine.settings import PlaySettings

    judge, player_b = ModelRef.parse("random", "seed=5"), ModelRef.parse(None, {"seed": 4})
    options = PlayOptions(
        limit=0.5,
        seed=7,
        gen_kwargs={"temperature": 0},
        batch_size="auto:2",
        device="cpu",
        max_live=8,
        task_args={"max_rounds": 3},
        judge_gen_kwargs={"max_gen_toks": 5},
        judge=judge,
        player_b=player_b,
        overwrite=True,
    )
    flags = options.flags()
    settings = PlaySettings.from_args(_play_args(["--model", "random", "--tasks", "wordle", *flags]), {"player_b", "judge"})
    assert (settings.limit, settings.seed, settings.batch_size, settings.device, settings.max_live) == (0.5, 7, "auto:2", "cpu", 8)
    assert (settings.gen_kwargs, settings.task_args, settings.judge_gen_kwargs) == (
        {"temperature": 0},
        {"max_rounds": 3},
        {"max_gen_toks": 5},
    )
    assert settings.judge.args_string == "seed=5" and settings.player_b.model == "random" and settings.player_b.args == {"seed": 4}
    assert settings.overwrite and "--overwrite" in flags
    assert PlayOptions().flags() == []  # nothing set: play's own defaults
