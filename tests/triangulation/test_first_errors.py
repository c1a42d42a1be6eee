"""What a new user's first mistakes print (issue 32): a missing local model and a misspelt task are one short
line with the closest names, before lm-eval indexes its tasks or loads a model, and leave no empty output folder."""

from __future__ import annotations

import pytest

from triangulation.cli.main import main


@pytest.fixture
def no_lm_eval_run(monkeypatch):
    """lm-eval's task index and run fail the test if reached: the checks must come first."""
    from lm_eval._cli import HarnessCLI
    from lm_eval.tasks import TaskManager

    def reached(*args, **kwargs):
        raise AssertionError("lm-eval was started before the argument checks")

    monkeypatch.setattr(TaskManager, "__init__", reached)
    monkeypatch.setattr(HarnessCLI, "execute", reached)


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_eval_with_a_missing_local_model_is_one_line_and_leaves_no_folder(tmp_path, capsys, no_lm_eval_run):
    out = tmp_path / "out"
    argv = [
        "eval",
        "--model",
        "hf",
        "--model_args",
        "pretrained=/nonexistent/model",
        "--tasks",
        "globalgroup_zh",
        "--output_path",
        str(out),
    ]
    assert main(argv) == 2
    err = one_line(capsys)
    assert "/nonexistent/model does not exist" in err and "Repo id" not in err
    assert not out.exists()


def test_eval_with_a_misspelt_task_suggests_the_closest_and_leaves_no_folder(tmp_path, capsys, no_lm_eval_run):
    out = tmp_path / "out"
    assert main(["eval", "--model", "random", "--tasks", "globalgroup_zhh", "--output_path", str(out)]) == 2
    err = one_line(capsys)
    assert "'globalgroup_zhh' (did you mean globalgroup_zh" in err and "triangulate eval ls tasks" in err
    assert len(err) < 300 and not out.exists()


@pytest.mark.parametrize("name", ["hellaswag", "mmlu", "flores_afr-eng", "acp_bench_hard", "bertaqa", "lm_pragmatics", "globalgroup"])
def test_the_task_check_passes_names_lm_eval_knows(name):
    """Built-in tasks, groups and tags (some only written as a prefix or in extension-less YAML files) and ours."""
    from triangulation.cli.eval import include_paths
    from triangulation.cli.eval_checks import check_task_names

    check_task_names(name, include_paths(None))


def test_play_with_a_missing_local_model_says_the_folder_does_not_exist(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["play", "--model", "hf", "--model_args", "pretrained=/nonexistent/model", "--tasks", "wcst", "--output_path", str(out)]
    assert main(argv) == 2
    err = one_line(capsys)
    assert "/nonexistent/model does not exist" in err and "Repo id" not in err
    assert not out.exists()


def test_play_with_a_misspelt_task_suggests_the_closest_without_the_whole_list(tmp_path, capsys):
    assert main(["play", "--tasks", "wcts", "--output_path", str(tmp_path / "out")]) == 2
    err = one_line(capsys)
    assert "'wcts' (did you mean wcst" in err and "triangulate play --tasks list" in err
    assert len(err) < 200 and not (tmp_path / "out").exists()


def test_a_hub_id_is_not_taken_for_a_missing_folder():
    from models.args import check_local_model

    for value in ("HuggingFaceTB/SmolLM2-135M-Instruct", "gpt2"):
        check_local_model({"pretrained": value})
