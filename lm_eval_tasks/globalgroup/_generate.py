"""Write the GlobalGroup task YAMLs of this folder (run: ``python lm_eval_tasks/globalgroup/_generate.py``).

One YAML per task (lm-eval indexes ``*.yaml`` only; the shared ``_*_yaml`` templates are not indexed):

- ``globalgroup_<subset>``            the headline 4x4 test games of a subset (seed 000, Table 2)
- ``globalgroup_<subset>_<g>x<w>``    every game setting (93: nine per subset, three for nyt_seq)
- ``overlap/globalgroup_overlap_<subset>``  the candidate-proposal prompt (Appendix A.3) on the 4x4 games
  (own folder and utils.py, so a problem there cannot break the main tasks)
- ``globalgroup``                     group: unweighted mean over the eleven 4x4 tasks
- ``globalgroup_<subset>_sampled``    the same 4x4 games decoded as seed 000 App. B ran its open models (tag and group
  ``globalgroup_sampled``): :data:`PAPER_SAMPLING`
- ``globalgroup_<subset>_fresh``      the matched fresh twin of the 4x4 test games (issue 33; tag
  ``globalgroup_fresh``): ``datasets_build.matched``, generated on first use (seed 0)

``tests/lm_eval_tasks/test_tasks_registry.py`` checks that the committed files equal this script's output.
Subsets and game settings come from :mod:`datasets_build.globalgroup`, the metrics from
:mod:`custom_metrics.globalgroup` (their one home each).
"""

from __future__ import annotations

import sys
from pathlib import Path

from custom_metrics.globalgroup import METRICS
from datasets_build.globalgroup import SUBSET_NAMES, settings_of
from datasets_build.matched import FRESH_SUBSETS
from lm_eval_tasks._generated import HEADER, write_generated

HERE = Path(__file__).resolve().parent

HEADLINE = (4, 4)
#: seed 000 App. B, "Parameter settings for Llama-3-8B-Instruct and Mistral-7B-Instruct-v0.2": do_sample True,
#: top_k 50, top_p 0.9, temperature 0.6 ("greedy sampling can generate nonsense responses ... Therefore, we didn't
#: use it in our open-source tasks"); the template's max_gen_toks 512 new tokens stands for the paper's max_length 512
#: (prompt included). Aya-23-8B's own setting (temperature 0.3, no top_k/top_p) is not offered as a task.
PAPER_SAMPLING = "generation_kwargs:\n  until: []\n  do_sample: true\n  temperature: 0.6\n  top_k: 50\n  top_p: 0.9\n  max_gen_toks: 512\n"


def _task(name: str, template: str, config: str, tags: list[str], extra: str = "") -> str:
    tag_lines = "".join(f"  - {t}\n" for t in tags)
    return f"{HEADER}include: {template}\ntask: {name}\ntag:\n{tag_lines}{extra}dataset_kwargs:\n  config: {config}\n"


def _group(name: str = "globalgroup", suffix: str = "") -> str:
    tasks = "".join(f"  - globalgroup_{s}{suffix}\n" for s in SUBSET_NAMES)
    aggs = "".join(f"  - metric: {m}\n    aggregation: mean\n    weight_by_size: false\n" for m in METRICS)
    return f"{HEADER}group: {name}\ntask:\n{tasks}aggregate_metric_list:\n{aggs}metadata:\n  version: 1.0\n"


def expected_files() -> dict[str, str]:
    """File name -> content of every generated YAML."""
    files: dict[str, str] = {}
    g0, w0 = HEADLINE
    for subset in SUBSET_NAMES:
        files[f"globalgroup_{subset}.yaml"] = _task(
            f"globalgroup_{subset}", "_globalgroup_template_yaml", f"{subset}_{g0}x{w0}", ["globalgroup_4x4"]
        )
        files[f"globalgroup_{subset}_sampled.yaml"] = _task(
            f"globalgroup_{subset}_sampled",
            "_globalgroup_template_yaml",
            f"{subset}_{g0}x{w0}",
            ["globalgroup_sampled_4x4"],
            PAPER_SAMPLING,
        )
        if subset in FRESH_SUBSETS:
            files[f"globalgroup_{subset}_fresh.yaml"] = _task(
                f"globalgroup_{subset}_fresh",
                "_globalgroup_template_yaml",
                f"{subset}_{g0}x{w0}",
                ["globalgroup_fresh"],
                "custom_dataset: !function utils.load_globalgroup_fresh\n",
            )
        for g, w in settings_of(subset):
            files[f"globalgroup_{subset}_{g}x{w}.yaml"] = _task(
                f"globalgroup_{subset}_{g}x{w}",
                "_globalgroup_template_yaml",
                f"{subset}_{g}x{w}",
                ["globalgroup_settings", f"globalgroup_{subset}_settings"],
            )
        files[f"overlap/globalgroup_overlap_{subset}.yaml"] = _task(
            f"globalgroup_overlap_{subset}", "_overlap_template_yaml", f"{subset}_{g0}x{w0}", ["globalgroup_overlap"]
        )
    files["globalgroup.yaml"] = _group()
    files["globalgroup_sampled.yaml"] = _group("globalgroup_sampled", "_sampled")
    return files


def main(folder: Path = HERE) -> int:
    return write_generated(folder, expected_files(), ["globalgroup*.yaml", "overlap/globalgroup*.yaml"])


if __name__ == "__main__":
    sys.exit(main())
