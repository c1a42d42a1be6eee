"""``model_args`` parsed once per command (issue 28) for ``triangulate eval`` and ``triangulate score --judge_model_args``:
the command's own value reaches :func:`models.ref.parse_model_args` once, at the command's entry, and every later
step gets the parsed mapping (``triangulate play`` and the suite: tests/multiturn/test_play_settings.py)."""

from __future__ import annotations

import argparse
import json

import pytest

from models.loading import register_lm_class
from models.naming import model_folder_name
from plumbing import run_folder
from tests.triangulation.test_score_cli import JudgedTask, YesJudge, _play
from triangulation.cli.main import main


@pytest.fixture
def namespaces(monkeypatch) -> list[argparse.Namespace]:
    """Every namespace an argparse parser returned (the command's own ``model_args`` live in one of them)."""
    seen: list[argparse.Namespace] = []
    real = argparse.ArgumentParser.parse_known_args

    def recording(self, *a, **kw):
        out = real(self, *a, **kw)
        seen.append(out[0])
        return out

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", recording)
    return seen


def _given(namespaces: list[argparse.Namespace], attribute: str) -> object:
    """The command's ``attribute`` as argparse gave it (the last namespace that has it set)."""
    values = [getattr(ns, attribute) for ns in namespaces if getattr(ns, attribute, None) is not None]
    assert values, attribute
    return values[-1]


def _stored_eval(output, model_args: dict, task: str = "globalgroup_zh") -> None:
    """A results file as lm-eval writes it for ``--model random --model_args ... --tasks TASK --limit 1``."""
    folder = run_folder.model_dir(output, model_folder_name("random", model_args))
    folder.mkdir(parents=True)
    config = {"model": "random", "model_args": model_args, "limit": 1.0, "gen_kwargs": None}
    data = {"results": {task: {"acc,none": 0.0}}, "config": config, "chat_template": None}
    (folder / f"{run_folder.RESULTS_PREFIX}2026-01-01T00-00-00.000000.json").write_text(json.dumps(data), encoding="utf-8")


def test_eval_parses_its_model_args_once(parses, namespaces, tmp_path, capsys):
    _stored_eval(tmp_path, {"seed": 7, "model": "random"})
    parses.clear()
    argv = ["eval", "--model", "random", "--model_args", "seed=7", "--tasks", "globalgroup_zh", "--limit", "1"]
    assert main([*argv, "--output_path", str(tmp_path)]) == 0
    assert "nothing to evaluate" in capsys.readouterr().out  # the checks, the secrets and the stored-run lookup ran
    given = _given(namespaces, "model_args")  # lm-eval's argparse already made a dict of the string
    assert given == {"seed": 7, "model": "random"}
    assert sum(a is given for a in parses) == 1  # reach the parser once; later steps get the parsed dict
    assert not any(isinstance(a, str) and "seed" in a for a in parses)  # no string form of them is parsed again


def test_score_parses_its_judge_model_args_once(parses, namespaces, tmp_path, capsys):
    from models.scripted import ScriptedLM
    from multiturn import registry

    if "judged_test" not in registry.task_names():
        registry.register("judged_test")(JudgedTask)
    numbers = iter(["2", "3", "4", "5"])
    _play(tmp_path, "judged_test", ScriptedLM(lambda m: next(numbers)), judge=ScriptedLM(lambda m: "Yes."))
    register_lm_class("scripted-yes-judge", YesJudge)
    parses.clear()
    argv = ["score", str(tmp_path), "--judge_model", "scripted-yes-judge", "--judge_model_args", "temperature_hint=3"]
    assert main(argv) == 0
    assert "judges agree on" in capsys.readouterr().out
    given = _given(namespaces, "judge_model_args")
    assert given == {"temperature_hint": 3}
    assert sum(a is given for a in parses) == 1
    assert not any(isinstance(a, str) and "temperature_hint" in a for a in parses)
