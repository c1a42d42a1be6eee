"""Schema-matched stand-in rows for every dataset the shipped battery (``suites/triangulating.yaml``) loads,
placed where the unchanged task configs find them offline (test-only; no upstream data is committed).

- lm-eval's Hub datasets (``cais/mmlu``, ``SaylorTwift/bbh``, ``baber/logiqa2``, ...) and our Hub-file tasks
  (CLadder, SimpleToM): written as ``datasets``' own cache entries under ``HF_DATASETS_CACHE``
  (``<namespace>___<name>/<config id>/0.0.0/<hash>/`` with ``dataset_info.json`` and one Arrow file per
  split), so ``datasets.load_dataset(path, name)`` with ``HF_DATASETS_OFFLINE=1`` reloads them as it reloads
  a dataset downloaded once (its "Using the latest cached version" fallback);
- NATURAL PLAN's JSON files: where its pinned download is cached (``$TRIANGULATE_CACHE/sources/``).

Which datasets, configs and splits are needed is read from the task configs themselves (lm-eval's task index,
``dataset_path``/``dataset_name``/``*_split``), so a task added to the battery without a stand-in here fails
:func:`build` by name. The rows are a few per split, with the fields the task's prompt, target and scorer read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import datasets
from datasets.arrow_writer import ArrowWriter
from datasets.naming import camelcase_to_snakecase

ROWS = 5  # per split: enough for BBH's 3 and MMLU's 5 few-shot examples
HASH = "standin"


def _mmlu(config: str, i: int, choices: list[str] | None) -> dict[str, Any]:
    return {"question": f"Stand-in {config} question {i}?", "subject": config, "choices": ["w", "x", "y", "z"], "answer": i % 4}


def _bbh(config: str, i: int, choices: list[str] | None) -> dict[str, Any]:
    options = choices or ["(A)", "(B)"]
    return {"input": f"Stand-in {config} input {i}.\nOptions:\n" + "\n".join(options), "target": options[i % len(options)]}


def _ifeval(config: str, i: int, choices: list[str] | None) -> dict[str, Any]:
    return {
        "key": i,
        "prompt": f"Write a sentence about item {i} without any commas.",
        "instruction_id_list": ["punctuation:no_comma"],
        "kwargs": [{"num_words": None, "relation": None}],
    }


def _logiqa2(config: str, i: int, choices: list[str] | None) -> dict[str, Any]:
    return {"id": i, "text": f"Passage {i}.", "question": "Which follows?", "options": ["a", "b", "c", "d"], "answer": i % 4, "type": "{}"}


def _winogrande(config: str, i: int, choices: list[str] | None) -> dict[str, Any]:
    return {"sentence": f"Anna lent Beth a pen because _ had two ({i}).", "option1": "Anna", "option2": "Beth", "answer": str(1 + i % 2)}


def _siqa(config: str, i: int, choices: list[str] | None) -> dict[str, Any]:
    return {
        "context": f"Sam helped a friend ({i}).",
        "question": "How does Sam feel?",
        "answerA": "glad",
        "answerB": "sad",
        "answerC": "bored",
        "label": str(1 + i % 3),
    }


def _eq_bench(config: str, i: int, choices: list[str] | None) -> dict[str, Any]:
    reference = {f"emotion{k}": e for k, e in enumerate(("Anger", "Joy", "Fear", "Relief"), 1)}
    reference |= {f"emotion{k}_score": str(k * 2) for k in range(1, 5)}
    return {
        "prompt": f"Dialogue {i}. Rate Anger, Joy, Fear, Relief from 0 to 10.",
        "reference_answer": "",
        "reference_answer_fullscale": json.dumps(reference),
    }


def _cladder(config: str, i: int, choices: list[str] | None) -> dict[str, Any]:
    return {
        "id": str(i),
        "query_type": "ate",
        "rung": "2",
        "prompt": f"Imagine a world where X causes Y ({i}). Does X raise Y?",
        "label": ("yes", "no")[i % 2],
    }


def _simpletom(config: str, i: int, choices: list[str] | None) -> dict[str, Any]:
    return {
        "id": f"story{i}_{config}",
        "story": f"The can of chips {i} has mold inside. Mary picks it up.",
        "question": "Is Mary likely to be aware of the mold?",
        "choices": {"text": ["No", "Yes"], "label": ["A", "B"]},
        "answerKey": ("A", "B")[i % 2],
    }


#: Hub dataset -> its row maker (the fields its tasks read, in the Hub's schema)
HUB_ROWS: dict[str, Callable[[str, int, list[str] | None], dict[str, Any]]] = {
    "cais/mmlu": _mmlu,
    "SaylorTwift/bbh": _bbh,
    "wis-k/instruction-following-eval": _ifeval,
    "baber/logiqa2": _logiqa2,
    "allenai/winogrande": _winogrande,
    "lighteval/siqa": _siqa,
    "pbevan11/EQ-Bench": _eq_bench,
}
#: our Hub-file tasks: Hub id, data files (split -> path in the repository) per ``dataset_kwargs`` config, rows
HUB_FILES: dict[str, tuple[str, Callable[[str], dict[str, str]], Callable]] = {
    "load_cladder": ("causalnlp/CLadder", lambda config: {"test": "data/full_v1.5_default.csv"}, _cladder),
    "load_simpletom": ("allenai/SimpleToM", lambda config: {"test": f"{config}/test.jsonl"}, _simpletom),
}
NATURAL_PLAN = {
    "trip": {
        "cities": "Venice**Vienna",
        "durations": "3**3",
        "num_cities": 2,
        "golden_plan": "**Day 1-3:** Visit Venice for 3 days.\n**Day 3:** Fly from Venice to Vienna.\n**Day 3-5:** Visit Vienna for 3 days.",
    },
    "calendar": {"num_days": 1, "num_people": 2, "duration": 1, "golden_plan": "Here is the proposed time: Monday, 14:30 - 15:30 "},
    "meeting": {
        "num_people": 1,
        "constraints": [["Golden Gate Park", "9:00AM"]],
        "dist_matrix": {},
        "golden_plan": ["You start at Golden Gate Park at 9:00AM."],
    },
}


def write_cached(
    cache: Path, path: str, name: str | None, splits: dict[str, list[dict[str, Any]]], config_kwargs: dict | None = None
) -> Path:
    """One ``datasets`` cache entry for ``load_dataset(path, name, **config_kwargs)`` holding ``splits``."""
    config_name = name or "default"
    config_id = (
        datasets.BuilderConfig(config_name).create_config_id(config_kwargs=dict(config_kwargs or {})) if config_kwargs else config_name
    )
    parts = path.split("/")
    parts[-1] = camelcase_to_snakecase(parts[-1])
    folder = cache / "___".join(parts) / config_id / "0.0.0" / HASH
    folder.mkdir(parents=True, exist_ok=True)
    dataset_name = camelcase_to_snakecase(path.split("/")[-1])
    split_dict = datasets.SplitDict(dataset_name=dataset_name)
    features = None
    for split, rows in splits.items():
        table = datasets.Dataset.from_list(rows)
        features = table.features
        with ArrowWriter(features=features, path=str(folder / f"{dataset_name}-{split}.arrow")) as writer:
            writer.write_table(table.data.table)
            count, size = writer.finalize()
        split_dict.add(datasets.SplitInfo(name=split, num_bytes=size, num_examples=count, dataset_name=dataset_name))
    info = datasets.DatasetInfo(features=features, config_name=config_id, dataset_name=dataset_name, splits=split_dict)
    info.write_to_directory(str(folder))
    return folder


def _choices(cfg: dict[str, Any]) -> list[str] | None:
    value = cfg.get("doc_to_choice")
    return [str(c) for c in value] if isinstance(value, list) else None


def _splits(cfg: dict[str, Any]) -> list[str]:
    return sorted({str(cfg[k]) for k in ("test_split", "validation_split", "training_split", "fewshot_split") if cfg.get(k)})


def _function_name(value: Any) -> str:
    return str(getattr(value, "__name__", None) or str(value).rsplit(".", 1)[-1])


def build(leaf_configs: Iterable[dict[str, Any]], hf_cache: Path, triangulate_cache: Path) -> list[str]:
    """Stand-ins for every dataset the leaf task configs (lm-eval's, resolved) load; returns what was written.
    A config whose dataset this module does not know raises ``KeyError`` naming it."""
    written: list[str] = []
    for cfg in leaf_configs:
        kwargs = dict(cfg.get("dataset_kwargs") or {})
        custom = cfg.get("custom_dataset")
        if custom is not None:
            written += _custom(_function_name(custom), kwargs, cfg, hf_cache, triangulate_cache)
            continue
        path, name = cfg.get("dataset_path"), cfg.get("dataset_name")
        make = HUB_ROWS.get(str(path))
        if make is None:
            raise KeyError(f"task {cfg.get('task')}: no stand-in rows for dataset {path!r}")
        rows = {split: [make(str(name), i, _choices(cfg)) for i in range(ROWS)] for split in _splits(cfg)}
        write_cached(hf_cache, str(path), name, rows, kwargs or None)
        written.append(f"{path}:{name}")
    return written


def _custom(function: str, kwargs: dict[str, Any], cfg: dict[str, Any], hf_cache: Path, triangulate_cache: Path) -> list[str]:
    if function in HUB_FILES:
        hub_id, files, make = HUB_FILES[function]
        config = str(kwargs.get("config", ""))
        data_files = files(config)
        rows = {split: [make(config, i, None) for i in range(ROWS)] for split in data_files}
        write_cached(hf_cache, hub_id, None, rows, {"data_files": data_files})
        return [f"{hub_id}:{config}"]
    if function == "load_natural_plan":
        from datasets_build.natural_plan import COMMIT, pinned_file

        subtask = str(kwargs.get("subtask"))
        pin = pinned_file(subtask)
        dest = triangulate_cache / "sources" / f"natural_plan-{COMMIT[:12]}" / pin.path
        dest.parent.mkdir(parents=True, exist_ok=True)
        examples = {
            f"{subtask}_example_{i}": {
                "prompt_5shot": f"TASK: example\nSOLUTION: x\n\nTASK: {subtask} {i}\nSOLUTION:",
                **NATURAL_PLAN[subtask],
            }
            for i in range(ROWS)
        }
        dest.write_text(json.dumps(examples), encoding="utf-8")
        return [f"natural_plan:{subtask}"]
    if function == "load_lm_pragmatics":
        return []  # built from the upstream snapshot (TRIANGULATE_DATA, tests/support/built_data.py)
    raise KeyError(f"task {cfg.get('task')}: no stand-in for custom_dataset {function}")
