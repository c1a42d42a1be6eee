"""LM-Pragmatics: built from the upstream copy, the 35 seed tasks and 8 groups resolve, the group is the
micro-average over all 845 items, and (slow) the real lm_eval CLI runs the group on SmolLM2."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from datasets_build.lm_pragmatics import PHENOMENA, SEEDS, build
from lm_eval_tasks import TASKS_DIR
from tests.support.built_data import task_manager

FOLDER = TASKS_DIR / "lm_pragmatics"
SEED_TASKS = [f"lm_pragmatics_{p}_seed_{s}" for p in PHENOMENA for s in SEEDS]


@pytest.fixture(scope="module")
def built(upstream, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lmp-data")
    summary = build(root / "lm_pragmatics")
    assert summary["configs"] == 7 and summary["rows"] == 845
    return root


def test_every_task_and_group_resolves():
    tm = task_manager(include_defaults=False)
    ours = {n for n in tm.all_subtasks if n.startswith("lm_pragmatics")}
    assert ours == set(SEED_TASKS)
    groups = {n for n in tm.all_groups if n.startswith("lm_pragmatics")}
    assert groups == {"lm_pragmatics"} | {f"lm_pragmatics_{p}" for p in PHENOMENA}


def test_committed_yamls_equal_generator_output(tmp_path):
    spec = importlib.util.spec_from_file_location("_lmp_generate", FOLDER / "_generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    expected = gen.expected_files()
    assert {p.name for p in FOLDER.glob("lm_pragmatics*.yaml")} == set(expected)
    for name, text in expected.items():
        assert (FOLDER / name).read_text(encoding="utf-8") == text, f"{name}: rerun _generate.py"


def test_group_is_the_micro_average_over_all_items(built, monkeypatch):
    """A model that always prefers option "1" scores, per task and in the group, the share of items whose
    gold is option 1; the group equals that share over all 845 items (not the mean of the 7 phenomena)."""
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM

    monkeypatch.setenv("TRIANGULATE_DATA", str(built))

    class PrefersOne(LM):
        def loglikelihood(self, requests, disable_tqdm=False):
            return [(0.0 if r.args[1].strip() == "1" else -5.0, False) for r in requests]

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def generate_until(self, requests, disable_tqdm=False):
            raise NotImplementedError

    out = simple_evaluate(model=PrefersOne(), tasks=["lm_pragmatics"], task_manager=task_manager(include_defaults=False), bootstrap_iters=0)
    from datasets_build.load import load_lm_pragmatics

    ones, total, per_phenomenon = 0, 0, {}
    for phenomenon in PHENOMENA:
        data = load_lm_pragmatics(phenomenon, path=built / "lm_pragmatics")
        hits = sum(doc["randomized_true_answer"] == 1 for split in data.values() for doc in split)
        n = sum(len(split) for split in data.values())
        per_phenomenon[phenomenon] = hits / n
        ones, total = ones + hits, total + n
    results = out["results"]
    assert total == 845
    assert results["lm_pragmatics"]["acc,none"] == pytest.approx(ones / total)
    for phenomenon, value in per_phenomenon.items():
        assert results[f"lm_pragmatics_{phenomenon}"]["acc,none"] == pytest.approx(value)
    macro = sum(per_phenomenon.values()) / len(per_phenomenon)
    assert abs(macro - ones / total) > 1e-6  # the data can tell micro from macro


@pytest.mark.slow
def test_lm_eval_cli_runs_lm_pragmatics_on_smollm2(built, tmp_path):
    from models.default_model import default_model_args

    env = {**os.environ, "TRIANGULATE_DATA": str(built), "OMP_NUM_THREADS": "1"}
    env.pop("TRIANGULATE_UPSTREAM", None)  # the task reads the built folder only
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        default_model_args(device=None),
        "--tasks",
        "lm_pragmatics",
        "--limit",
        "1",
        "--include_path",
        str(TASKS_DIR),
        "--output_path",
        str(out),
        "--log_samples",
    ]
    proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(sorted(out.rglob("results_*.json"))[-1].read_text(encoding="utf-8"))["results"]
    assert 0.0 <= results["lm_pragmatics"]["acc,none"] <= 1.0
    assert set(SEED_TASKS) <= set(results)
    samples = sorted(out.rglob("samples_lm_pragmatics_humour_seed_0_*.jsonl"))
    row = json.loads(samples[-1].read_text(encoding="utf-8").splitlines()[0])
    args = [row["arguments"][f"gen_args_{i}"] for i in range(len(row["arguments"]))]
    assert len(args) == 5 and all(a["arg_0"].endswith("\nAnswer: ") for a in args)  # 5 options, the upstream prompt
    assert sorted(a["arg_1"] for a in args) == [" 1", " 2", " 3", " 4", " 5"]
