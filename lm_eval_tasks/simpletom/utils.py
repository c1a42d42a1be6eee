"""Thin glue for the SimpleToM YAMLs: lm-eval loads this file by path, so it only re-exports.

Logic lives in installed packages: datasets_build.simpletom (Hub loading, prompt, choices, gold index).
"""

from datasets_build.simpletom import load_simpletom  # noqa: F401
from datasets_build.simpletom import simpletom_doc_to_choice as doc_to_choice  # noqa: F401
from datasets_build.simpletom import simpletom_doc_to_target as doc_to_target  # noqa: F401
from datasets_build.simpletom import simpletom_doc_to_text as doc_to_text  # noqa: F401
