"""CLadder v1.5 (Jin et al. 2023, NeurIPS; Hub ``causalnlp/CLadder``): loading and the evaluation prompt.

The version seed 003 evaluated (``data/full_v1.5_default.csv``, 10,112 yes/no questions) exists only on
the Hugging Face Hub, so the task loads it with ``datasets`` at run time; a local folder with the same
layout (``<folder>/data/full_v1.5_default.csv``) goes through the same call (``cladder_source``).
Columns used: ``prompt`` (background, given information and question, one text) and ``label`` (yes/no).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import datasets

from datasets_build.load import load_hub_files
from plumbing.jsonio import read_json

HUB_ID = "causalnlp/CLadder"
DATA_FILE = "data/full_v1.5_default.csv"
TEMPLATE_FILE = Path(__file__).resolve().parent / "templates" / "cladder" / "prompt.json"
LOCAL_HINT = (
    'the task needs the Hugging Face Hub, or a local copy: --metadata \'{"cladder_source": "DIR"}\' with DIR/data/full_v1.5_default.csv'
)


def load_cladder(cladder_source: str | None = None, cladder_revision: str | None = None, **kwargs) -> datasets.DatasetDict:
    """CLadder v1.5 as split ``test``: from the Hub (``causalnlp/CLadder``) or a local folder of its layout."""
    return load_hub_files(cladder_source or HUB_ID, {"test": DATA_FILE}, revision=cladder_revision, hint=LOCAL_HINT)


@lru_cache(maxsize=1)
def cladder_template() -> str:
    return read_json(TEMPLATE_FILE, "prompt template")["template"]


def cladder_doc_to_text(doc: dict) -> str:
    """The evaluation prompt: expert system text, the item's ``prompt``, the Yes/No answer instruction."""
    return cladder_template().replace("{prompt}", str(doc["prompt"]))


def cladder_doc_to_target(doc: dict) -> str:
    return str(doc["label"]).strip().lower()
