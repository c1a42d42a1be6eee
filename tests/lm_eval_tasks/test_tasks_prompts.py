"""Prompts of the word-grouping tasks on real built docs, and the upstream prompts they must reproduce."""

from __future__ import annotations

import ast
import csv
import json
import re

import pytest

from custom_metrics.parsing import parse_groups
from datasets_build import prompts as P
from plumbing.errors import UserError
from tests.support.built_data import use_built_data

SUBSETS = ["en", "es", "es_en", "zh", "zh_en", "hi", "hi_en", "ar", "ar_en", "nyt_shuf", "nyt_seq"]
LANGUAGES = ["en", "es", "zh", "hi", "ar"]
SCRIPT = {"zh": r"[\u4e00-\u9fff]", "hi": r"[\u0900-\u097f]", "ar": r"[\u0600-\u06ff]", "es": r"palabras"}


@pytest.fixture
def built(upstream, monkeypatch):
    return use_built_data(upstream, monkeypatch)


def load(config: str, split: str = "test"):
    from datasets_build.load import load_globalgroup

    return load_globalgroup(config=config, version=1.0)[split]  # lm-eval passes metadata as kwargs


# ------------------------------------------------------------------------------------ A.1 response
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("n_groups", [2, 3, 4])
def test_template_example_is_in_the_answer_format(language, n_groups):
    """The example answer of every template parses (with our parser) into n_groups groups of 4 words from its pool."""
    tpl = P.response_template(language)
    example = tpl["examples"][str(n_groups)]
    pool = ast.literal_eval(example["pool"])
    groups = parse_groups(example["answer"], pool)
    assert len(pool) == 4 * n_groups
    assert len(groups) == n_groups
    assert all(g.topic and len(g.words) == 4 and set(g.words) <= set(pool) for g in groups)
    assert sorted(w for g in groups for w in g.words) == sorted(pool)
    assert tpl["source"]


def test_english_4x4_prompt_has_the_papers_wording():
    words = [f"w{i}" for i in range(16)]
    text = P.globalgroup_prompt(words, 4, 4, "en")
    assert text.startswith(
        "I am going to give you a pool of 16 words. These 16 words can be separated into 4 equal "
        "groups of 4 words linked under some category. I want you to tell me the four groups"
    )
    assert "Given the pool ['Mile', 'League', 'Jazz', 'Heat', 'Yard', 'Cabaret'" in text
    assert f"Now, given the pool: {words!s}. The answer must be 4 groups, each of them containing 4 words" in text
    assert text.endswith("Give me the answer immediately.")


def test_unknown_language_is_a_user_error():
    with pytest.raises(UserError, match="no GlobalGroup prompt for language 'fr'"):
        P.globalgroup_prompt(["a", "b"], 2, 1, "fr")


@pytest.mark.parametrize("subset", SUBSETS)
def test_doc_to_text_on_built_docs(built, subset):
    doc = load(f"{subset}_4x4")[0]
    text = P.globalgroup_doc_to_text(doc)
    assert P.format_word_list(doc["words"]) in text
    assert "16" in text and "<" in text
    language = subset if subset in SCRIPT else "en"
    if language == "en":
        assert text.startswith("I am going to give you a pool of 16 words.")
    else:
        instructions = text.split("[")[0]  # before the example pool
        assert re.search(SCRIPT[language], instructions), "instructions must be in the subset's language"
    # the gold target is in the answer format: our parser reads it back as the gold groups
    target = P.globalgroup_doc_to_target(doc)
    parsed = parse_groups(target, doc["words"])
    assert [sorted(g.words) for g in parsed] == [sorted(g["words"]) for g in doc["groups"]]
    assert all(g.topic for g in parsed)


def test_setting_prompts_follow_the_game_size(built):
    doc = load("es_3x2", "dev")[0]
    text = P.globalgroup_doc_to_text(doc)
    assert "Te voy a dar un conjunto de 6 palabras" in text and "3 grupos iguales de 2 palabras" in text
    assert "<Planetas>" in text  # the 3-group example
    doc = load("nyt_seq_4x3")[5]
    assert "pool of 12 words" in P.globalgroup_doc_to_text(doc)


