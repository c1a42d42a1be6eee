"""Thin glue for the LM-Pragmatics YAMLs: lm-eval loads this file by path, so it only re-exports.

Logic lives in installed packages: datasets_build.load (the built folder), datasets_build.lm_pragmatics
(option numbers and gold index).
"""

from datasets_build.lm_pragmatics import doc_to_choice, doc_to_target  # noqa: F401
from datasets_build.load import load_lm_pragmatics  # noqa: F401
