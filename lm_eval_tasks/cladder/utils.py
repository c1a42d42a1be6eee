"""Thin glue for the CLadder YAML: lm-eval loads this file by path, so it only re-exports.

Logic lives in installed packages: datasets_build.cladder (Hub loading, prompt), custom_metrics.cladder (yes/no scoring).
"""

from custom_metrics.cladder import process_results  # noqa: F401
from datasets_build.cladder import cladder_doc_to_target as doc_to_target  # noqa: F401
from datasets_build.cladder import cladder_doc_to_text as doc_to_text  # noqa: F401
from datasets_build.cladder import load_cladder  # noqa: F401