# --------------------------------------------------------------------------- A.3 candidate proposal
def test_every_published_canprop_prompt_is_reproduced_by_its_config_template(upstream):
    """For each scored file, one template rebuilds every published prompt of the file from its two lists."""
    gg = upstream / "globalgroup"
    templates = P.canprop_templates_from_upstream(gg)
    assert len(templates) == 90  # 93 settings minus the three Hindi files absent upstream (MISSING.txt)
    checked = 0
    for path in sorted((gg / P.SCORED_DIR).glob("*/test/scored_*.csv")):
        parts = path.name.split("#")
        key = f"{parts[1].replace('-', '_')}_{parts[3]}x{parts[5]}"
        with path.open(encoding="utf-8", newline="") as fh:
            prompts = {row["CanProp Prompt"] for row in csv.DictReader(fh)}
        for prompt in prompts:
            template, topics, words = P.split_canprop_prompt(prompt)
            assert template == templates[key], key
            assert P.canprop_prompt(template, topics, words) == prompt
            checked += 1
    assert checked > 20_000


def test_overlap_prompt_on_built_docs(built):
    doc = load("zh_4x4")[0]
    assert P.globalgroup_canprop_doc_to_text(doc) == doc["canprop_prompt"]  # the authors' exact prompt
    no_prompt = dict(doc, canprop_prompt=None)
    text = P.globalgroup_canprop_doc_to_text(no_prompt)  # from the build's stored templates
    assert text.startswith("我将给你一个词汇列表") and P.format_word_list(doc["words"]) in text
    assert P.format_word_list([g["topic"] for g in doc["groups"]]) in text
    assert (built / "globalgroup" / "prompts" / P.CANPROP_FILE).is_file()


def test_hindi_4x4_overlap_prompt_is_our_documented_stand_in(built):
    doc = load("hi_4x4")[0]
    assert not doc["canprop_prompt"]  # unpublished upstream
    text = P.globalgroup_canprop_doc_to_text(doc)
    assert "4 विषय" in text and "3 विषय" not in text
    assert text.count("LIST_") == 0 and P.format_word_list(doc["words"]) in text
    assert "not the authors' wording" in json.loads((P.TEMPLATES_DIR / "canprop_derived.json").read_text(encoding="utf-8"))["_about"]


# -------------------------------------------------------------------------------------- Connections
def test_connections_prompt_on_built_docs(built, upstream):
    from datasets_build.load import load_connections

    doc = load_connections(version=1.0)["test"][0]
    text = P.connections_doc_to_text(doc)
    original = (upstream / "connections" / P.CONNECTIONS_UPSTREAM_PROMPT).read_text(encoding="utf-8")
    assert text == original.replace("InsertGame", ", ".join(doc["words"]))
    assert f"Words : [{', '.join(doc['words'])}]" in text
    assert sorted(doc["words"]) == sorted(w for g in doc["groups"] for w in g["words"])
    # the gold target is read back by the parser as the four gold groups
    parsed = parse_groups(P.connections_doc_to_target(doc), doc["words"])
    assert [sorted(g.words) for g in parsed] == [sorted(g["words"]) for g in doc["groups"]]


def test_connections_prompt_needs_no_upstream_after_a_build(built, monkeypatch):
    monkeypatch.delenv("TRIANGULATE_UPSTREAM", raising=False)
    P.connections_template.cache_clear()
    assert "Example 4:" in P.connections_prompt(["A", "B"])
    P.connections_template.cache_clear()


def test_missing_build_names_the_build_command(tmp_path, monkeypatch):
    from datasets_build.load import load_connections, load_globalgroup

    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path))
    monkeypatch.delenv("TRIANGULATE_UPSTREAM", raising=False)
    for fn in (
        lambda: load_globalgroup(config="zh_4x4"),
        load_connections,
        P.connections_template.__wrapped__,
        P.canprop_templates.__wrapped__,
    ):
        with pytest.raises(UserError, match="triangulate data build"):
            fn()


def test_prompts_never_fall_back_to_upstream(upstream, tmp_path, monkeypatch):
    """At task time the prompts come from the built folders only, even with TRIANGULATE_UPSTREAM set."""
    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path))
    monkeypatch.setenv("TRIANGULATE_UPSTREAM", str(upstream))
    for fn in (P.connections_template.__wrapped__, P.canprop_templates.__wrapped__):
        with pytest.raises(UserError, match="not built.*triangulate data build"):
            fn()


def test_built_folder_without_its_prompts_is_not_built(tmp_path, monkeypatch):
    folder = tmp_path / "connections"
    folder.mkdir()
    (folder / "README.md").write_text("card\n", encoding="utf-8")  # built by something that stored no prompt
    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path))
    with pytest.raises(UserError, match="not built with its prompts.*triangulate data build"):
        P.connections_template.__wrapped__()
