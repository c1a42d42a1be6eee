"""A report over real runs: scripted models through lm-eval's own evaluator and through the play
engine (fast), plus the embedded SmolLM2 model on globalgroup_zh --limit 2 (slow)."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from datasets_build import prompts as P
from lm_eval_tasks import TASKS_DIR
from models.scripted import ScriptedLM
from tests.support.built_data import use_built_data
from tests.triangulation.test_report_fakes import run_report

LM_EVAL_TASKS = ["globalgroup_zh", "globalgroup_zh_en", "connections"]


@functools.lru_cache(maxsize=1)
def task_manager():
    """Our task folder only: indexing lm-eval's ~27k bundled YAMLs costs 30-60 s on this machine."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(TASKS_DIR), include_defaults=False)


def lm_eval_run(lm, model_args: str, tasks: list[str], limit: int, out: Path, gen_kwargs: str | None = None) -> Path:
    """Run tasks as `lm_eval --output_path out --log_samples` does (tracker, aggregated + samples files)."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker

    tracker = EvaluationTracker(output_path=str(out))
    results = simple_evaluate(
        model=lm,
        model_args=model_args,
        tasks=tasks,
        task_manager=task_manager(),
        limit=limit,
        log_samples=True,
        apply_chat_template=True,
        bootstrap_iters=0,
        evaluation_tracker=tracker,
        gen_kwargs=gen_kwargs,
    )
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    for task in results["configs"]:
        tracker.save_results_samples(task_name=task, samples=samples[task])
    return out


def play_run(lm, model_args: str, tasks: list[str], out: Path, folder: str) -> Path:
    """Run multi-turn tasks as `triangulate play --limit 1 --output_path out` does."""
    from multiturn.engine.runner import run_tasks
    from tests.support.play_settings import play_settings

    settings = play_settings(tasks, "scripted", model_args, out, limit=1)
    assert settings.folder() == folder
    _payload, path = run_tasks(settings, {"player": lm, "player_b": lm, "judge": lm}, progress=False)
    return path


def _line(topic: str, words: list[str]) -> str:
    return f"<{topic}>: {json.dumps(words, ensure_ascii=False)}"


def responders(docs: list[dict[str, Any]]) -> tuple[Callable, Callable]:
    """``oracle`` answers every grouping prompt with the gold groups and says "-" in n-back; ``partial``
    gets the first two groups right, swaps a word between the last two, and says "m" in n-back."""
    by_prompt = {}
    for doc in docs:
        text = P.connections_doc_to_text(doc) if "game_id" in doc else P.globalgroup_doc_to_text(doc)
        by_prompt[text] = doc

    def oracle(messages):
        doc = by_prompt.get(messages[-1]["content"])
        if doc is None:
            return "-"
        return P.connections_doc_to_target(doc) if "game_id" in doc else P.globalgroup_doc_to_target(doc)

    def partial(messages):
        doc = by_prompt.get(messages[-1]["content"])
        if doc is None:
            return "m"
        groups = [list(g["words"]) for g in doc["groups"]]
        groups[2][0], groups[3][0] = groups[3][0], groups[2][0]
        return "\n".join(_line(g["topic"], w) for g, w in zip(doc["groups"], groups))

    return oracle, partial


def scripted_runs(root: Path) -> None:
    from datasets_build.load import load_connections, load_globalgroup

    docs = [dict(d) for c in ("zh_4x4", "zh_en_4x4") for d in load_globalgroup(config=c)["test"].select(range(3))]
    docs += [dict(d) for d in load_connections()["test"].select(range(3))]
    oracle, partial = responders(docs)
    for name, respond in (("oracle", oracle), ("partial", partial)):
        args = f"pretrained=scripted/{name}"
        lm_eval_run(ScriptedLM(respond), args, LM_EVAL_TASKS, 3, root / "lm_eval")
        play_run(ScriptedLM(respond), args, ["nback_verbal_3_triangulating"], root / "play", f"scripted__{name}")


@pytest.fixture
def built(upstream, monkeypatch):
    return use_built_data(upstream, monkeypatch)


def test_report_over_real_scripted_runs(built, tmp_path):
    scripted_runs(tmp_path / "runs")
    out = tmp_path / "report"
    assert run_report([str(tmp_path / "runs"), "--out", str(out)]) == 0
    scores = pd.read_csv(out / "scores.csv", index_col=0)
    assert set(scores.index) == {"scripted/oracle", "scripted/partial"}
    assert {"globalgroup_zh", "globalgroup_zh_en", "connections", "nback_verbal_3_triangulating"} <= set(scores.columns)
    assert scores.loc["scripted/oracle", "globalgroup_zh"] == 1.0
    assert 0.5 < scores.loc["scripted/partial", "globalgroup_zh"] < 1.0
    assert scores.loc["scripted/oracle", "connections"] == 4.0 and scores.loc["scripted/partial", "connections"] == 2.0
    f1 = pd.read_csv(out / "globalgroup_f1.csv", index_col=0)
    assert list(f1.columns) == ["zh", "zh_en"]
    assert (pd.read_csv(out / "globalgroup_native_vs_english.csv", index_col=0)["zh - zh_en"].abs() < 1).all()
    dist = pd.read_csv(out / "connections_score_distribution.csv", index_col=0)
    assert dist.loc["scripted/oracle", "4"] == 3 and dist.loc["scripted/partial", "2"] == 3
    tags = pd.read_csv(out / "globalgroup_tags.csv", index_col=0)
    assert (tags["scripted/oracle"] == 1.0).all() and len(tags) >= 2
    assert (out / "report.html").stat().st_size > 10_000


@pytest.mark.slow
def test_report_with_smollm2(built, smollm2, tmp_path):
    """Three models: SmolLM2 on globalgroup_zh --limit 2 (real generation) and the two scripted ones."""
    from models.default_model import default_model_args

    runs = tmp_path / "runs"
    scripted_runs(runs)
    # 128 new tokens (the task allows 512) keeps the test cheap: 4 groups of 4 Chinese words fit
    lm_eval_run(smollm2, default_model_args(device="cpu"), ["globalgroup_zh"], 2, runs / "smollm2", gen_kwargs="max_gen_toks=128")
    out = tmp_path / "report"
    assert run_report([str(runs), "--out", str(out)]) == 0
    scores = pd.read_csv(out / "scores.csv", index_col=0)
    assert set(scores.index) == {"scripted/oracle", "scripted/partial", "SmolLM2-135M-Instruct-Q4_1"}
    assert not math.isnan(scores.loc["SmolLM2-135M-Instruct-Q4_1", "globalgroup_zh"])
    f1 = pd.read_csv(out / "globalgroup_f1.csv", index_col=0)
    assert len(f1) == 3
    assert (out / "globalgroup_pca.png").is_file()
    html = (out / "report.html").read_text(encoding="utf-8")
    # only globalgroup_zh has all three models: no pair of benchmarks shares 3, so a sentence, not a heatmap
    assert not (out / "kendall_heatmap.png").exists()
    assert "3 models common to two benchmarks, has 2" in html  # listed under Skipped, no empty heatmap
    assert "SmolLM2-135M-Instruct-Q4_1" in html and html.lower().count("<script") == 1  # the sort script only
