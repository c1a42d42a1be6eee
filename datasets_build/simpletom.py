"""SimpleToM (Gu et al. 2025; Hub ``allenai/SimpleToM``): loading and the multiple-choice prompt.

The dataset exists only on the Hugging Face Hub (three QA configs, one ``test.jsonl`` each), so the tasks
load it with ``datasets`` at run time; a local folder with the same layout
(``<folder>/<config>/test.jsonl``) goes through the same call (``simpletom_source``). Fields used: ``story``,
``question``, ``choices`` (``{"text": [...], "label": ["A", "B"]}``) and ``answerKey``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import datasets

from datasets_build.load import load_hub_files
from plumbing.errors import UserError
from plumbing.jsonio import read_json

HUB_ID = "allenai/SimpleToM"
# task suffix -> Hub config (folder); seed 003: mental_state = Theory of Mind, behavior + judgment = Attribution and Judgement
SUBSETS = {"mental_state": "mental-state-qa", "behavior": "behavior-qa", "judgment": "judgment-qa"}
TEMPLATE_FILE = Path(__file__).resolve().parent / "templates" / "simpletom" / "prompt.json"
LOCAL_HINT = 'the task needs the Hugging Face Hub, or a local copy: --metadata \'{"simpletom_source": "DIR"}\' with DIR/<config>/test.jsonl'


def load_simpletom(
    config: str = "mental-state-qa", simpletom_source: str | None = None, simpletom_revision: str | None = None, **kwargs
) -> datasets.DatasetDict:
    """One SimpleToM QA config as split ``test``: from the Hub (``allenai/SimpleToM``) or a local folder of its layout."""
    if config not in SUBSETS.values():
        raise UserError(f"unknown SimpleToM config {config!r}; available: {', '.join(SUBSETS.values())}")
    return load_hub_files(simpletom_source or HUB_ID, {"test": f"{config}/test.jsonl"}, revision=simpletom_revision, hint=LOCAL_HINT)


@lru_cache(maxsize=1)
def simpletom_templates() -> dict:
    return read_json(TEMPLATE_FILE, "prompt template")


def simpletom_doc_to_choice(doc: dict) -> list[str]:
    """``["(A): text", "(B): text"]``: listed in the prompt and scored as the continuations."""
    form = simpletom_templates()["choice"]
    return [
        form.replace("{label}", str(label)).replace("{text}", str(text))
        for label, text in zip(doc["choices"]["label"], doc["choices"]["text"])
    ]


def simpletom_doc_to_text(doc: dict) -> str:
    fields = {"story": doc["story"], "question": doc["question"], "choices": "\n".join(simpletom_doc_to_choice(doc))}
    # one pass over the template only: braces inside the story are kept as they are
    return re.sub(r"\{(story|question|choices)\}", lambda m: str(fields[m.group(1)]), simpletom_templates()["template"])


def simpletom_doc_to_target(doc: dict) -> int:
    labels = list(doc["choices"]["label"])
    if doc["answerKey"] not in labels:
        raise UserError(f"SimpleToM item {doc.get('id')!r}: answerKey {doc['answerKey']!r} is not one of {labels}")
    return labels.index(doc["answerKey"])
