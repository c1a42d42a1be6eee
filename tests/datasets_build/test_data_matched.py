"""Matched fresh twins (issues 33, 42): difficulty distributions equal the published ones, nothing published is
reused, the same seed gives byte-identical folders, a private seed is never written."""

from __future__ import annotations

import functools
import json
from collections import Counter

import pytest
from scipy.stats import ks_2samp

from custom_metrics import difficulty
from datasets_build import fresh_words, generate, matched, matched_clembench
from datasets_build import globalgroup as gg
from datasets_build.clembench_upstream import load_instances
from datasets_build.load import load_globalgroup
from triangulation.cli.main import main


@pytest.fixture(scope="module")
def gg_root(upstream):
    return upstream / "globalgroup"


def _tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("task", ["globalgroup_zh", "globalgroup_en_2x3"])
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
    _assert_unseen_groups(gg_root, subset, found.rows)
    if subset == "zh":  # a subset whose published groups carry category tags: the fresh groups keep them
        by_topic = {gr["topic"]: gr["tags"] for r in published for gr in r["groups"] if gr["tags"]}
        fresh_groups = [gr for r in found.rows for gr in r["groups"] if gr["topic"] in by_topic]
        assert fresh_groups and all(gr["tags"] == by_topic[gr["topic"]] for gr in fresh_groups)


def _assert_unseen_groups(gg_root, subset, rows):
    """Issue 42: no fresh group equals a published group of any setting (each is a subset of a sheet row's words),
    and none shares more than 2 words with a published group of its topic."""
    sheet = gg.read_groupings(gg_root / "Grouping Datasets" / gg.SUBSETS[subset].groupings)
    published: dict[str, list[set]] = {}
    for row in sheet:
        published.setdefault(row.topic, []).append({fresh_words.norm(w) for w in row.words})
    groups = [gr for r in rows for gr in r["groups"]]
    shared = [max(len({fresh_words.norm(w) for w in gr["words"]} & p) for p in published[gr["topic"]]) for gr in groups]
    assert max(shared) == fresh_words.MAX_SHARED or len(groups[0]["words"]) == 2  # kept words are there, and no more
    assert max(shared) <= 2 and all(s < len(gr["words"]) for s, gr in zip(shared, groups))  # 0 equal to a published group


@pytest.mark.parametrize("task", ["globalgroup_zh_2x2", "globalgroup_nyt_shuf_4x4"])
def test_fresh_groups_are_new_word_sets_of_extendable_topics(gg_root, task):
    subset, g, w = matched.globalgroup_setting(task)
    found = matched.matched_globalgroup(gg_root, task, seed=2, count=60)
    _assert_unseen_groups(gg_root, subset, found.rows)
    usable, total = found.topics
    assert 0 < usable < total  # some topics get no new words and are left out; the card counts them
    assert f"{usable} of the {total} topics" in matched.globalgroup_card(task, 2, found).body
    assert len({gr["topic"] for r in found.rows for gr in r["groups"]}) <= usable


def test_thesaurus_candidates_share_the_topic_category():
    """Cilin: words of a 4th-level category holding 2+ published words, none a published or excluded word; WordNet:
    hyponyms of the deepest hypernym published words share, in the published words' letter case."""
    fruit = fresh_words.cilin_candidates(["苹果", "香蕉", "葡萄", "橙子"], {"西瓜"})
    assert {"草莓", "樱桃", "荔枝"} <= set(fruit) and not {"苹果", "香蕉", "葡萄", "橙子", "西瓜"} & set(fruit)
    assert len(fruit) == fresh_words.POOL_SIZE and all(len(x) == 2 for x in fruit)  # the published words' length
    colours = fresh_words.wordnet_candidates(["Red", "Blue", "Yellow", "Green"], {"brown"})
    assert {"Pink", "Purple"} <= set(colours) and "Brown" not in colours and all(c.istitle() for c in colours)
    assert fresh_words.wordnet_candidates(["Str", "B", "Pl", "Ch"], set()) == []  # word play: nothing to offer


def test_untwinned_subsets_are_one_line_errors_that_say_why(upstream, capsys):
    assert main(["data", "generate", "--matched", "globalgroup_es_2x2"]) == 2
    assert "no open lexical resource" in capsys.readouterr().err
    assert set(matched.FRESH_SUBSETS) | set(matched.UNTWINNED_SUBSETS) == set(gg.SUBSET_NAMES)


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


