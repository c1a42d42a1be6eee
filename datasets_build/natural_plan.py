"""NATURAL PLAN (Zheng et al. 2024, github.com/google-deepmind/natural-plan): pinned download and loading.

The three data files (``data/{trip_planning,calendar_scheduling,meeting_planning}.json``) are too large
for the upstream snapshot, so the tasks fetch them at run time from the pinned commit
(``<base>/google-deepmind/natural-plan/<commit>/data/<file>``, base ``https://raw.githubusercontent.com``
or ``$TRIANGULATE_SOURCE_URL``), check each against its git blob id and cache it under
``$TRIANGULATE_CACHE/sources/``. ``natural_plan_dir`` (lm-eval ``--metadata``) names a local folder
holding the files instead (a checkout of the repository or its ``data/`` folder; used as is).

Each file is one JSON object keyed by example id; rows keep every field. In meeting planning the
``constraints`` (mixed-type lists) and ``dist_matrix`` are stored as JSON text, as in the Triangulating
authors' Hub copy, so the rows fit one Arrow schema; the scorer accepts text or objects.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets

from datasets_build.sources import PinnedFile, cache_root, fetch_file
from plumbing.errors import UserError
from plumbing.jsonio import read_json

OWNER, REPO, COMMIT = "google-deepmind", "natural-plan", "ca76db336072ff8931db43bc1ca8d381038cf073"
# task suffix -> (file name, git blob id at COMMIT, fields every example must have)
SUBTASKS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "trip": ("trip_planning.json", "de8f16dd532578efed5de226fbd8a998441b5f13", ("cities", "durations", "prompt_5shot", "golden_plan")),
    "calendar": ("calendar_scheduling.json", "1a786214dccbb047eb6fbb232749e7e791f28a00", ("prompt_5shot", "golden_plan")),
    "meeting": (
        "meeting_planning.json",
        "4eef311ef67706195a6e166b40a872dcaaf47bba",
        ("constraints", "dist_matrix", "prompt_5shot", "golden_plan"),
    ),
}
JSON_TEXT_FIELDS = ("constraints", "dist_matrix")


def pinned_file(subtask: str) -> PinnedFile:
    name, blob, _ = _subtask(subtask)
    return PinnedFile(OWNER, REPO, COMMIT, f"data/{name}", blob)


def _subtask(subtask: str) -> tuple[str, str, tuple[str, ...]]:
    if subtask not in SUBTASKS:
        raise UserError(f"unknown NATURAL PLAN subtask {subtask!r}; available: {', '.join(SUBTASKS)}")
    return SUBTASKS[subtask]


def data_file(subtask: str, natural_plan_dir: str | Path | None = None) -> Path:
    """The JSON file of ``subtask``: from ``natural_plan_dir`` (``<dir>/<file>`` or ``<dir>/data/<file>``), else
    the verified download of the pinned commit (cached)."""
    name, _, _ = _subtask(subtask)
    if natural_plan_dir:
        folder = Path(natural_plan_dir).expanduser()
        for candidate in (folder / name, folder / "data" / name):
            if candidate.is_file():
                return candidate
        raise UserError(f"natural_plan_dir {folder} holds neither {name} nor data/{name}")
    pin = pinned_file(subtask)
    return fetch_file(pin, cache_root() / f"natural_plan-{COMMIT[:12]}" / pin.path)


def read_examples(path: Path, subtask: str) -> list[dict]:
    """The examples of one upstream file as rows (``id`` first), fields checked."""
    _, _, required = _subtask(subtask)
    data = read_json(path, "NATURAL PLAN file")
    if not isinstance(data, dict) or not data:
        raise UserError(f"{path}: expected a JSON object of examples keyed by id")
    rows = []
    for key, example in data.items():
        if not isinstance(example, dict):
            raise UserError(f"{path}: example {key!r} is not an object")
        missing = [f for f in required if f not in example]
        if missing:
            raise UserError(f"{path}: example {key!r} lacks {', '.join(missing)}")
        row = {"id": str(key), **example}
        for field in JSON_TEXT_FIELDS:
            if field in row and not isinstance(row[field], str):
                row[field] = json.dumps(row[field], ensure_ascii=False)
        rows.append(row)
    return rows


def load_natural_plan(subtask: str = "trip", natural_plan_dir: str | Path | None = None, **kwargs) -> datasets.DatasetDict:
    """One NATURAL PLAN task as split ``test`` (lm-eval ``custom_dataset``; ``natural_plan_dir`` from ``--metadata``)."""
    path = data_file(subtask, natural_plan_dir)
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(read_examples(path, subtask))})


def natural_plan_doc_to_target(doc: dict) -> str:
    """The gold plan as text (meeting planning stores it as a list of steps)."""
    plan = doc["golden_plan"]
    return plan if isinstance(plan, str) else " ".join(str(step) for step in plan)
