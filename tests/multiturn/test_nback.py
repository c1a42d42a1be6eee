"""n-back tasks: upstream stimuli, the protocol's history, parse rule and metrics (Gong et al.)."""

from __future__ import annotations

import math
import re

import pytest

from datasets_build.nback import expected_targets, load_blocks
from models.scripted import ScriptedLM
from multiturn import registry
from multiturn.engine.runner import run_task
from multiturn.engine.scheduler import play_episodes
from multiturn.engine.settings import TaskSettings
from multiturn.games.nback import (
    abs_dprime_notebook,
    dprime,
    parse_response,
    score_trials,
)

NBACK_TASKS = [f"nback_{k}_{n}" for k in ("verbal", "spatial") for n in (1, 2, 3)] + ["nback_verbal_3_triangulating"]
CEILING = 2 * 2.3263478740408408  # z(0.99) - z(0.01)


def oracle(messages: list[dict]) -> str:
    """The perfect player: reads n from the system prompt and compares the stimuli it was shown."""
    n = int(re.search(r"perform a (\d)-back task", messages[0]["content"]).group(1))
    shown = [m["content"] for m in messages if m["role"] == "user"]
    return "m" if len(shown) > n and shown[-1] == shown[-1 - n] else "-"


def defect_free(task) -> list[dict]:
    """Blocks whose published targets all follow the n-back rule (see the off-by-one note below)."""
    return [i for i in task.instances(0) if i["targets"] == expected_targets(i["stimuli"], i["n"])]


def test_every_variant_is_registered_and_loads_50_blocks_of_24_trials_with_8_matches(upstream, built_data):
    assert set(NBACK_TASKS) <= set(registry.task_names())
    for kind in ("verbal", "spatial"):
        for n in (1, 2, 3):
            blocks = load_blocks(kind, n)
            assert len(blocks) == 50
            for stimuli, targets in blocks:
                assert len(stimuli) == 24 and targets.count("m") == 8
                # the upstream generator's off-by-one (`while i > n`) lets trial n repeat trial 0
                # while labelled '-'; the published targets stand, elsewhere they follow the rule
                wrong = [i for i in range(24) if targets[i] != expected_targets(stimuli, n)[i]]
                assert wrong in ([], [n]) and (not wrong or targets[n] == "-")


def test_verbal_stimuli_are_consonants_and_spatial_ones_are_grids(upstream, built_data):
    verbal = registry.get_task("nback_verbal_2").instances(0)
    assert all(set(i["stimuli"]) <= set("bcdfghjklmnpqrstvwxyz") for i in verbal)
    spatial = registry.get_task("nback_spatial_1").instances(0)
    assert spatial[0]["messages"][0].startswith("``` |") and spatial[0]["messages"][0].count("X") == 1
    assert "3*3 grids" in spatial[0]["system_prompt"]


@pytest.mark.parametrize("name", NBACK_TASKS)
def test_the_oracle_scores_accuracy_one_and_dprime_at_ceiling(upstream, built_data, name):
    task = registry.get_task(name)
    clean = defect_free(task)
    assert len(clean) >= 44
    records = play_episodes(task, clean, {"player": ScriptedLM(oracle)}, seed=0, progress=False, max_live=0)
    m = task.aggregate([r["scores"] for r in records])
    assert m["accuracy"] == 1.0 and m["hit_rate"] == 1.0 and m["false_alarm_rate"] == 0.0
    assert m["dprime"] == pytest.approx(CEILING)


def test_the_rule_oracle_loses_exactly_the_mislabelled_trials(upstream, built_data):
    task = registry.get_task("nback_spatial_2")
    records = play_episodes(task, task.instances(0)[:1], {"player": ScriptedLM(oracle)}, seed=0, progress=False)
    assert [t["correct"] for t in records[0]["trials"]].count(False) == 1  # block 0, trial 2
    assert records[0]["trials"][2]["target"] == "-" and records[0]["trials"][2]["parsed"] == "m"


@pytest.mark.parametrize("name", ["nback_verbal_1", "nback_spatial_3", "nback_verbal_3_triangulating"])
def test_always_dash_has_hit_rate_zero_and_accuracy_two_thirds(upstream, built_data, name):
    summary = run_task(TaskSettings(registry.get_task(name), limit=2), {"player": ScriptedLM(lambda m: "-")}, progress=False)
    m = summary["metrics"]
    assert m["hit_rate"] == 0.0 and m["false_alarm_rate"] == 0.0
    assert m["accuracy"] == pytest.approx(16 / 24)  # 16 of 24 trials are non-matches
    assert m["dprime"] == pytest.approx(0.0)


def test_garbage_is_a_miss_on_targets_and_a_false_alarm_on_the_others(upstream, built_data):
    """Gong et al.'s notebook (``compute_summary_stats``): on a non-target trial "``if not trial['correct']:
    false_alarms += 1``", so an invalid reply is a false alarm. Garbage on every trial: H = 0 -> 0.01,
    FA = 16/16 = 1 -> 0.99, d' = z(0.01) - z(0.99) = -4.6527. Our ``*_valid`` variant (only ``m`` is a false
    alarm): FA 0 -> 0.01, d' = z(0.01) - z(0.01) = 0."""
    summary = run_task(
        TaskSettings(registry.get_task("nback_verbal_2"), limit=1), {"player": ScriptedLM(lambda m: "I think so")}, progress=False
    )
    m = summary["metrics"]
    assert m["accuracy"] == 0.0 and m["parse_rate"] == 0.0
    assert m["hit_rate"] == 0.0 and m["false_alarm_rate"] == 1.0
    assert m["dprime"] == pytest.approx(-CEILING)
    assert m["false_alarm_rate_valid"] == 0.0 and m["dprime_valid"] == pytest.approx(0.0)


