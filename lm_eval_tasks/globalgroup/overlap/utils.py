"""Thin glue for the GlobalGroup word-overlap YAMLs: lm-eval loads this file by path (no package context)."""

from collections.abc import Mapping, Sequence

from custom_metrics.difficulty import word_overlap
from datasets_build.load import load_globalgroup  # noqa: F401
from datasets_build.prompts import canprop_doc_to_target as doc_to_target  # noqa: F401
from datasets_build.prompts import globalgroup_canprop_doc_to_text as doc_to_text  # noqa: F401
from plumbing.stats import nanmean  # noqa: F401


def process_overlap_results(doc: Mapping, results: Sequence[str]) -> dict[str, float]:
    """Seed 000 §6: word overlap and length of the model's candidate-proposal response (NaN if unparseable)."""
    return word_overlap(results[0] if results else "")
