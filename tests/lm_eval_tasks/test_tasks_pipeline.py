"""The tasks through lm-eval's real evaluator with a scripted model (fast; the SmolLM2 run is in test_tasks_e2e)."""

from __future__ import annotations

import math

import pytest

from datasets_build import prompts as P
from models.scripted import ScriptedLM
from tests.support.built_data import task_manager, use_built_data


@pytest.fixture
def built(upstream, monkeypatch):
    import lm_eval.evaluator

    monkeypatch.setattr(lm_eval.evaluator, "add_env_info", lambda results: None)  # `pip list` etc.: seconds per run
    return use_built_data(upstream, monkeypatch)


def _gold_by_prompt(task_docs, doc_to_text, doc_to_target):
    return {doc_to_text(d): doc_to_target(d) for d in task_docs}


def _evaluate(tasks, respond, limit):
    from lm_eval import simple_evaluate

    lm = ScriptedLM(respond)
    out = simple_evaluate(
        model=lm, tasks=tasks, task_manager=task_manager(include_defaults=False), limit=limit, apply_chat_template=True, bootstrap_iters=0
    )
    return out["results"], lm


def test_perfect_and_empty_answers(built):
    from datasets_build.load import load_connections, load_globalgroup

    zh = load_globalgroup(config="zh_4x4")["test"].select(range(3))
    con = load_connections()["test"].select(range(3))
    gold = _gold_by_prompt(zh, P.globalgroup_doc_to_text, P.globalgroup_doc_to_target)
    gold.update(_gold_by_prompt(con, P.connections_doc_to_text, P.connections_doc_to_target))

    def perfect(messages):
        return gold[messages[-1]["content"]]

    results, lm = _evaluate(["globalgroup_zh", "connections"], perfect, 3)
    assert lm.requests_seen == 6
    gg, cn = results["globalgroup_zh"], results["connections"]
    assert gg["group_f1,none"] == 1.0 and gg["ctd,none"] == 1.0 and gg["solved,none"] == 1.0 and gg["parsed,none"] == 1.0
    assert "topic_achieved,none" in gg
    assert cn["unweighted_clustering,none"] == 4.0 and cn["weighted_clustering,none"] == 10.0
    assert cn["perfect_solve,none"] == 1.0 and "category_reasoning,none" in cn

    results, _ = _evaluate(["globalgroup_zh", "connections"], lambda messages: "", 2)
    gg, cn = results["globalgroup_zh"], results["connections"]
    assert gg["group_f1,none"] == 0.0 and gg["solved,none"] == 0.0 and gg["parsed,none"] == 0.0
    assert cn["unweighted_clustering,none"] == 0.0 and cn["perfect_solve,none"] == 0.0


def test_overlap_task_scores_the_published_response_like_the_paper(built):
    """Answering with the authors' own GPT-4o-mini response gives back the published overlap and length."""
    from datasets_build.load import load_globalgroup

    docs = load_globalgroup(config="en_4x4")["test"].select(range(4))
    published = {d["canprop_prompt"]: d["canprop_response"] for d in docs}
    results, _ = _evaluate(["globalgroup_overlap_en"], lambda m: published[m[-1]["content"]], 4)
    res = results["globalgroup_overlap_en"]
    assert math.isclose(res["overlap,none"], sum(d["canprop_overlap"] for d in docs) / 4, abs_tol=1e-9)
    assert math.isclose(res["length,none"], sum(d["canprop_length"] for d in docs) / 4, abs_tol=1e-9)


def test_group_aggregates_over_headline_tasks(built):
    from datasets_build.load import load_globalgroup

    subsets = ["en", "es", "es_en", "zh", "zh_en", "hi", "hi_en", "ar", "ar_en", "nyt_shuf", "nyt_seq"]
    gold = {}
    for s in subsets:
        gold.update(
            _gold_by_prompt(
                load_globalgroup(config=f"{s}_4x4")["test"].select(range(1)), P.globalgroup_doc_to_text, P.globalgroup_doc_to_target
            )
        )
    # perfect on English-instruction subsets, empty elsewhere: the group mean is the share of the former
    results, lm = _evaluate(["globalgroup"], lambda m: gold[m[-1]["content"]] if m[-1]["content"].startswith("I am") else "", 1)
    assert lm.requests_seen == 11
    assert math.isclose(results["globalgroup"]["group_f1,none"], 7 / 11)


