"""Thin glue for the GlobalGroup YAMLs: lm-eval loads this file by path, so it only re-exports.

Logic lives in installed packages: datasets_build.load (data), datasets_build.prompts (prompts),
custom_metrics.globalgroup (scores), plumbing.stats (NaN-aware mean).
"""

from custom_metrics.globalgroup import process_results  # noqa: F401
from datasets_build.load import load_globalgroup  # noqa: F401
from datasets_build.matched import load_globalgroup_fresh  # noqa: F401
from datasets_build.prompts import globalgroup_doc_to_target as doc_to_target  # noqa: F401
from datasets_build.prompts import globalgroup_doc_to_text as doc_to_text  # noqa: F401
from plumbing.stats import nanmean  # noqa: F401
