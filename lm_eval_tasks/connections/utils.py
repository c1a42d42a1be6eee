"""Thin glue for the Connections YAML: lm-eval loads this file by path, so it only re-exports."""

from custom_metrics.connections import process_results  # noqa: F401
from datasets_build.load import load_connections  # noqa: F401
from datasets_build.prompts import connections_doc_to_target as doc_to_target  # noqa: F401
from datasets_build.prompts import connections_doc_to_text as doc_to_text  # noqa: F401
from plumbing.stats import nanmean  # noqa: F401
