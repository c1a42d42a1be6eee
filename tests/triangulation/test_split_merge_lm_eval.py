"""Merging split lm-eval groups over lm-eval 0.4.13's real task index (issue 37, item 1).

The shipped battery splits ``mmlu``, whose categories (``mmlu_stem``, ...) list TAGs (``mmlu_stem_tasks``):
the old merge walked GROUP members only, so every category had 0 samples and the merged ``mmlu`` row was
``{'sample_len': 0}``. These tests merge synthetic leaf results through the real group trees of lm-eval's
own index and check every group against the rule computed by hand here (lm-eval 0.4.13,
``lm_eval/api/group.py`` ``Group.aggregate``: every leaf below the group; ``weight_by_size`` true: the
sample-weighted mean with the pooled stderr, false: the plain mean with sqrt(sum se^2)/k).
"""

from __future__ import annotations

import math
import random

import pytest

from plumbing.errors import UserError
from triangulation.suite import split, task_index
from triangulation.suite.spec import TaskEntry


def _leaf_payload(name: str, rng: random.Random, metric: str, key: str) -> dict:
    n = rng.randint(5, 300)
    return {
        "results": {
            name: {
                "alias": name,
                "name": name,
                "sample_len": n,
                f"{metric},{key}": rng.random(),
                f"{metric}_stderr,{key}": rng.uniform(0.01, 0.1),
            }
        },
        "configs": {name: {"task": name}},
        "versions": {name: 1.0},
        "n-shot": {name: 5},
        "higher_is_better": {name: {metric: True}},
        "n-samples": {name: {"original": n, "effective": n}},
        "config": {"model": "m"},
    }


def _merge(group: str, metric: str = "acc", key: str = "none", seed: int = 0) -> dict:
    rng = random.Random(seed)
    payloads = [_leaf_payload(leaf, rng, metric, key) for leaf in task_index.eval_leaves([group])]
    out = split._union(payloads)
    split._eval_groups(out, task_index.groups(group))  # the trees split_group keeps for the merge
    return out


def _weighted(out: dict, leaves: list[str], metric: str, key: str = "none") -> tuple[float, float]:
    rows = [out["results"][leaf] for leaf in leaves]
    n = [r["sample_len"] for r in rows]
    value = sum(r[f"{metric},{key}"] * k for r, k in zip(rows, n)) / sum(n)
    var = sum((k - 1) * r[f"{metric}_stderr,{key}"] ** 2 * k for r, k in zip(rows, n)) / (sum(n) - len(n))
    return value, math.sqrt(var / sum(n))


def _unweighted(out: dict, leaves: list[str], metric: str, key: str = "none") -> tuple[float, float]:
    rows = [out["results"][leaf] for leaf in leaves]
    value = sum(r[f"{metric},{key}"] for r in rows) / len(rows)
    return value, math.sqrt(sum(r[f"{metric}_stderr,{key}"] ** 2 for r in rows)) / len(rows)


def _tag_members(tag: str) -> list[str]:
    return sorted(task_index.task_manager(True).task_index[tag].tags)


def test_mmlu_merged_from_57_leaves_equals_the_rule_over_every_leaf_and_its_tag_categories():
    out = _merge("mmlu")
    leaves = task_index.eval_leaves(["mmlu"])
    assert len(leaves) == 57
    value, stderr = _weighted(out, leaves, "acc")
    assert out["results"]["mmlu"]["acc,none"] == pytest.approx(value, abs=1e-12)
    assert out["results"]["mmlu"]["acc_stderr,none"] == pytest.approx(stderr, abs=1e-12)
    assert out["results"]["mmlu"]["sample_len"] == sum(out["results"][leaf]["sample_len"] for leaf in leaves)
    for category in ("stem", "other", "social_sciences", "humanities"):
        members = _tag_members(f"mmlu_{category}_tasks")
        assert members, category
        value, stderr = _weighted(out, members, "acc")
        row = out["results"][f"mmlu_{category}"]
        assert row["acc,none"] == pytest.approx(value, abs=1e-12) and row["acc_stderr,none"] == pytest.approx(stderr, abs=1e-12)
        assert sorted(out["group_subtasks"][f"mmlu_{category}"]) == members
    assert set(out["groups"]) == {"mmlu", "mmlu_stem", "mmlu_other", "mmlu_social_sciences", "mmlu_humanities"}
    assert out["group_subtasks"]["mmlu"] == ["mmlu_stem", "mmlu_other", "mmlu_social_sciences", "mmlu_humanities"]
    version = task_index.task_manager(True).task_index["mmlu"].cfg["metadata"]["version"]
    assert out["versions"]["mmlu"] == str(version)
    # lm-eval propagates n-shot and higher_is_better parents first (evaluator_utils._propagate_*), so the
    # categories get them from their leaves and ``mmlu`` itself does not: the unsplit run writes the same
    assert out["n-shot"]["mmlu_stem"] == 5 and out["higher_is_better"]["mmlu_stem"] == {"acc": True}
    assert "mmlu" not in out["n-shot"]
    assert set(out["n-samples"]) == set(leaves)  # lm-eval counts samples of leaves only


