"""datasets_build.lm_pragmatics: the 35 upstream story-prompt files -> 7 configs x 5 seed splits (845 rows),
rows faithful to the upstream prompts, bad sources as one UserError, deterministic output."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from datasets_build.lm_pragmatics import PHENOMENA, REQUIRED, SEEDS, build, doc_to_choice, doc_to_target, read_seed_file
from plumbing.errors import UserError


@pytest.fixture(scope="module")
def built(upstream, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lmp-data")
    summary = build(root / "lm_pragmatics")
    assert summary["configs"] == 7 and summary["rows"] == 845
    assert summary["sizes"]["coherence"] == {f"seed_{s}": 40 for s in SEEDS}
    return root


def test_deterministic(built, tmp_path):
    build(tmp_path / "again")
    for shard in (built / "lm_pragmatics" / "data").rglob("*.parquet"):
        again = tmp_path / "again" / shard.relative_to(built / "lm_pragmatics")
        assert again.read_bytes() == shard.read_bytes(), shard.name


def test_configs_are_the_seven_phenomena(built):
    from datasets_build.load import built_configs

    configs = built_configs(built / "lm_pragmatics")
    assert sorted(configs) == sorted(PHENOMENA)
    assert all(sorted(splits) == [f"seed_{s}" for s in SEEDS] for splits in configs.values())


def test_built_rows_match_upstream_prompts(built):
    from datasets_build.load import load_lm_pragmatics

    data = load_lm_pragmatics("humour", path=built / "lm_pragmatics")
    assert sorted(data) == [f"seed_{s}" for s in SEEDS]
    row = data["seed_0"][0]
    assert row["prompt"].startswith("Task: You will read jokes") and row["prompt"].endswith("\nAnswer: ")
    assert doc_to_choice(row) == ["1", "2", "3", "4", "5"]
    gold = doc_to_target(row)
    # the gold option is the one whose (randomized) label is the correct non-literal reading
    assert row["randomized_labels_complex"][gold] == "CorrectNonLiteral"
    for split in data.values():
        for doc in split:
            assert f"{doc['randomized_true_answer']}) " in doc["prompt"]


def test_bad_option_order_is_one_user_error(tmp_path):

    path = tmp_path / "Irony_prompts_seed0_examples0.csv"

    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(REQUIRED)
        writer.writerow(["IV", "1", "s", "[1, 1]", "['a', 'b']", "1", "['a', 'b']", "False", "Task\n1) a\n2) b\nAnswer: ", "0"])
    with pytest.raises(UserError, match="row 2: randomized_option_order"):
        read_seed_file(path, "irony", 0)
