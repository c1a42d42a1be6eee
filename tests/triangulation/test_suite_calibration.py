"""Calibrated by its own runs (issue 37): every done-marker records wall time, machine, model and work; the rates
measured from them replace the table's in the plan, the runner's pool and the benchmark, which say so; the plan's
counts (a --dry_run into the same folder) are the runner's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.triangulation.test_suite import ROOT
from triangulation.suite import calibration
from triangulation.suite.cells import cell_dir, marker_facts, read_marker, write_marker
from triangulation.suite.counting import model_costs
from triangulation.suite.placement import pool_estimate, pool_placements
from triangulation.suite.spec import Cell, load_suite
from triangulation.suite.task_stats import PLAN_FILE, cells_work
from triangulation.suite.throughput import Rates, hardware

EIGHT = [str(i) for i in range(8)]


def small_suite(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: s\nmodels:\n  - {name: a, model: hf, model_args: 'pretrained=x/y', size: 8, engine: vllm}\n"
        "  - {name: b, model: hf, model_args: 'pretrained=x/z', size: 8, engine: vllm}\n"
        "tasks:\n  - eval: winogrande\n  - eval: eq_bench\n"
    )
    return load_suite(path)


def test_the_marker_records_time_machine_model_and_work(tmp_path):
    suite = small_suite(tmp_path)
    c = Cell(suite.models[0], suite.tasks[0])
    write_marker(tmp_path, c, marker_facts(c, cells_work(tmp_path, [c])[c.label]), ["r.json"], 12.5, 1)
    m = read_marker(tmp_path, c)
    assert m["hardware"] == hardware() and m["model_key"] == c.model.key and m["started"] <= m["started"] + 12.5
    assert m["work"]["requests"] == 1_267 * 2 and m["work"]["source"].startswith("table: ")  # no plan here: the table
    plan = {"models": [{"name": "a", "cells": [{"name": "winogrande", "kind": "loglikelihood", "requests": 7, "prompt_tokens": 700}]}]}
    (tmp_path / PLAN_FILE).write_text(json.dumps(plan))
    write_marker(tmp_path, c, marker_facts(c, cells_work(tmp_path, [c])[c.label]), ["r.json"], 12.5, 1)
    assert read_marker(tmp_path, c)["work"] == {
        "kind": "loglikelihood",
        "requests": 7,
        "prompt_tokens": 700,
        "gen_tokens": 0,
        "max_gen_tokens": 0,
        "source": "counted",
    }


def marker(tmp_path, model, task, start, seconds, prompt, gen, key="k", first=None, in_flight=None, requests=1) -> None:
    folder = tmp_path / "runs" / model / task
    folder.mkdir(parents=True)
    work = {"kind": "generate" if gen else "loglikelihood", "requests": requests, "prompt_tokens": prompt, "gen_tokens": gen}
    data = {"hardware": "cpu: test", "model": model, "model_key": key, "started": start, "seconds": seconds, "work": work}
    data |= {"first_request": first, "in_flight": in_flight}
    (folder / calibration.MARKER).write_text(json.dumps(data))


def test_measured_rates_come_from_each_model_busy_span(tmp_path):
    # model ll: two log-likelihood cells at once, 0-100 s and 50-150 s: 3,000 prompt tokens in a 150 s span
    marker(tmp_path, "ll", "x", 1000, 100, 1000, 0)
    marker(tmp_path, "ll", "y", 1050, 100, 2000, 0)
    # model gen (same weights): 600 prompt tokens (30 s at 20/s) and 900 generated tokens in 120 s: 10/s
    marker(tmp_path, "gen", "z", 5000, 120, 600, 900)
    marker(tmp_path, "gen", "merged", 5000, 999, 10**9, 0)  # a merged group's marker: its subtask cell counts
    (tmp_path / "runs" / "gen" / "merged" / "sub").mkdir()
    (tmp_path / "runs" / "gen" / "merged" / "sub" / calibration.MARKER).write_text(
        (tmp_path / "runs" / "gen" / "z" / calibration.MARKER).read_text().replace('"gen"', '"gen2"')
    )
    got = calibration.measured_rates(calibration.read_markers(tmp_path), "cpu: test")["k"]
    # one sequence (the markers do not say how many were in flight: 1): 1,800 tokens in 2 x 90 sequence-seconds
    assert got.prefill == pytest.approx(3000 / 150) and got.decode == pytest.approx(2 * 900 / (2 * 120 - 2 * 30))
    assert calibration.measured_rates(calibration.read_markers(tmp_path), "gpu: other") == {}


def test_the_decode_rate_is_one_sequences_and_scales_with_the_batch(tmp_path):
    """A generating run of 4 requests with 16 in flight decoded 4 sequences at once: 900 tokens in 90 s is 2.5
    tokens/s per sequence; the table's full-batch rate keeps its ratio to batch 1 (at most the prefill rate)."""
    marker(tmp_path, "ll", "x", 1000, 100, 2000, 0)  # prefill 20/s
    marker(tmp_path, "gen", "z", 5000, 120, 600, 900, in_flight=16, requests=4)  # 30 s of prompts, 90 s of decode
    got = calibration.measured_rates(calibration.read_markers(tmp_path), "cpu: test")["k"]
    assert got.decode == pytest.approx(900 / (90 * 4))
    table = Rates(prefill=1000.0, decode=100.0, decode_single=1.0)
    rates = table.with_measured(got.prefill, got.decode, got.why)
    assert (rates.prefill, rates.decode_single, rates.decode) == pytest.approx((20, 2.5, 20))  # 250/s capped at 20
    assert rates.sources["decode"].startswith("measured: ") and "sequence-seconds" in rates.sources["decode"]


