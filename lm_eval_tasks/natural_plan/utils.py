"""Thin glue for the NATURAL PLAN YAMLs: lm-eval loads this file by path, so it only re-exports.

Logic lives in installed packages: datasets_build.natural_plan (pinned download, local folder, gold text),
custom_metrics.natural_plan (the benchmark's rule-based parsers and scores).
"""

from custom_metrics.natural_plan import process_calendar, process_meeting, process_trip  # noqa: F401
from datasets_build.natural_plan import load_natural_plan  # noqa: F401
from datasets_build.natural_plan import natural_plan_doc_to_target as doc_to_target  # noqa: F401
