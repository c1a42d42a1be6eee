"""Write the LM-Pragmatics task YAMLs of this folder (run: ``python lm_eval_tasks/lm_pragmatics/_generate.py``).

- ``lm_pragmatics_<phenomenon>_seed_<k>``  one task per phenomenon and option-order seed (35), split ``seed_<k>``
- ``lm_pragmatics_<phenomenon>``            group: the five seeds of a phenomenon, micro-averaged (7)
- ``lm_pragmatics``                         group: the seven phenomena, micro-averaged over all 845 items

``weight_by_size: true`` at both levels makes the top score the mean over all items (seed 003,
App. E: "micro-average over subtasks"). Phenomena and seeds come from :mod:`datasets_build.lm_pragmatics`.
``tests/lm_eval_tasks/test_lm_pragmatics.py`` checks that the committed files equal this script's output.
"""

from __future__ import annotations

import sys
from pathlib import Path

from datasets_build.lm_pragmatics import PHENOMENA, SEEDS
from lm_eval_tasks._generated import HEADER, write_generated

HERE = Path(__file__).resolve().parent
AGGREGATE = "aggregate_metric_list:\n  - metric: acc\n    aggregation: mean\n    weight_by_size: true\nmetadata:\n  version: 1.0\n"


def _task(phenomenon: str, seed: int) -> str:
    return (
        f"{HEADER}include: _lm_pragmatics_template_yaml\ntask: lm_pragmatics_{phenomenon}_seed_{seed}\n"
        f"dataset_kwargs:\n  config: {phenomenon}\ntest_split: seed_{seed}\n"
    )


def _group(name: str, members: list[str]) -> str:
    return f"{HEADER}group: {name}\ntask:\n" + "".join(f"  - {m}\n" for m in members) + AGGREGATE


def expected_files() -> dict[str, str]:
    """File name -> content of every generated YAML."""
    files: dict[str, str] = {}
    for phenomenon in PHENOMENA:
        for seed in SEEDS:
            files[f"lm_pragmatics_{phenomenon}_seed_{seed}.yaml"] = _task(phenomenon, seed)
        files[f"lm_pragmatics_{phenomenon}.yaml"] = _group(
            f"lm_pragmatics_{phenomenon}", [f"lm_pragmatics_{phenomenon}_seed_{s}" for s in SEEDS]
        )
    files["lm_pragmatics.yaml"] = _group("lm_pragmatics", [f"lm_pragmatics_{p}" for p in PHENOMENA])
    return files


def main(folder: Path = HERE) -> int:
    return write_generated(folder, expected_files(), ["lm_pragmatics*.yaml"])


if __name__ == "__main__":
    sys.exit(main())
