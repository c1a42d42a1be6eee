"""datasets_build.cladder / simpletom: the Hub loader's local-folder path, its errors, and the prompt templates."""

from __future__ import annotations

import json

import pytest

from datasets_build.cladder import cladder_doc_to_target, cladder_doc_to_text, cladder_template, load_cladder
from datasets_build.load import load_hub_files
from datasets_build.simpletom import (
    SUBSETS,
    load_simpletom,
    simpletom_doc_to_choice,
    simpletom_doc_to_target,
    simpletom_doc_to_text,
    simpletom_templates,
)
from plumbing.errors import UserError

DOC = {
    "id": "x_sev1_action",
    "story": "The milk is sour {really}. Ann takes it to the till.",
    "question": "What will Ann likely do next?",
    "choices": {"text": ["pay for the milk", "complain about the sour milk"], "label": ["A", "B"]},
    "answerKey": "A",
}


def test_templates_hold_their_placeholders_once():
    assert cladder_template().count("{prompt}") == 1
    template = simpletom_templates()["template"]
    assert all(template.count("{" + k + "}") == 1 for k in ("story", "question", "choices"))


def test_cladder_prompt_and_target():
    text = cladder_doc_to_text({"prompt": "Does {X} cause Y?", "label": "Yes"})
    assert text.startswith("You are an expert in causal inference.") and "\nDoes {X} cause Y?\nStart your answer" in text
    assert cladder_doc_to_target({"label": " Yes"}) == "yes"


def test_simpletom_prompt_choices_and_gold():
    assert simpletom_doc_to_choice(DOC) == ["(A): pay for the milk", "(B): complain about the sour milk"]
    text = simpletom_doc_to_text(DOC)
    assert "\nStory: The milk is sour {really}. Ann takes it to the till.\nQuestion: What will Ann likely do next?\n" in text
    assert text.endswith("(A): pay for the milk\n(B): complain about the sour milk\nAnswer:")
    assert simpletom_doc_to_target(DOC) == 0
    with pytest.raises(UserError, match="answerKey 'C'"):
        simpletom_doc_to_target({**DOC, "answerKey": "C"})


def test_local_folder_in_the_hub_layout_loads_every_config(tmp_path):
    for config in SUBSETS.values():
        (tmp_path / config).mkdir()
        (tmp_path / config / "test.jsonl").write_text(json.dumps(DOC) + "\n", encoding="utf-8")
        data = load_simpletom(config, simpletom_source=str(tmp_path), pretrained="ignored-model-arg")
        assert list(data) == ["test"] and data["test"][0]["choices"]["label"] == ["A", "B"]
    with pytest.raises(UserError, match="unknown SimpleToM config 'tom-qa'"):
        load_simpletom("tom-qa", simpletom_source=str(tmp_path))


def test_local_folder_missing_the_file_is_one_user_error(tmp_path):
    with pytest.raises(UserError, match="lacks data/full_v1.5_default.csv"):
        load_cladder(cladder_source=str(tmp_path))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.csv").write_text("prompt,label\n", encoding="utf-8")
    with pytest.raises(UserError, match="cannot load"):
        load_hub_files(tmp_path, {"test": "data/x.csv"}, hint="try again")  # a header-only CSV holds no rows
