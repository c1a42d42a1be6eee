"""Thin glue for the GlobalGroup word-overlap YAMLs: lm-eval loads this file by path, so it only re-exports."""

from custom_metrics.difficulty import process_overlap_results  # noqa: F401
from custom_metrics.prompts import canprop_doc_to_target as doc_to_target  # noqa: F401
from custom_metrics.prompts import globalgroup_canprop_doc_to_text as doc_to_text  # noqa: F401
from datasets_build.load import load_globalgroup  # noqa: F401
from multiturn.game import nanmean  # noqa: F401