def test_few_shot_examples_come_from_dev_with_gold_answers(built):
    from lm_eval import simple_evaluate

    from datasets_build.load import load_globalgroup

    dev = load_globalgroup(config="en_2x2")["dev"]
    dev_gold = {P.globalgroup_doc_to_text(d): P.globalgroup_doc_to_target(d) for d in dev}
    seen = []

    def respond(messages):
        seen.append(messages)
        return ""

    simple_evaluate(
        model=ScriptedLM(respond),
        tasks=["globalgroup_en_2x2"],
        num_fewshot=2,
        limit=1,
        task_manager=task_manager(include_defaults=False),
        apply_chat_template=True,
        fewshot_as_multiturn=True,
        bootstrap_iters=0,
    )
    (messages,) = seen
    turns = [m for m in messages if m["role"] in ("user", "assistant")]
    assert [m["role"] for m in turns] == ["user", "assistant", "user", "assistant", "user"]
    for question, answer in ((turns[0], turns[1]), (turns[2], turns[3])):
        assert dev_gold[question["content"]] == answer["content"]  # a dev game and its gold answer
    assert turns[-1]["content"] not in dev_gold  # the test game itself


def test_fresh_generated_games_run_through_the_same_task(built, tmp_path):
    """`triangulate data generate` output plugs into globalgroup_zh via lm-eval metadata ``path``."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from datasets_build.load import load_globalgroup
    from lm_eval_tasks import TASKS_DIR
    from triangulation.cli.main import main

    out = tmp_path / "fresh"
    assert main(["data", "generate", "--benchmark", "globalgroup", "--subset", "zh", "--seed", "7", "--out", str(out)]) == 0
    fresh = load_globalgroup(config="zh_4x4", path=str(out))
    assert len(fresh["dev"]) == 300  # few-shot examples come from the built dev split
    gold = {P.globalgroup_doc_to_text(d): P.globalgroup_doc_to_target(d) for d in fresh["test"].select(range(2))}
    tm = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata={"path": str(out)})
    lm = ScriptedLM(lambda m: gold[m[-1]["content"]])
    res = simple_evaluate(model=lm, tasks=["globalgroup_zh"], task_manager=tm, limit=2, apply_chat_template=True, bootstrap_iters=0)[
        "results"
    ]["globalgroup_zh"]
    assert lm.requests_seen == 2 and res["solved,none"] == 1.0


def test_documented_paper_sampling_variant_reaches_the_model(built):
    """Seed 000 App. B (Llama-3-8B-Instruct, Mistral-7B-Instruct-v0.2): "do_sample: True, top_k: 50,
    top_p: 0.9, temperature: 0.6". The task the README documents for it (`globalgroup_<subset>_sampled`, issue 41
    item 4), run through lm-eval's evaluator, must reach the model with exactly those settings plus the task's own
    `until: []` and `max_gen_toks: 512` (new tokens; the paper's max_length also counted the prompt, README)."""
    from lm_eval import simple_evaluate

    from lm_eval_tasks import TASKS_DIR

    readme = (TASKS_DIR / "globalgroup" / "README.md").read_text(encoding="utf-8")
    assert "`globalgroup_<subset>_sampled`" in readme and "temperature: 0.6" in readme
    seen = []

    class Capturing(ScriptedLM):
        def generate_until(self, requests, disable_tqdm: bool = False):
            seen.extend(dict(r.args[1]) for r in requests)
            return super().generate_until(requests, disable_tqdm)

    simple_evaluate(
        model=Capturing(lambda m: ""),
        tasks=["globalgroup_en_sampled"],
        task_manager=task_manager(include_defaults=False),
        limit=1,
        apply_chat_template=True,
        bootstrap_iters=0,
    )
    assert seen == [{"until": [], "do_sample": True, "temperature": 0.6, "top_k": 50, "top_p": 0.9, "max_gen_toks": 512}]
