"""leaderboard.csv normalises a multiple-choice benchmark by its analytic chance level, the mean of 1/k over its
items (issue 32), not by the chance player's score on the same few items (0 on 5 items by bad luck made every
model's normalised score its raw score)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from triangulation.cli.main import main

DATE = "2026-01-01T00-00-00.000001"
LEAVES = {"mc_a": 4, "mc_b": 2}  # options per item


def write_mc_run(root: Path, model: str, correct: int) -> None:
    """An lm-eval run of group ``mc`` (two multiple-choice tasks, two items each); ``correct`` items right per task."""
    folder = root / model.replace("/", "__")
    folder.mkdir(parents=True)
    acc = correct / 2
    results = {t: {"acc,none": acc, "acc_stderr,none": 0.1, "alias": t} for t in [*LEAVES, "mc"]}
    configs = {t: {"task": t, "output_type": "multiple_choice", "metric_list": [{"metric": "acc"}]} for t in LEAVES}
    payload = {
        "results": results,
        "groups": {"mc": results["mc"]},
        "group_subtasks": {"mc": list(LEAVES)},
        "configs": configs,
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
        "n-samples": {t: {"original": 2, "effective": 2} for t in LEAVES},
    }
    (folder / f"results_{DATE}.json").write_text(json.dumps(payload))
    for task, k in LEAVES.items():
        lines = []
        for doc_id in range(2):
            args = [[f"question {doc_id}", f" option {i}"] for i in range(k)]
            lines.append(
                {
                    "doc_id": doc_id,
                    "doc": {},
                    "target": 0,
                    "arguments": args,
                    "resps": [],
                    "filtered_resps": [],
                    "filter": "none",
                    "metrics": ["acc"],
                    "acc": float(doc_id < correct),
                }
            )
        (folder / f"samples_{task}_{DATE}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_a_multiple_choice_benchmark_is_normalised_by_one_over_k(tmp_path):
    runs = tmp_path / "runs"
    write_mc_run(runs, "org/model", correct=1)
    write_mc_run(runs, "random", correct=0)  # the chance player was unlucky on its 4 items
    assert main(["report", str(runs), "--out", str(tmp_path / "report")]) == 0
    bounds = pd.read_csv(tmp_path / "report" / "leaderboard_bounds.csv").set_index("benchmark")
    chance = (1 / 4 + 1 / 4 + 1 / 2 + 1 / 2) / 4
    assert bounds.loc["mc", "chance"] == pytest.approx(chance) and "1/k" in bounds.loc["mc", "chance_source"]
    row = pd.read_csv(tmp_path / "report" / "leaderboard.csv").set_index("fullname").loc["org/model"]
    assert row["mc"] == pytest.approx(100 * (0.5 - chance) / (1 - chance))