def test_a_cells_start_up_is_measured_apart_from_its_work(tmp_path):
    # three cells start together on 2 cores, each sends its first request after 30 s (alone: 30 x 2/3 = 20 s) and
    # ends at 130 s: 3,000 prompt tokens in the 100 s of work, not in the 130 s span
    for task in "xyz":
        marker(tmp_path, "ll", task, 1000, 130, 1000, 0, first=1030)
    marker(tmp_path, "late", "w", 9000, 50, 500, 0, first=9040)  # another run of the same weights: alone, 40 s
    got = calibration.measured_rates(calibration.read_markers(tmp_path), "cpu: test", cores=2)["k"]
    assert got.prefill == pytest.approx((3000 + 500) / (100 + 10))
    assert got.cell_starts[""] == pytest.approx(20)  # the median of 20, 20, 20 and 40
    assert "cell start-up 20 s" in got.why
    older = calibration.measured_rates([dict(m, first_request=None) for m in calibration.read_markers(tmp_path)], "cpu: test", 2)["k"]
    assert older.cell_starts == {} and older.prefill == pytest.approx(3500 / 180)  # markers without it: the whole span


@pytest.mark.slow
def test_start_ups_are_kept_per_task_folder_and_each_cell_joins_the_server_when_started(tmp_path):
    """MMLU's subtasks share one lm-eval folder, so one measured subtask gives every subtask its start-up; a cell
    that starts fast works alone on the server until the slow ones join."""
    marker(tmp_path, "m", "mmlu_anatomy", 1000, 100, 1000, 0, first=1005)
    marker(tmp_path, "p", "connections", 3000, 100, 1000, 0, first=3050)
    for model, task in (("m", "mmlu_anatomy"), ("p", "connections")):  # the marker's cell label: model/task
        path = tmp_path / "runs" / model / task / calibration.MARKER
        path.write_text(json.dumps(json.loads(path.read_text()) | {"cell": f"{model}/{task}"}))
    got = calibration.measured_rates(calibration.read_markers(tmp_path), "cpu: test", cores=2)["k"]
    assert calibration.start_key("mmlu/mmlu_astronomy") == calibration.start_key("mmlu_anatomy") != calibration.start_key("connections")
    assert got.cell_starts[calibration.start_key("mmlu/mmlu_college_physics")] == pytest.approx(5)
    assert got.cell_starts[calibration.start_key("connections")] == pytest.approx(50)
    # two cells on 2 cores: "fast" (start-up 10 s, 1,000 tokens) works alone at 100/s until "slow" joins at 60 s
    from triangulation.suite import estimate
    from triangulation.suite.task_stats import Counts

    rates = Rates(prefill=100.0, decode=10.0, decode_single=1.0)
    setup = estimate.Setup("vllm", rates, 0.0, in_flight=estimate.PREFILL_FULL, cores=2)
    work = Counts("loglikelihood", 10, 1000, 0, 0, "test")
    cells = [estimate.CellWork("fast", "fast", "eval", work, start_s=10.0), estimate.CellWork("slow", "slow", "eval", work, start_s=60.0)]
    _, ends = estimate.served_finish(cells, setup)
    assert ends == pytest.approx({"fast": 20.0, "slow": 70.0})


