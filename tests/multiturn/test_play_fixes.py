"""Issue 15's fixes to `triangulate play`: temperature=0 means greedy on every backend, backend failures
exit non-zero with one summary line, group results shaped as lm-eval 0.4.13 writes them, and the
embedded model's results folder named after the model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from models.scripted import ScriptedLM
from multiturn.cli import failure_summary
from multiturn.engine.runner import run_tasks
from multiturn.engine.scheduler import merged_gen_kwargs
from multiturn.game import Request
from tests.support.engine_helpers import CountTask, echo_last
from tests.support.play_settings import play_settings

REPO = Path(__file__).resolve().parents[2]
HELPER = [sys.executable, str(REPO / "tests" / "support" / "engine_helpers.py")]


class SamplingTask(CountTask):
    gen_kwargs = {"max_gen_toks": 4, "do_sample": True, "temperature": 0.7, "top_p": 0.9}


def _player_kwargs(override):
    return merged_gen_kwargs(SamplingTask(), Request(messages=[{"role": "user", "content": "1"}]), override)


def test_temperature_zero_override_turns_the_tasks_sampling_off():
    assert _player_kwargs({"temperature": 0})["do_sample"] is False
    assert _player_kwargs({"temperature": 0.0})["temperature"] == 0.0
    assert _player_kwargs({"temperature": "0"})["do_sample"] is False
    assert _player_kwargs({"temperature": 0.5})["do_sample"] is True  # a positive temperature keeps sampling
    assert _player_kwargs(None)["do_sample"] is True
    judge = merged_gen_kwargs(SamplingTask(), Request(messages=[], role="judge"), None, {"temperature": 0})
    assert judge["do_sample"] is False


def test_temperature_zero_reaches_hf_as_greedy_without_a_temperature():
    """lm-eval's HFLM._model_generate with the merged kwargs: transformers gets do_sample=False and no
    temperature (a temperature of 0 with do_sample=True is the error the issue reports)."""
    import torch
    from lm_eval.models.huggingface import HFLM

    seen = {}

    class Model:
        def generate(self, **kwargs):
            seen.update(kwargs)
            return kwargs["input_ids"]

    fake = SimpleNamespace(model=Model(), tokenizer=SimpleNamespace(pad_token_id=0), device=torch.device("cpu"), mixed_precision_dtype=None)
    kwargs = _player_kwargs({"temperature": 0})
    kwargs.pop("max_gen_toks")
    HFLM._model_generate(fake, torch.tensor([[1, 2]]), 8, [], **kwargs)
    assert seen["do_sample"] is False and "temperature" not in seen


def test_temperature_zero_reaches_chat_apis_as_temperature_zero():
    from lm_eval.models.openai_completions import LocalChatCompletion

    fake = SimpleNamespace(model="m", _max_gen_toks=256)
    payload = LocalChatCompletion._create_payload(
        fake, [{"role": "user", "content": "1"}], generate=True, gen_kwargs=_player_kwargs({"temperature": 0})
    )
    assert payload["temperature"] == 0 and "do_sample" not in payload


def test_temperature_zero_with_do_sample_true_is_a_user_error(tmp_path):
    proc = subprocess.run(
        HELPER + ["play", "--model", "scripted-count", "--tasks", "count_test", "--gen_kwargs", "temperature=0,do_sample=True"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "temperature=0 means greedy" in proc.stderr and "Traceback" not in proc.stderr


def _env(**extra) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _payload(**n_failed) -> dict:
    results = {t: {"alias": t, "n_failed": n} for t, n in n_failed.items()}
    return {"results": results, "n-samples": {t: {"original": 4, "effective": 4 - n} for t, n in n_failed.items()}}


def test_failure_summary_is_one_line_with_counts_tasks_and_the_resume_command():
    argv = ["play", "--tasks", "a,b", "--output_path", "out dir", "--overwrite"]
    line, none_finished = failure_summary(_payload(a=2, b=0, c=1), argv)
    assert (
        not none_finished
        and "\n" not in line
        and line.startswith("triangulate play: 3 of 12 episodes failed on backend errors (a: 2, c: 1)")
    )
    assert line.endswith("resume with: triangulate play --tasks a,b --output_path 'out dir'")  # resuming, not --overwrite
    assert failure_summary(_payload(a=0), argv) is None


def test_every_episode_failing_is_an_error():
    payload = _payload(a=4)
    payload["results"]["a"]["first_error"] = "ConnectionError: backend down"
    line, none_finished = failure_summary(payload, ["play", "--tasks", "a"])
    assert none_finished and re.match("every episode failed.*ConnectionError: backend down.*resume with: triangulate play", line)


def test_play_with_a_dead_backend_exits_2_with_one_line(tmp_path):
    args = ["play", "--model", "scripted-broken", "--tasks", "count_test", "--limit", "2", "--retries", "1", "--output_path", str(tmp_path)]
    proc = subprocess.run(HELPER + args, env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("triangulate: error:")]
    assert len(errors) == 1 and "every episode failed on backend errors (2: count_test: 2)" in errors[0] and "backend down" in errors[0]
    assert "Traceback" not in proc.stderr


def test_groups_are_written_under_results_and_groups_as_lm_eval_does():
    from lm_eval.result_schema import _TaskMetrics

    from multiturn import registry

    if "count_pair" not in registry.group_names():
        registry.register("count_a")(lambda: _named(CountTask(n_episodes=3), "count_a"))
        registry.register("count_b")(lambda: _named(CountTask(n_episodes=2), "count_b"))
        registry.register_group("count_pair", ["count_a", "count_b"])
    lm = ScriptedLM(lambda m: echo_last(m) if len(m) % 4 else "x")
    payload, _ = run_tasks(play_settings(["count_pair"]), {"player": lm}, progress=False)
    a, b = payload["results"]["count_a"], payload["results"]["count_b"]
    group = payload["results"]["count_pair"]
    assert payload["groups"]["count_pair"] == group  # the same entry in both places
    assert payload["group_subtasks"] == {"count_pair": ["count_a", "count_b"]}
    assert group["accuracy,none"] == pytest.approx((a["accuracy,none"] + b["accuracy,none"]) / 2)
    for entry in (a, b, group):
        assert _TaskMetrics.__required_keys__ <= set(entry)  # name, alias, sample_len
    assert (a["sample_len"], b["sample_len"], group["sample_len"]) == (3, 2, 5)
    assert group["sample_count"] == {"accuracy,none": 5} and payload["versions"]["count_pair"] == "N/A"
    solo, _ = run_tasks(play_settings(["count_a"]), {"player": lm}, progress=False)
    assert "groups" not in solo and solo["group_subtasks"] == {}  # lm-eval: no `groups` without a group


def _named(task, name):
    task.name = name
    return task


def test_embedded_model_results_folder_is_named_after_the_model(monkeypatch, tmp_path):
    from models.default_model import DEFAULT_MODEL_NAME
    from multiturn import cli as play_cli
    from tests.support.engine_helpers import register_test_task_and_model

    register_test_task_and_model()
    seen = {}

    def fake_load(backend, **kw):
        seen["model_args"] = dict(backend.args)
        return ScriptedLM(echo_last)

    monkeypatch.setattr("multiturn.cli.load_lm", fake_load)  # play loads through the name it imported
    parser = play_cli.add_parser(__import__("argparse").ArgumentParser().add_subparsers())
    args = parser.parse_args(["--tasks", "count_test", "--output_path", str(tmp_path), "--limit", "1"])
    assert play_cli.run(args) == 0
    [results] = (tmp_path / DEFAULT_MODEL_NAME).glob("results_*.json")
    payload = json.loads(results.read_text())
    assert payload["model_name"] == DEFAULT_MODEL_NAME == payload["model_name_sanitized"]
    assert [p.name for p in tmp_path.iterdir()] == [DEFAULT_MODEL_NAME]
    assert "gguf_file" in seen["model_args"]  # the embedded model's defaults, resolved once (PlaySettings) before loading


def test_eval_of_the_embedded_model_lands_in_the_folder_named_after_the_model(tmp_path):
    from lm_eval.utils import sanitize_model_name

    from models.default_model import DEFAULT_MODEL_NAME, smollm2_dir
    from triangulation.cli.eval import adopt_default_model_folder

    written = tmp_path / sanitize_model_name(str(smollm2_dir()))  # where lm-eval's tracker puts it
    written.mkdir()
    (written / "results_2026-01-01T00-00-00.json").write_text(json.dumps({"model_name": str(smollm2_dir()), "results": {}}))
    (written / "samples_x_2026-01-01T00-00-00.jsonl").write_text("{}\n")
    assert adopt_default_model_folder(tmp_path) == tmp_path / DEFAULT_MODEL_NAME
    assert sorted(p.name for p in tmp_path.iterdir()) == [DEFAULT_MODEL_NAME]
    results = json.loads((tmp_path / DEFAULT_MODEL_NAME / "results_2026-01-01T00-00-00.json").read_text())
    assert results["model_name"] == results["model_name_sanitized"] == DEFAULT_MODEL_NAME
    assert (tmp_path / DEFAULT_MODEL_NAME / "samples_x_2026-01-01T00-00-00.jsonl").is_file()


@pytest.mark.slow
def test_temperature_zero_on_the_embedded_model_plays_greedy_and_names_the_folder_after_the_model(upstream, built_data, tmp_path):
    """The issue's command: the task samples at temperature 1 (do_sample=True); the override makes it greedy."""
    from models.default_model import DEFAULT_MODEL_NAME

    cmd = [sys.executable, "-m", "triangulation", "play", "--tasks", "nback_verbal_1", "--limit", "1"]
    cmd += ["--gen_kwargs", "temperature=0,max_gen_toks=4", "--output_path", str(tmp_path)]
    proc = subprocess.run(cmd, env=_env(OMP_NUM_THREADS=1), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [p.name for p in tmp_path.iterdir()] == [DEFAULT_MODEL_NAME]
    [results] = (tmp_path / DEFAULT_MODEL_NAME).glob("results_*.json")
    payload = json.loads(results.read_text())
    assert payload["results"]["nback_verbal_1"]["n_failed"] == 0 and payload["n-samples"]["nback_verbal_1"]["effective"] == 1
    assert payload["config"]["gen_kwargs"] == {"temperature": 0, "max_gen_toks": 4}


def test_play_twice_writes_one_results_file_and_the_second_play_loads_no_model(monkeypatch, tmp_path, capsys):
    """A resume with nothing left to play loads no model and writes no second results file (it says so);
    a run that asks for more episodes loads the model and writes a new one."""
    from multiturn import cli as play_cli
    from tests.support.engine_helpers import register_test_task_and_model

    register_test_task_and_model()
    loads = []

    def fake_load(backend, **kw):
        loads.append(backend.model)
        return ScriptedLM(echo_last)

    monkeypatch.setattr("multiturn.cli.load_lm", fake_load)  # play loads through the name it imported
    parser = play_cli.add_parser(__import__("argparse").ArgumentParser().add_subparsers())

    def play(limit: str) -> str:
        args = parser.parse_args(["--model", "scripted", "--tasks", "count_test", "--output_path", str(tmp_path), "--limit", limit])
        assert play_cli.run(args) == 0
        return capsys.readouterr().out

    play("2")
    [first] = (tmp_path / "scripted").glob("results_*.json")
    lm_eval = tmp_path / "scripted" / "results_2099-01-01T00-00-00.json"  # a later lm-eval run of the model, other tasks
    lm_eval.write_text(json.dumps({"results": {"lm_pragmatics": {"acc,none": 0.25}}, "config": {"model": "hf"}}))
    out = play("2")
    assert "nothing left to play" in out and "no model loaded" in out and str(first) in out
    assert sorted((tmp_path / "scripted").glob("results_*.json")) == sorted([first, lm_eval]) and loads == ["scripted"]
    lm_eval.unlink()
    play("3")  # one more episode: the model loads, a new results file holds the three
    files = sorted((tmp_path / "scripted").glob("results_*.json"))
    assert len(files) == 2 and loads == ["scripted", "scripted"]
    assert json.loads(files[-1].read_text())["n-samples"]["count_test"]["effective"] == 3
