"""Connections builder on the real upstream snapshot: the paper's 438 + 3 games, gold order, taxonomy."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from datasets_build import connections as cx
from datasets_build.hub import atomic_dir, read_card_sizes
from datasets_build.load import load_connections
from plumbing.errors import UserError

KNOWLEDGE = {
    "semantic relations", "associative relations", "encyclopedic", "multiword expressions",
    "phonology", "orthography", "morphology", "combined",
}  # fmt: skip


@pytest.fixture(scope="module")
def cx_folder(upstream, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cx") / "connections"
    with atomic_dir(out) as tmp:
        cx.build(tmp)
    return out


@pytest.fixture(scope="module")
def cx_data(cx_folder):
    return load_connections(path=cx_folder)


def test_438_test_and_3_fewshot_games(cx_folder, cx_data):
    assert read_card_sizes(cx_folder) == {"default": {"test": 438, "fewshot": 3}}
    assert {s: len(cx_data[s]) for s in cx_data} == {"test": 438, "fewshot": 3}
    assert [r["game_id"] for r in cx_data["fewshot"]] == [171, 172, 173]
    assert 147 not in {r["game_id"] for r in cx_data["test"]}
    assert (cx_folder / "prompts" / "prompt_llm.txt").is_file()
    assert "How the upstream files map to the paper's 438 games" in (cx_folder / "README.md").read_text(encoding="utf-8")


def test_test_split_is_the_set_the_authors_scored(upstream, cx_data):
    """The 438 games are exactly those of the upstream per-game score files (computed, not assumed)."""
    for scores in ("claude3.5sonnet_scores.csv", "gpt4o_scores.csv"):
        with (upstream / "connections" / "scoring" / scores).open(encoding="utf-8") as handle:
            scored = {frozenset(w.strip() for w in row["Allwords"].split(", ")) for row in csv.DictReader(handle)}
        ours = {frozenset(w for g in r["groups"] for w in g["words"]) for r in cx_data["test"]}
        assert len(scored) == 438 and ours == scored


def test_few_shot_games_are_the_prompts_examples(upstream, cx_data):
    prompt = (upstream / "connections" / "automated_call" / "prompt_llm.txt").read_text(encoding="utf-8")
    for row in cx_data["fewshot"]:
        assert all(word in prompt for word in row["words"])


def test_gold_groups_in_difficulty_order_with_taxonomy(upstream, cx_data):
    gold = json.loads((upstream / "connections" / "scoring" / "scripts" / "gold_data.json").read_text(encoding="utf-8"))
    for row in list(cx_data["test"]) + list(cx_data["fewshot"]):
        assert [g["level"] for g in row["groups"]] == [0, 1, 2, 3]
        assert [g["color"] for g in row["groups"]] == ["yellow", "green", "blue", "purple"]
        upstream_groups = gold[row["game_id"]]["categories"]
        assert [g["topic"] for g in row["groups"]] == list(upstream_groups)
        gold_words = [x for g in row["groups"] for x in g["words"]]
        assert len(row["words"]) == 16 == len(set(gold_words)) and sorted(row["words"]) == sorted(gold_words)
        for group in row["groups"]:
            assert group["knowledge"] and set(group["knowledge"]) <= KNOWLEDGE, group
            assert group["complexity"] in {"simple", "complex"}
    assert sum(r["words"] != [x for g in r["groups"] for x in g["words"]] for r in cx_data["test"]) == 438  # shuffled
    by_id = {r["game_id"]: r for r in cx_data["test"]}
    assert by_id[350]["groups"][3]["words"] == ["22", "451", "2001", "20,000"]  # all_games.txt splits "20,000"
    assert by_id[0]["groups"][3]["knowledge"] == ["semantic relations", "morphology"]


def _copy(upstream: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "connections"
    shutil.copytree(upstream / "connections", dst, copy_function=os.symlink)
    return dst


def _rewrite(path: Path, data) -> None:
    path.unlink()
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")


def test_bad_sources_name_file_and_entry(upstream, tmp_path):
    root = _copy(upstream, tmp_path)
    gold_path = root / cx.GOLD
    gold = json.loads(gold_path.read_text(encoding="utf-8"))

    broken = json.loads(json.dumps(gold))
    first = next(iter(broken[5]["categories"]))
    del broken[5]["categories"][first]
    _rewrite(gold_path, broken)
    with pytest.raises(UserError, match=r"gold_data.json: row entry 5: 3 groups, expected 4"):
        cx.read_games(root)

    broken = json.loads(json.dumps(gold))
    broken[9]["categories"][first if first in broken[9]["categories"] else next(iter(broken[9]["categories"]))] = ["A", "B"]
    _rewrite(gold_path, broken)
    with pytest.raises(UserError, match=r"gold_data.json: row entry 9: group .* is not a list of 4 words"):
        cx.read_games(root)

    _rewrite(gold_path, "[{not json")
    with pytest.raises(UserError, match=r"gold_data.json: malformed JSON"):
        cx.read_games(root)

    _rewrite(gold_path, gold[:-1])
    with pytest.raises(UserError, match=r"expected two lists of equal length"):
        cx.read_games(root)

    _rewrite(gold_path, gold)
    (root / cx.TAXONOMY).unlink()
    with pytest.raises(UserError, match=r"game_with_knowledge_taxonomy.json: file is missing"):
        cx.read_games(root)


def test_word_list_parser_handles_curly_quotes_without_eval():
    assert cx.parse_word_list("['22', '451', '2001', ’20,000’]") == ["22", "451", "2001", "20,000"]
    assert cx.parse_word_list("[‘ACTION', 'CLAIM']") == ["ACTION", "CLAIM"]
    assert cx.parse_word_list("['__import__(\"os\")']") == ['__import__("os")']  # text, never evaluated