@pytest.mark.parametrize("group", ["leaderboard_bbh", "natural_plan", "simpletom_attribution_judgment"])
def test_battery_groups_merged_as_lm_eval_aggregates_them(group):
    cfg = task_index.task_manager(True).task_index[group].cfg
    metrics = [(a["metric"], a.get("weight_by_size", True)) for a in cfg.get("aggregate_metric_list") or []]
    leaves = task_index.eval_leaves([group])
    assert len(leaves) >= 2
    if not metrics:  # no aggregate_metric_list: lm-eval reports the group with no score, and so do we
        out = _merge(group)
        assert group not in out.get("groups", {}) and out["results"][group]["alias"]
        return
    for metric, by_size in metrics:
        out = _merge(group, metric)
        value, stderr = (_weighted if by_size else _unweighted)(out, leaves, metric)
        assert out["results"][group][f"{metric},none"] == pytest.approx(value, abs=1e-12)
        assert out["results"][group][f"{metric}_stderr,none"] == pytest.approx(stderr, abs=1e-12)
        assert group in out["groups"]


def test_a_weight_by_size_false_group_takes_the_plain_mean_and_its_own_stderr():
    cfg = task_index.task_manager(True).task_index["blimp"].cfg
    assert cfg["aggregate_metric_list"][0]["weight_by_size"] is False
    out = _merge("blimp")
    leaves = task_index.eval_leaves(["blimp"])
    value, stderr = _unweighted(out, leaves, "acc")
    assert out["results"]["blimp"]["acc,none"] == pytest.approx(value, abs=1e-12)
    assert out["results"]["blimp"]["acc_stderr,none"] == pytest.approx(stderr, abs=1e-12)
    weighted, pooled = _weighted(out, leaves, "acc")
    assert abs(weighted - value) > 1e-6 and abs(pooled - stderr) > 1e-9  # the two rules differ on these sizes


def test_inline_subgroups_are_split_and_merged_under_lm_eval_names():
    out = _merge("mmlu_generative", "exact_match", "get_response")
    assert "mmlu_generative::stem" in out["groups"]
    leaves = [t.task_name for t in task_index.groups("mmlu_generative")["mmlu_generative::stem"].get_all_tasks()]
    cfg = task_index.task_manager(True).task_index["mmlu_generative"].cfg
    by_size = cfg["aggregate_metric_list"][0].get("weight_by_size", True)
    value, _ = (_weighted if by_size else _unweighted)(out, leaves, "exact_match", "get_response")
    assert out["results"]["mmlu_generative::stem"]["exact_match,get_response"] == pytest.approx(value, abs=1e-12)


def test_groups_whose_leaves_would_run_differently_alone_are_refused_in_one_line():
    # openllm passes arc_challenge its own num_fewshot; flan_held_in defines tasks inline
    for group in ("openllm", "flan_held_in"):
        why = task_index.split_refusal(group)
        assert why, group
        with pytest.raises(UserError) as err:
            split.leaf_tasks(TaskEntry(group, "eval", (group,), {"split": True}))
        assert "\n" not in str(err.value) and "drop split" in str(err.value)
    assert task_index.split_refusal("mmlu") is None and task_index.split_refusal("leaderboard_bbh") is None
    # unsplit, the same groups are simply run by lm-eval: no refusal
    assert split.leaf_tasks(TaskEntry("o", "eval", ("openllm",), {})) == task_index.eval_leaves(["openllm"])