def test_the_runner_places_with_the_plans_counts_and_the_measured_rates(tmp_path):
    suite = small_suite(tmp_path)
    before = pool_placements(suite, EIGHT, root=tmp_path)  # nothing there: the table
    plan = {
        "models": [
            {
                "name": m.name,
                "cells": [{"name": t.name, "kind": "loglikelihood", "requests": 10, "prompt_tokens": 10**8} for t in suite.tasks],
            }
            for m in suite.models
        ]
    }
    (tmp_path / PLAN_FILE).write_text(json.dumps(plan))
    run = pool_placements(suite, EIGHT, root=tmp_path)
    costs = model_costs(suite, 8, tmp_path)
    planned, summary = pool_estimate(suite.models, EIGHT, costs)
    assert [(p.gpus, p.replicas, p.start, p.end) for p in run] == [(p.gpus, p.replicas, p.start, p.end) for p in planned]
    assert run[0].end > before[0].end  # 10^8 counted tokens per cell, not the table's few thousand
    assert summary["sources"]["a"]["work"].startswith("2 of 2 cells counted")
    assert summary["sources"]["a"]["prefill"].startswith("table: ")
    # a finished run of model a on this machine: its measured rate replaces the table's, for a only
    folder = cell_dir(tmp_path, Cell(suite.models[0], suite.tasks[0]))
    folder.mkdir(parents=True)
    data = {"hardware": hardware(), "model": "a", "model_key": suite.models[0].key, "started": 0, "seconds": 10**6}
    (folder / calibration.MARKER).write_text(json.dumps({**data, "work": {"prompt_tokens": 10**8, "gen_tokens": 0}}))
    _, measured = pool_estimate(suite.models, EIGHT, model_costs(suite, 8, tmp_path))
    assert measured["sources"]["a"]["prefill"].startswith("measured: prefill: 1 log-likelihood cells, 100,000,000 prompt tokens")
    assert measured["sources"]["b"]["prefill"].startswith("table: ")


def test_battery_makespan_prints_the_breakdown_and_a_json_last_line():
    """CI's smoke run of benchmarks/battery_makespan.py (it failed with an ImportError before issue 37)."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / "battery_makespan.py")]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"makespan_h", "busy_work", "busy_held", "work_share_by_task", "gpu_hours_by_phase"} <= set(last)
    assert last["makespan_h"] > 0 and 0 < last["busy_work"] <= last["busy_held"] <= 1
    assert set(last["work_share_by_task"]) == {t.name for t in load_suite(ROOT / "suites" / "triangulating.yaml").tasks}
    assert sum(last["work_share_by_task"].values()) == pytest.approx(1, abs=0.01)
    assert "prefill" in out.stdout and "start-up" in out.stdout and "mmlu" in out.stdout
