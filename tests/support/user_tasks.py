"""A lab's own lm-eval task folder, as a suite's ``include_path:`` names it (issue 43 item 8): two multiple-choice
tasks on local JSON Lines files (``dataset_path: json`` + ``dataset_kwargs: data_files``) and a group over them
with a size-weighted ``acc``."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

DOCS = {
    "lab_colors": [
        {"question": "The sky on a clear day is", "choices": ["blue", "green", "red"], "answer": 0},
        {"question": "Fresh grass is", "choices": ["purple", "green", "black"], "answer": 1},
        {"question": "A ripe tomato is", "choices": ["red", "blue", "white"], "answer": 0},
    ],
    "lab_sums": [
        {"question": "2 + 2 =", "choices": ["3", "4", "5"], "answer": 1},
        {"question": "1 + 5 =", "choices": ["6", "7", "8"], "answer": 0},
    ],
}
GROUP = "lab_battery"


def task_config(name: str, data_file: str) -> dict:
    return {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": data_file}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "Question: {{question}}\nAnswer:",
        "doc_to_choice": "{{choices}}",
        "doc_to_target": "{{answer}}",
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "metadata": {"version": 1.0},
    }


def write_user_tasks(folder: Path) -> Path:
    """The folder: ``data/<task>.jsonl``, one YAML per task (absolute ``data_files``) and ``lab_battery.yaml``."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    for name, docs in DOCS.items():
        data = folder / "data" / f"{name}.jsonl"
        data.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(task_config(name, str(data.resolve()))), encoding="utf-8")
    group = {
        "group": GROUP,
        "task": list(DOCS),
        "aggregate_metric_list": [{"metric": "acc", "aggregation": "mean", "weight_by_size": True}],
        "metadata": {"version": 1.0},
    }
    (folder / f"{GROUP}.yaml").write_text(yaml.safe_dump(group), encoding="utf-8")
    return folder
