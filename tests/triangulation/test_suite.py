"""`triangulate suite`: suite files, cell commands, skipping finished cells, kill + rerun, failing models,
and the seed 003 figures of a suite's report.

The sweeps run real `triangulate play` / `triangulate eval` subprocesses with the scripted model of
``tests/support/suite_helpers.py`` (passed as ``--launcher``); the SmolLM2 part is marked slow.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from plumbing.errors import UserError
from triangulation.suite.cells import cell_argv, cell_dir, is_done
from triangulation.suite.spec import cells, load_suite

ROOT = Path(__file__).resolve().parents[2]
HELPER = ROOT / "tests" / "support" / "suite_helpers.py"
LAUNCHER = f"{sys.executable} {HELPER}"
UPSTREAM = Path(os.environ.get("TRIANGULATE_UPSTREAM") or ROOT.parent / "shared" / "upstream").resolve()


def write_suite(tmp_path: Path, data: dict, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def suite_env(work_log: Path) -> dict[str, str]:
    """The sweep's environment: the scripted model's work log, and the datasets built once per test process."""
    from tests.support.built_data import built_data_root

    data = built_data_root(str(UPSTREAM))
    return {**os.environ, "SUITE_WORK_LOG": str(work_log), "PYTHONPATH": str(ROOT), "TRIANGULATE_DATA": str(data)}


def run_suite_cli(suite: Path, out: Path, work_log: Path, *extra: str, timeout: int = 900) -> subprocess.CompletedProcess:
    env = suite_env(work_log)
    cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "--output_path", str(out), "--launcher", LAUNCHER, *extra]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def status(out: Path) -> dict[str, str]:
    return {c["cell"]: c["status"] for c in json.loads((out / "suite_status.json").read_text())["cells"]}


def _read(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


def scripted(name: str, **extra) -> dict:
    args = ",".join([f"pretrained={name}", *(f"{k}={v}" for k, v in extra.items())])
    return {"name": name, "model": "scripted-suite", "model_args": args}


# --- suite files --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, message",
    [
        ({"tasks": [{"play": "wcst"}]}, "missing `models:`"),
        ({"models": [{"name": "a"}]}, "missing `tasks:`"),
        ({"models": [{"name": "a"}], "tasks": [{"play": "wcst"}], "modles": []}, "unknown key 'modles'"),
        ({"models": [{"name": "a", "modelargs": "x"}], "tasks": [{"play": "wcst"}]}, "models[0]: unknown key 'modelargs'"),
        ({"models": [{"name": "a"}], "tasks": ["wcst"]}, "write `- eval: wcst`"),
        ({"models": [{"name": "a"}], "tasks": [{"play": "wcst", "eval": "x"}]}, "exactly one of"),
        ({"models": [{"name": "a"}], "tasks": [{"eval": "x", "task_args": {"a": 1}}]}, "task_args applies to play tasks only"),
        ({"models": [{"name": "a"}], "tasks": [{"play": "x", "num_fewshot": 5}]}, "num_fewshot applies to eval"),
        ({"models": [{"name": "a"}], "tasks": [{"play": "x", "limit": "all"}]}, "limit must be a number"),
        ({"models": [{"name": "a"}, {"name": "a"}], "tasks": [{"play": "x"}]}, "two entries are named 'a'"),
        ({"models": [{"name": "a b"}], "tasks": [{"play": "x"}]}, "names a folder"),
        ({"models": [{"name": "a", "judge": {"temperature": 0}}], "tasks": [{"play": "x"}]}, "models[0].judge: unknown key"),
    ],
)
def test_suite_file_mistakes_are_one_line(tmp_path, data, message):
    path = write_suite(tmp_path, data)
    with pytest.raises(UserError) as exc:
        load_suite(path)
    text = str(exc.value)
    assert message in text and "\n" not in text and str(path) in text


def test_bad_yaml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("models: [\n  - a: b\n", encoding="utf-8")
    with pytest.raises(UserError, match="not valid YAML"):
        load_suite(bad)
    with pytest.raises(UserError, match="cannot read suite"):
        load_suite(tmp_path / "nope.yaml")


def test_shipped_suites_load():
    smoke = load_suite(ROOT / "suites" / "smoke.yaml")
    assert [m.name for m in smoke.models] == ["smollm2"] and smoke.models[0].model is None
    assert all(t.options["limit"] == 1 for t in smoke.tasks)
    from multiturn import registry

    for t in smoke.tasks:  # every play task of the smoke suite exists on this branch
        if t.runner == "play":
            registry.expand(list(t.tasks))
    tri = load_suite(ROOT / "suites" / "triangulating.yaml")
    names = {n for t in tri.tasks for n in t.tasks}
    for wanted in (
        "leaderboard_ifeval",
        "mmlu",
        "leaderboard_bbh",
        "clembench",
        "nback_verbal_3_triangulating",
        "cognitive_flexibility_triangulating",  # group: wcst_triangulating + lnt_triangulating (seed 003's protocol)
        "logiqa2",
        "cladder",
        "winogrande",
        "natural_plan",  # group: natural_plan_trip + natural_plan_calendar
        "lm_pragmatics",
        "simpletom_mental_state",
        "simpletom_attribution_judgment",  # group: simpletom_behavior + simpletom_judgment
        "social_iqa",
        "eq_bench",
    ):
        assert wanted in names
    # the tasks our lm_eval_tasks/ folder provides (once merged with the branch that adds them) are named there
    from lm_eval_tasks import TASKS_DIR

    ours = {"cladder", "natural_plan", "lm_pragmatics", "simpletom_mental_state", "simpletom_attribution_judgment"}
    defined = {
        line.split(":", 1)[1].strip()
        for f in TASKS_DIR.rglob("*.yaml")
        for line in f.read_text(encoding="utf-8").splitlines()
        if line.startswith(("task:", "group:"))
    }
    if {"cladder", "natural_plan"} <= defined:
        assert ours <= defined, ours - defined
    by_task = {t.tasks[0]: t for t in tri.tasks}
    assert by_task["mmlu"].options["num_fewshot"] == 5  # App. E.1
    assert by_task["natural_plan"].options["gen_kwargs"]["max_gen_toks"] == 350  # App. E.3
    assert len(tri.models) == 8 and all(m.size for m in tri.models)

    report_names = set(tri.report_names)
    for pair in tri.report.pairs:  # Figure 2's pairs name models as the report will
        assert set(pair.split(",")) <= report_names


def test_cell_commands(tmp_path):
    path = write_suite(
        tmp_path,
        {
            "defaults": {"limit": 3, "seed": 7, "gen_kwargs": {"max_gen_toks": 16}, "task_args": {"max_rounds": 2}},
            "models": [
                {
                    "name": "m",
                    "model": "hf",
                    "model_args": {"pretrained": "x/y"},
                    "judge": {"model": "hf", "model_args": "pretrained=j"},
                    "apply_chat_template": False,
                }
            ],
            "tasks": [{"eval": ["a", "b"], "num_fewshot": 5, "metadata": {"k": 1}, "log_samples": True}, {"play": "splat", "name": "sp"}],
        },
    )
    suite = load_suite(path)
    ev, pl = cells(suite)
    argv = cell_argv(ev, tmp_path / "o", launcher=("T",))
    assert argv[:6] == ["T", "eval", "--tasks", "a,b", "--output_path", str(tmp_path / "o")]
    joined = " ".join(argv)
    assert '--model hf --model_args {"pretrained": "x/y"}' in joined and "--limit 3 --seed 7" in joined
    assert "--num_fewshot 5" in joined and "--log_samples" in joined and "--apply_chat_template" not in joined
    assert "task_args" not in joined  # a play-only default does not reach lm-eval
    argv = cell_argv(pl, tmp_path / "o", launcher=("T",))
    joined = " ".join(argv)
    assert argv[1] == "play" and '--task_args {"max_rounds": 2}' in joined and "--judge_model hf --judge_model_args pretrained=j" in joined
    assert '--gen_kwargs {"max_gen_toks": 16}' in joined
    # a model's size only labels Figure 1: same fingerprint
    sized = yaml.safe_load(path.read_text())
    sized["models"][0]["size"] = 7
    assert cells(load_suite(write_suite(tmp_path, sized, "sized.yaml")))[0].fingerprint == ev.fingerprint
    # a changed entry is no longer "done"
    assert (
        ev.fingerprint
        != cells(load_suite(write_suite(tmp_path, {**yaml.safe_load(path.read_text()), "defaults": {"limit": 4}}, "t.yaml")))[0].fingerprint
    )


# --- sweeps with the scripted model -------------------------------------------------------------


def test_sweep_skips_finished_cells_and_resumes_after_a_kill(tmp_path):
    """Killing the sweep mid-cell and rerunning runs the missing cells only; a third run does no model work."""
    suite = write_suite(
        tmp_path,
        {
            "defaults": {"limit": 2, "seed": 3},
            "models": [scripted("alpha", delay=0.3), scripted("beta", delay=0.3)],
            "tasks": [{"play": "nback_verbal_1"}],
        },
    )
    out = tmp_path / "out"
    env = suite_env(tmp_path / "work1.log")
    proc = subprocess.Popen(
        [sys.executable, "-m", "triangulation", "suite", str(suite), "--output_path", str(out), "--launcher", LAUNCHER],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    plan = cells(load_suite(suite))
    first, second = plan
    deadline = time.time() + 300
    try:
        while not is_done(out, first) and time.time() < deadline:
            time.sleep(0.2)
        assert is_done(out, first), "first cell never finished"
        while "beta" not in _read(tmp_path / "work1.log") and time.time() < deadline:  # beta is mid-cell
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not is_done(out, second)
    marker = (cell_dir(out, first) / ".suite_done.json").read_text()

    rerun = run_suite_cli(suite, out, tmp_path / "work2.log")
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert status(out) == {"alpha/nback_verbal_1": "skipped-done", "beta/nback_verbal_1": "done"}
    assert (cell_dir(out, first) / ".suite_done.json").read_text() == marker  # untouched
    work2 = (tmp_path / "work2.log").read_text().split()
    assert "beta" in work2 and "alpha" not in work2
    assert (out / "report" / "report.html").is_file()
    scores = pd.read_csv(out / "report" / "scores.csv", index_col=0)
    assert set(scores.index) == {"alpha", "beta"} and "nback_verbal_1" in scores.columns

    third = run_suite_cli(suite, out, tmp_path / "work3.log")
    assert third.returncode == 0
    assert not (tmp_path / "work3.log").exists()  # no model work at all
    assert set(status(out).values()) == {"skipped-done"}

    data = yaml.safe_load(suite.read_text())  # report settings are not part of a cell: still nothing to run
    data["report"] = {"pairs": ["alpha,gamma"]}
    fourth = run_suite_cli(write_suite(tmp_path, data), out, tmp_path / "work4.log")
    assert fourth.returncode == 1 and "report failed: --pair: unknown model 'gamma'" in fourth.stderr
    assert not (tmp_path / "work4.log").exists()


def test_failing_model_is_recorded_and_the_sweep_goes_on(tmp_path):
    suite = write_suite(
        tmp_path,
        {
            "retries": 1,
            "max_consecutive_failures": 1,
            "defaults": {"limit": 1},
            "models": [scripted("down", fail=1), scripted("up")],
            "tasks": [{"play": "nback_verbal_1"}, {"play": "lnt"}, {"play": "no_such_task"}],
        },
    )
    out = tmp_path / "out"
    result = run_suite_cli(suite, out, tmp_path / "work.log")
    assert result.returncode == 1
    assert status(out) == {
        "down/nback_verbal_1": "failed",
        "down/lnt": "skipped-model-failed",
        "down/no_such_task": "skipped-model-failed",
        "up/nback_verbal_1": "done",
        "up/lnt": "done",
        "up/no_such_task": "failed",
    }
    assert "down: 3 cell(s) not finished" in result.stderr and "is down" in result.stderr
    assert "up: 1 cell(s) not finished" in result.stderr and "no_such_task" in result.stderr
    assert (out / "logs" / "down" / "nback_verbal_1.log").read_text().count("=== ") == 2  # a crash: one retry
    assert (out / "logs" / "up" / "no_such_task.log").read_text().count("=== ") == 1  # a user error: not retried
    assert (out / "report" / "report.html").is_file()


@pytest.mark.slow
def test_smoke_suite_with_smollm2_and_a_scripted_model(tmp_path):
    """suites/smoke.yaml's model and settings plus a scripted model, on smoke's lm-eval Connections entry and
    one play game (the whole smoke suite takes tens of CPU minutes); a second run does no model work."""
    data = yaml.safe_load((ROOT / "suites" / "smoke.yaml").read_text())
    data["models"].append(scripted("scripted-b"))
    data["tasks"] = [t for t in data["tasks"] if t.get("eval") == "connections"] + [{"play": "taboo"}]
    assert len(data["tasks"]) == 2
    suite = write_suite(tmp_path, data)
    out = tmp_path / "out"
    first = run_suite_cli(suite, out, tmp_path / "work1.log", timeout=1500)
    assert first.returncode == 0, first.stderr[-3000:]
    assert set(status(out).values()) == {"done"} and len(status(out)) == 4
    scores = pd.read_csv(out / "report" / "scores.csv", index_col=0)
    assert {"SmolLM2-135M-Instruct-Q4_1", "scripted-b"} <= set(scores.index)
    assert {"connections", "taboo"} <= set(scores.columns)
    sizes = pd.read_csv(out / "model_sizes.csv", index_col=0)
    assert sizes.at["SmolLM2-135M-Instruct-Q4_1", "size_b"] == pytest.approx(0.1345, abs=0.001)  # counted from the GGUF
    mtime = (out / "runs" / "smollm2" / "taboo" / ".suite_done.json").stat().st_mtime
    second = run_suite_cli(suite, out, tmp_path / "work2.log")
    assert second.returncode == 0
    assert set(status(out).values()) == {"skipped-done"} and not (tmp_path / "work2.log").exists()
    assert (out / "runs" / "smollm2" / "taboo" / ".suite_done.json").stat().st_mtime == mtime
    assert all(p.read_text().count("=== ") == 1 for p in (out / "logs").rglob("*.log"))  # no new attempt


# --- the seed 003 figures of a suite over the clembench leaderboards ----------------------------

CLEMBENCH_MODELS = {  # scripted models named after clembench v1.6 models (nominal sizes from the names)
    "Meta-Llama-3.1-8B-Instruct": 8,
    "Meta-Llama-3.1-70B-Instruct": 70,
    "Qwen2-7B-Instruct": 7,
    "Qwen2-72B-Instruct": 72,
    "Mistral-7B-Instruct-v0.2": 7,
}


@pytest.fixture(scope="module")
def leaderboard_suite(tmp_path_factory):
    if not (UPSTREAM / "clembench-runs" / "v1.6" / "results.csv").is_file():
        pytest.fail(f"the clembench-runs copy is missing under {UPSTREAM}")
    tmp = tmp_path_factory.mktemp("leaderboard")
    # a small static table the test makes (IFEval and MMLU-like columns) for the scripted models
    static = pd.DataFrame(
        {"ifeval": [0.70, 0.85, 0.72, 0.88, 0.55], "mmlu": [0.60, 0.79, 0.66, 0.82, 0.58]},
        index=pd.Index(list(CLEMBENCH_MODELS), name="model"),
    )
    static.to_csv(tmp / "static.csv")
    suite = write_suite(
        tmp,
        {
            "defaults": {"limit": 2, "seed": 5},
            "models": [{**scripted(name), "size": size} for name, size in CLEMBENCH_MODELS.items()],
            "tasks": [{"play": ["nback_verbal_3_triangulating", "lnt_triangulating"], "name": "tests"}],
            "report": {
                "external": [f"v1.6={UPSTREAM}/clembench-runs/v1.6/results.csv", "lb=static.csv"],
                "pairs": ["Meta-Llama-3.1-8B-Instruct,Meta-Llama-3.1-70B-Instruct", "Meta-Llama-3.1-70B-Instruct,Qwen2-72B-Instruct"],
            },
        },
    )
    out = tmp / "out"
    result = run_suite_cli(suite, out, tmp / "work.log")
    assert result.returncode == 0, result.stderr[-3000:]
    return out / "report"


def test_leaderboard_suite_draws_figures_1_2_3_and_8(leaderboard_suite):
    rep = leaderboard_suite
    fig1 = pd.read_csv(rep / "triangulating_fig1_size.csv", index_col=0)
    assert set(fig1.index) == set(CLEMBENCH_MODELS) and list(fig1.size_b) == sorted(CLEMBENCH_MODELS.values())  # by size
    assert fig1.at["Qwen2-72B-Instruct", "IFEval"] == pytest.approx(88.0)  # lb/ifeval, as a percentage
    assert fig1.at["Qwen2-72B-Instruct", "Static"] == pytest.approx(82.0)  # lb/mmlu, the only static benchmark
    scores = pd.read_csv(rep / "scores.csv", index_col=0)
    assert fig1.at["Qwen2-72B-Instruct", "Interactive"] == pytest.approx(scores.loc["Qwen2-72B-Instruct", ["v1.6/clemscore"]].mean())
    ratios = pd.read_csv(rep / "discriminative_ratios.csv", index_col=0)
    assert "Meta-Llama-3.1-70B-Instruct / Meta-Llama-3.1-8B-Instruct" in ratios.columns
    assert ratios.loc["v1.6/clemscore", "Meta-Llama-3.1-70B-Instruct / Meta-Llama-3.1-8B-Instruct"] == pytest.approx(
        38.83 / 18.36, rel=1e-3
    )
    abil = pd.read_csv(rep / "abilities_static_vs_interactive.csv")
    assert abil.loc[abil.ability == "working_memory", "n_interactive"].item() == 5
    pairs = pd.read_csv(rep / "triangulating_fig8_pairs.csv")
    assert (
        len(pairs) == 2
        and set(pairs.benchmark_a) == {"v1.6/clemscore"}
        and set(pairs.benchmark_b) == {"nback_verbal_3_triangulating", "lnt_triangulating"}
    )
    assert pairs.tau[0] >= pairs.tau[1] and abs(pairs.tau[1]) <= abs(pairs.tau[0])
    for png in (
        "triangulating_fig1_size.png",
        "discriminative_0.png",
        "discriminative_1.png",
        "abilities_static_vs_interactive.png",
        "triangulating_fig8_0.png",
        "triangulating_fig8_1.png",
    ):
        assert (rep / png).stat().st_size > 5000, png
    html = (rep / "report.html").read_text()
    assert "seed 003, Figure 1" in html and "seed 003, Figure 8" in html and "Figure 3" in html and "Figure 2" in html
