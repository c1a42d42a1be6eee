"""The cost model from tokens (issue 37): cells' work in requests and tokens, rates per engine x GPU x size, the
served model's sharing, and the battery's GPU time where its token counts put it."""

from __future__ import annotations

import pytest

from tests.triangulation.test_suite import ROOT
from triangulation.suite import estimate
from triangulation.suite.counting import model_costs
from triangulation.suite.placement import pool_estimate
from triangulation.suite.spec import load_suite
from triangulation.suite.task_stats import DEFAULT_PATH, STATS, Counts, TaskStats, table_counts
from triangulation.suite.throughput import GPUS, Rates, table_rates

EIGHT = [str(i) for i in range(8)]


def cell(name: str, prompt: float, gen: float = 0.0, requests: int = 1) -> estimate.CellWork:
    return estimate.CellWork(name, name, "eval", Counts("generate" if gen else "loglikelihood", requests, prompt, gen, gen, "test"))


def test_the_request_count_per_question_follows_the_scoring_path():
    mmlu = STATS["mmlu"]
    assert mmlu.requests() == mmlu.items * 4 == 56_168
    one_pass = TaskStats("loglikelihood", 10, 100.0, requests_per_item={DEFAULT_PATH: 4, "one_pass": 1})
    assert one_pass.requests("one_pass") == 10 and one_pass.requests() == 40
    assert mmlu.requests("one_pass") == mmlu.items  # issue 40: " A".." D" are one token each, one request per question
    bbh = STATS["leaderboard_bbh"]
    assert bbh.requests("one_pass") == bbh.requests()  # a path the row does not know: per choice
    # a group's row is split over its leaves; limit caps each leaf's questions as lm-eval does
    leaves = table_counts("mmlu", [f"mmlu/{i}" for i in range(4)], limit=5)
    assert all(c.requests == 5 * 4 and c.prompt_tokens == 20 * mmlu.prompt_tokens for c in leaves.values())
    assert sum(c.requests for c in table_counts("mmlu", ["a", "b"]).values()) == pytest.approx(56_168)


def test_rates_follow_size_gpu_and_engine_without_a_fitted_factor():
    small, big = table_rates("vllm", "H100", 8, 1), table_rates("vllm", "H100", 70, 4)
    assert small.prefill / table_rates("vllm", "H100", 16, 1).prefill == pytest.approx(2.0)  # FLOPs per token ~ size
    assert table_rates("vllm", "H100", 8, 1).prefill / table_rates("vllm", "A100", 8, 1).prefill == pytest.approx(
        GPUS["H100"].bf16_flops / GPUS["A100"].bf16_flops
    )
    assert small.decode <= small.prefill and big.decode <= big.prefill and small.decode > small.decode_single
    assert table_rates("hf", "H100", 70, 4).prefill == table_rates("hf", "H100", 70, 1).prefill  # layer by layer
    assert all(v.startswith("table: ") for v in small.sources.values())


def test_served_cells_share_the_server_and_fill_it():
    rates = Rates(prefill=100.0, decode=10.0, decode_single=1.0)
    setup = estimate.Setup("vllm", rates, start_s=60.0, in_flight=estimate.PREFILL_FULL, cell_start_s=10.0, cores=2)
    cells = [cell("a", 1000), cell("b", 3000)]
    # start, two start-ups on two cores, then 4,000 prompt tokens at 100/s (the server full with 2 x 8 in flight)
    assert estimate.served_seconds(cells, setup) == pytest.approx(60 + 10 + 40)
    # one cell with half the requests that fill the prefill: its 1,000 tokens take twice as long
    half = estimate.Setup("vllm", rates, 60.0, in_flight=estimate.PREFILL_FULL // 2)
    assert estimate.served_seconds(cells[:1], half) == pytest.approx(60 + 20)
    # decode at the batch in flight: 8 sequences decode at 8/s, not the full 10/s
    gen = [cell("g", 0, 80, requests=8)]
    assert estimate.served_seconds(gen, estimate.Setup("vllm", rates, 0.0, in_flight=8)) == pytest.approx(10)
    # a cell of 2 requests decodes 2 sequences at once, however many it may keep in flight: 2/s
    assert estimate.served_seconds([cell("g2", 0, 80, requests=2)], estimate.Setup("vllm", rates, 0.0, in_flight=8)) == pytest.approx(40)
    two = estimate.served_seconds(gen, estimate.Setup("vllm", rates, 0.0, in_flight=8), replicas=2)
    assert two == pytest.approx(10)  # 4 in flight per replica, 4/s each: a second replica does not help one cell
    b = estimate.breakdown(cells + gen, setup, gpus=2)
    assert (b.prefill, b.decode, b.startup) == pytest.approx((80, 16, 120)) and b.by_task["g"] == pytest.approx(16)


def test_the_battery_spends_its_gpu_time_in_mmlu_and_bbh_prefill():
    """Issue 37: token counts put 80-85% of the GPU time in MMLU/BBH log-likelihood prefill and ~5% in NATURAL
    PLAN (App. H's minutes put 76% there); the plan's, the runner's and the benchmark's estimate is this one. With
    issue 40's one-pass client (the shipped battery is served) MMLU asks one request per question, not four, so
    MMLU/BBH fall to about two thirds of the work and MMLU's own share to about a quarter of what it was."""
    suite = load_suite(ROOT / "suites" / "triangulating.yaml")
    leaves = {"mmlu": [f"mmlu_{i}" for i in range(57)], "leaderboard_bbh": [f"bbh_{i}" for i in range(24)]}
    costs = model_costs(suite, 8, leaves=leaves, gpu="H100")
    placements, summary = pool_estimate(suite.models, EIGHT, costs)
    share = summary["work_share_by_task"]
    assert share["mmlu"] + share["leaderboard_bbh"] > 0.6 and share["natural_plan"] < 0.2
    per_choice = table_counts("mmlu", leaves["mmlu"])
    one_pass = table_counts("mmlu", leaves["mmlu"], path="one_pass")
    assert sum(c.prompt_tokens for c in per_choice.values()) == 4 * sum(c.prompt_tokens for c in one_pass.values())
    prefill = sum(estimate.prefill_seconds(c, cost.setup.rates) for cost in costs for c in cost.cells if c.task in leaves)
    work = sum(cost.breakdowns[0].work / max(cost.job.gpus, 1) for cost in costs)
    assert share["mmlu"] + share["leaderboard_bbh"] >= prefill / work * 0.8  # their work is prefill, as counted
    assert 0 < summary["busy_work"] < summary["busy_held"] <= 1
    assert summary["makespan_h"] == pytest.approx(max(p.end for p in placements) / 3600, abs=0.01)