def test_original_protocol_keeps_replies_and_the_port_does_not(upstream, built_data):
    seen: list[list[dict]] = []

    def spy(messages):
        seen.append(messages)
        return "-"

    run_task(TaskSettings(registry.get_task("nback_verbal_3"), limit=1), {"player": ScriptedLM(spy)}, progress=False)
    last = seen[-1]
    assert [m["role"] for m in last[:4]] == ["system", "user", "assistant", "user"]
    assert len(last) == 1 + 2 * 23 + 1
    seen.clear()
    run_task(TaskSettings(registry.get_task("nback_verbal_3_triangulating"), limit=1), {"player": ScriptedLM(spy)}, progress=False)
    assert [m["role"] for m in seen[-1]] == ["system"] + ["user"] * 24


def test_gen_kwargs_follow_the_protocol(upstream, built_data):
    task = registry.get_task("nback_verbal_1")
    assert task.gen_kwargs["temperature"] == 1.0


def test_parse_rule():
    assert parse_response(" m ") == "m" and parse_response("'-'") == "-" and parse_response("M.") == "m"
    assert parse_response("`m`") == "m"
    assert parse_response("m -") is None and parse_response("match") is None and parse_response("") is None


def test_dprime_is_signed_with_clipped_rates():
    """Gong et al. (README "Metrics"): d' = z(H) - z(FA); rates of 0 or 1 adjusted by 0.01.

    Hand values (z(0.99) = 2.3263, z(0.01) = -2.3263, z(0.8) = 0.8416, z(0.2) = -0.8416):
    perfect H = 1, FA = 0 -> z(0.99) - z(0.01) = +4.6527; inverted H = 0, FA = 1 -> z(0.01) - z(0.99)
    = -4.6527 (it must not score like the perfect player); H = FA = 0.5 -> 0; H = 0.8, FA = 0.2 ->
    +1.6832; H = 0.2, FA = 0.8 -> -1.6832."""
    assert dprime(1.0, 0.0) == pytest.approx(CEILING)
    assert dprime(0.0, 1.0) == pytest.approx(-CEILING)
    assert dprime(0.5, 0.5) == 0.0
    assert dprime(0.8, 0.2) == pytest.approx(2 * 0.8416212335729143)
    assert dprime(0.2, 0.8) == pytest.approx(-2 * 0.8416212335729143)
    # Gong et al.'s notebooks take the absolute value: kept under its own name, for their figures only.
    assert abs_dprime_notebook(0.0, 1.0) == pytest.approx(CEILING)


def test_a_player_saying_m_exactly_on_non_matches_scores_negative_dprime():
    """Targets "mm--" and replies "--mm": H = 0/2 = 0 -> 0.01, FA = 2/2 = 1 -> 0.99, so
    d' = z(0.01) - z(0.99) = -4.6527 (the unsigned form gave +4.6527, like a perfect player)."""
    s = score_trials("mm--", ["-", "-", "m", "m"])
    assert s["hit_rate"] == 0.0 and s["false_alarm_rate"] == 1.0 and s["accuracy"] == 0.0
    assert s["dprime"] == pytest.approx(-CEILING)
    assert s["abs_dprime_notebook"] == pytest.approx(CEILING)


def test_score_trials_counts_hits_and_false_alarms():
    """Targets "mm--", replies m, -, m, invalid. Hits 1/2. Notebook rule (any wrong answer on a non-target
    is a false alarm): FA = 2/2 = 1 -> 0.99, d' = z(0.5) - z(0.99) = -2.3263. ``*_valid`` (only "m"):
    FA = 1/2, d' = 0."""
    s = score_trials("mm--", ["m", "-", "m", None])
    assert s["hit_rate"] == 0.5 and s["false_alarm_rate"] == 1.0 and s["accuracy"] == 0.25
    assert s["dprime"] == pytest.approx(-2.3263, abs=1e-4)
    assert s["false_alarm_rate_valid"] == 0.5 and math.isclose(s["dprime_valid"], 0.0, abs_tol=1e-12)
    assert s["parse_rate"] == 0.75


def test_published_gpt35_records_rescore_with_our_metrics(upstream, built_data):
    """Gong et al.'s raw GPT-3.5 verbal records: d' falls with n (their central finding), recomputed here."""
    import json

    raw = json.loads((upstream / "nback" / "ChatGPT-WM" / "results" / "all_trials_verbal.json").read_text())
    by_n = {}
    for n in (1, 2, 3):
        scores = [
            score_trials([t["target"] for t in raw[f"{n}back_{b}"]], [parse_response(t["response"]) for t in raw[f"{n}back_{b}"]])
            for b in range(50)
        ]
        by_n[n] = sum(s["dprime"] for s in scores) / 50
        # our per-trial correctness equals the published 'correct' flags
        assert all(
            parse_response(t["response"]) == t["target"] if t["correct"] else parse_response(t["response"]) != t["target"]
            for b in range(50)
            for t in raw[f"{n}back_{b}"]
        )
    assert by_n[1] > by_n[2] > by_n[3]