@pytest.fixture(scope="module")
def taboo(upstream):
    return matched_clembench.matched_taboo(seed=0), load_instances("taboo")


def test_taboo_targets_appear_in_no_clembench_file_and_match_frequency_and_part_of_speech(taboo):
    """Issue 42, Done means: 0 fresh Taboo targets in any clembench file (any game, any version); Zipf frequencies
    matched (two-sample KS p > 0.05; each within the tolerance of its published target, so its band is kept); the
    same parts of speech; no proper nouns or abbreviations; three related words each."""
    fresh, published = taboo
    targets = [e["target_word"] for e in fresh]
    assert len(set(targets)) == len(published) == 60
    clem_root = matched_clembench.clem_dir()
    every_file = " ".join(
        p.read_text(encoding="utf-8", errors="replace").lower()
        for root in (clem_root, clem_root.parent / "clembench-runs")
        for p in root.rglob("*")
        if p.is_file()
    )
    import re

    tokens = set(re.findall(r"[a-z]+", every_file))
    assert not set(targets) & tokens  # computed here from the files, not from the generator's own list
    for old in ("israel", "yahoo", "responsibility", "limousine"):
        assert old in tokens  # the scan does see the published words (the check above could fail)
    assert [e["experiment"] for e in fresh] == [e["experiment"] for e in published]
    pub_z = [matched_clembench.zipf(e["target_word"]) for e in published]
    fresh_z = [matched_clembench.zipf(w) for w in targets]
    assert ks_2samp(pub_z, fresh_z).pvalue > 0.05
    assert all(abs(a - b) <= matched_clembench.ZIPF_TOLERANCE + 1e-9 for a, b in zip(pub_z, fresh_z))
    assert [matched_clembench.pos_profile(e["target_word"]) for e in published] == [matched_clembench.pos_profile(w) for w in targets]
    assert all(matched_clembench.pos_profile(w) and w.isalpha() and w.islower() for w in targets)  # no proper noun, no abbreviation
    for e in fresh:
        assert len(e["related_word"]) == 3 and e["target_word"] not in e["related_word"]
        assert not any(matched_clembench.is_slur(w) for w in [e["target_word"], *e["related_word"]])


def test_proper_nouns_and_abbreviations_have_no_part_of_speech():
    """The 13 of the last round's 60 fresh Taboo words that were names or abbreviations are no candidates now."""
    assert [matched_clembench.pos_profile(w) for w in ("israel", "vol", "diy", "tv", "usa")] == [()] * 5
    assert matched_clembench.pos_profile("boy") == ("NOUN",)


def test_thesaurus_related_words_follow_the_upstream_rule():
    """Three related words, mutual synonyms first, none a form of the target (Moby in place of Merriam-Webster)."""
    related = matched_clembench.thesaurus_related("chance")
    assert len(related) == 3 and not any(r.startswith("chanc") for r in related)
    book = matched_clembench.moby()
    assert all("chance" in book[r] for r in related)


def test_wordle_has_no_twin_and_says_why(upstream, tmp_path, capsys):
    assert main(["data", "generate", "--matched", "wordle", "--out", str(tmp_path / "w")]) == 2
    assert "same prompt" in capsys.readouterr().err and not (tmp_path / "w").exists()
    assert "wordle" not in matched.TWINNED


def test_a_private_seed_is_named_private_and_played_by_the_fresh_task(upstream, tmp_path, monkeypatch):
    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path))
    assert main(["data", "generate", "--matched", "taboo", "--seed", "987654", "--private", "--count", "3"]) == 0
    folder = matched.default_folder("taboo", private=True)
    assert folder.name == "taboo_private" and matched.fresh_folder("taboo") == folder
    text = "".join(p.read_bytes().decode("latin-1") for p in folder.rglob("*") if p.is_file())
    assert "987654" not in text and "private" in text
    public = matched_clembench.matched_rows("taboo", 0, 3)[0]
    assert json.loads(public[0]["instance"])["fresh_seed"] == "seed0"


@pytest.mark.parametrize("task, config", [("globalgroup_zh", "zh_4x4"), ("taboo", "taboo")])
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


def test_taboo_related_file_gives_related_words_in_place_of_the_thesaurus(upstream, taboo):
    first = taboo[0][0]["target_word"]
    fresh = matched_clembench.matched_taboo(seed=0, count=1, related={first: ["a", "b", "c"]})
    assert fresh[0]["target_word"] == first and fresh[0]["related_word"] == ["a", "b", "c"]
