"""docs/FIDELITY.md stays true to the code: every `package.module.name` it names exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("custom_metrics", "multiturn", "datasets_build", "lm_eval_tasks", "triangulation", "plumbing")


def _named_objects() -> list[str]:
    text = (REPO / "docs" / "FIDELITY.md").read_text(encoding="utf-8")
    pattern = rf"`((?:{'|'.join(PACKAGES)})(?:\.\w+)+)`"
    return sorted(set(re.findall(pattern, text)))


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):  # the longest importable module prefix, then attributes
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(dotted)


def test_every_named_function_exists():
    names = _named_objects()
    assert len(names) >= 15  # the table names our code in every row
    missing = []
    for dotted in names:
        try:
            _resolve(dotted)
        except (ModuleNotFoundError, AttributeError) as error:
            missing.append(f"{dotted}: {error}")
    assert not missing, missing


def test_one_table_per_family_with_the_four_columns():
    text = (REPO / "docs" / "FIDELITY.md").read_text(encoding="utf-8")
    headers = re.findall(r"^\| metric \| paper rule \(section\) \| our code \| same / variant \|$", text, flags=re.M)
    assert len(headers) == len(re.findall(r"^## ", text, flags=re.M)) >= 5
