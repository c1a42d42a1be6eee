"""Matched fresh twins (issue 33): difficulty distributions equal the published ones, nothing published is
reused as a whole, the same seed gives byte-identical folders."""

from __future__ import annotations

import functools
import json
from collections import Counter

import pytest
from scipy.stats import ks_2samp

from custom_metrics import difficulty
from datasets_build import generate, matched, matched_clembench
from datasets_build import globalgroup as gg
from datasets_build.clembench_upstream import load_instances
from datasets_build.load import load_globalgroup
from triangulation.cli.main import main


@pytest.fixture(scope="module")
def gg_root(upstream):
    return upstream / "globalgroup"


def _tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("task", ["globalgroup_zh", "globalgroup_nyt_seq_4x3", "globalgroup_ar_en_2x3"])
def test_groups_x_words_and_culturally_related_counts_equal_the_published_exactly(gg_root, task):
    subset, g, w = matched.globalgroup_setting(task)
    published, taken = matched.published_games(gg_root, subset, g, w)
    found = matched.matched_globalgroup(gg_root, task, seed=3)
    assert len(found.rows) == len(published) == 300
    assert found.matched_on == ["groups x words", "culturally related groups per game"]  # no vectors here
    for pub, fresh in zip(published, found.rows):
        assert (fresh["n_groups"], fresh["group_size"], len(fresh["groups"])) == (g, w, g)
        assert {len(gr["words"]) for gr in fresh["groups"]} == {w}
        assert matched.cultural_count(fresh["groups"]) == matched.cultural_count(pub["groups"])  # per game, so per set
        assert fresh["ari"] is None
    keys = [gg.groups_key(r["groups"]) for r in found.rows]
    assert len(set(keys)) == len(keys) and not set(keys) & taken  # no published game, no repeat
    assert Counter(found.published["culturally_related"]) == Counter(found.fresh["culturally_related"])


def test_ari_distribution_matches_the_published_when_vectors_are_present(gg_root, tmp_path, monkeypatch):
    """Seed 000 §6 ARI on real (small, trained here) fastText vectors, on both sides: two-sample KS p > 0.05, and the
    nearest-neighbour matching brings each fresh game's ARI closer to its published game's than unmatched sampling.
    K-means restarts are cut (2 seeds x 2 inits instead of 10 x 10) to keep the test short."""
    from tests.support.fasttext_small import train_small_fasttext

    sheet = gg.read_groupings(gg_root / "Grouping Datasets" / gg.SUBSETS["en"].groupings)
    train_small_fasttext(tmp_path / "ft", {x.topic: x.words for x in sheet}, lang="en", dim=8, sentences=1500)
    monkeypatch.setenv("TRIANGULATE_FASTTEXT_DIR", str(tmp_path / "ft"))
    monkeypatch.setattr(generate, "kmeans_ari", functools.partial(difficulty.kmeans_ari, runs=2, n_init=2))
    embedder = generate.vectors_for("en")
    assert embedder is not None
    found = matched.matched_globalgroup(gg_root, "globalgroup_en_2x4", seed=1, count=40, embedder=embedder)
    pub, fresh = found.published["ari"], found.fresh["ari"]
    assert len(pub) == len(fresh) == 40 and None not in pub + fresh
    assert ks_2samp(pub, fresh).pvalue > 0.05
    assert any(m.startswith("ARI") for m in found.matched_on)
    plain = generate.generate_globalgroup(gg_root, "en", 2, 4, count=40, seed=1, embedder=embedder)
    matched_gap = sum(abs(a - b) for a, b in zip(pub, fresh)) / 40
    unmatched_gap = sum(abs(a - r["ari"]) for a, r in zip(pub, plain)) / 40
    assert matched_gap < unmatched_gap / 2


def test_wordle_and_taboo_twins_keep_each_published_episodes_band(upstream):
    wordle = matched_clembench.matched_wordle(seed=0)
    published = load_instances("wordle")
    assert [e["target_word_difficulty"] for e in wordle] == [e["target_word_difficulty"] for e in published]
    assert Counter(e["target_word_difficulty"] for e in wordle) == {"high_frequency": 10, "medium_frequency": 20}
    pools = matched_clembench.wordle_pools()
    for episode in wordle:
        assert episode["target_word"] in pools[episode["target_word_difficulty"]]  # the game's own band list
    used = {w for f in matched_clembench.WORDLE_FOLDERS for w in matched_clembench._targets(f, matched_clembench.INSTANCE_FILES)}
    assert not {e["target_word"] for e in wordle} & used and len({e["target_word"] for e in wordle}) == 30
    taboo = matched_clembench.matched_taboo(seed=0)
    published = load_instances("taboo")
    assert [e["experiment"] for e in taboo] == [e["experiment"] for e in published]
    assert Counter(e["experiment"] for e in taboo) == {"high_en": 20, "medium_en": 20, "low_en": 20}
    assert not {e["target_word"] for e in taboo} & {e["target_word"] for e in published}
    assert all(len(e["related_word"]) == 3 for e in taboo)


@pytest.mark.parametrize("task, config", [("globalgroup_zh", "zh_4x4"), ("wordle", "wordle"), ("taboo", "taboo")])
def test_same_seed_gives_byte_identical_folders(upstream, tmp_path, task, config):
    args = ["data", "generate", "--matched", task, "--count", "30", "--seed"]
    assert main([*args, "5", "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "5", "--out", str(tmp_path / "b")]) == 0
    assert main([*args, "6", "--out", str(tmp_path / "c")]) == 0
    one, two, other = _tree(tmp_path / "a"), _tree(tmp_path / "b"), _tree(tmp_path / "c")
    assert one == two
    shard = f"data/{config}/test-00000-of-00001.parquet"
    assert one[shard] != other[shard]
    card = one["README.md"].decode()
    assert f"--matched {task} --seed 5" in card and "Matched" in card


def test_the_fresh_task_loader_generates_the_default_twin_once(upstream, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path))
    data = matched.load_globalgroup_fresh("zh_4x4")
    assert "generating the matched fresh set of globalgroup_zh" in capsys.readouterr().err
    assert len(data["test"]) == 300 and data["test"][0]["id"] == "zh_4x4_fresh0_000"
    again = load_globalgroup("zh_4x4", path=matched.default_folder("globalgroup_zh"))
    assert again["test"]["id"] == data["test"]["id"]
    matched.load_globalgroup_fresh("zh_4x4")
    assert "generating" not in capsys.readouterr().err


def test_unknown_tasks_are_one_line_errors(upstream, capsys):
    assert main(["data", "generate", "--matched", "connections"]) == 2
    assert "no matched fresh set for this task" in capsys.readouterr().err
    assert main(["data", "generate", "--matched", "globalgroup_nyt_seq_2x2"]) == 2
    assert main(["data", "generate"]) == 2


def test_taboo_related_file_adds_never_used_band_words(upstream):
    lists = matched_clembench.game_dir("taboo") / "resources" / "target_words" / "en"
    band_words = matched_clembench._words(lists / "high_freq_100_v1.5.txt")
    used = set(matched_clembench._targets("taboo", matched_clembench.INSTANCE_FILES))
    new = [w for w in band_words if w not in used][:3]
    pools = matched_clembench.taboo_pools({w: ["a", "b", "c"] for w in new})
    assert {w for w, _ in pools["high_en"]} >= set(new)
    assert json.dumps(pools) == json.dumps(matched_clembench.taboo_pools({w: ["a", "b", "c"] for w in new}))
