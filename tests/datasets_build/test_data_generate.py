"""`triangulate data generate`: paper's sampling constraints, seeded reproducibility, Hub-ready output."""

from __future__ import annotations

import unicodedata

import pytest

from datasets_build import generate
from datasets_build import globalgroup as gg
from datasets_build.load import load_globalgroup
from plumbing.errors import UserError
from triangulation.cli.main import main


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()


@pytest.fixture(scope="module")
def gg_root(upstream):
    return upstream / "globalgroup"


@pytest.mark.parametrize("subset, groups, size", [("en", 4, 4), ("zh", 3, 2), ("nyt_shuf", 4, 4), ("ar_en", 2, 3), ("nyt_seq", 4, 3)])
def test_games_follow_the_papers_constraints(gg_root, subset, groups, size):
    sheet = gg.read_groupings(gg_root / "Grouping Datasets" / gg.SUBSETS[subset].groupings)
    rows = generate.generate_globalgroup(gg_root, subset, groups, size, count=60, seed=11)
    assert len(rows) == 60 and len({r["id"] for r in rows}) == 60
    for row in rows:
        assert (row["n_groups"], row["group_size"], len(row["groups"])) == (groups, size, groups)
        words = [_norm(w) for g in row["groups"] for w in g["words"]]
        topics = [_norm(g["topic"]) for g in row["groups"]]
        assert len(set(words)) == groups * size, row  # no repeated word within a game
        assert len(set(topics)) == groups, row  # no repeated topic within a game
        assert sorted(row["words"]) == sorted(w for g in row["groups"] for w in g["words"])
        sources = []
        for group in row["groups"]:  # every group is a sample of one spreadsheet grouping
            matches = [i for i, s in enumerate(sheet) if s.topic == group["topic"] and set(group["words"]) <= set(s.words)]
            assert matches, group
            assert group["culturally_related"] == sheet[matches[0]].culturally_related
            sources.append(matches)
        if subset == "nyt_seq":  # all four groups from one original Connections game (rows 4k..4k+3)
            assert any(all(any(i // 4 == k for i in m) for m in sources) for k in {i // 4 for m in sources for i in m})


def test_seeded_reproducibility(gg_root):
    one = generate.generate_globalgroup(gg_root, "es", 4, 4, count=20, seed=5)
    two = generate.generate_globalgroup(gg_root, "es", 4, 4, count=20, seed=5)
    other = generate.generate_globalgroup(gg_root, "es", 4, 4, count=20, seed=6)
    assert one == two
    assert [r["groups"] for r in one] != [r["groups"] for r in other]


def test_impossible_requests_are_user_errors(gg_root):
    with pytest.raises(UserError, match="no en grouping has 5 words"):
        generate.generate_globalgroup(gg_root, "en", 2, 5, count=1, seed=0)
    with pytest.raises(UserError, match="cannot form 60 groups"):
        generate.generate_globalgroup(gg_root, "en", 60, 2, count=1, seed=0)
    with pytest.raises(UserError, match="use --groups 4"):
        generate.generate_globalgroup(gg_root, "nyt_seq", 3, 4, count=1, seed=0)
    with pytest.raises(UserError, match="unknown GlobalGroup subset"):
        generate.generate_globalgroup(gg_root, "fr", 4, 4, count=1, seed=0)


def test_cli_writes_a_loadable_hub_folder(upstream, tmp_path, capsys):
    out = tmp_path / "fresh"
    args = "data generate --benchmark globalgroup --subset hi --seed 7 --groups 3 --size 4 --count 12 --out".split() + [str(out)]
    assert main(args) == 0
    assert "generated 12 games" in capsys.readouterr().out
    ds = load_globalgroup("hi_3x4", path=out)
    assert sorted(ds) == ["dev", "test"] and len(ds["test"]) == 12  # dev: the built few-shot split (or empty)
    assert ds["test"][0]["id"] == "hi_3x4_gen7_000" and ds["test"][0]["language"] == "hi"
    assert "seed 7" in (out / "README.md").read_text(encoding="utf-8")
    first = (out / "data" / "hi_3x4" / "test-00000-of-00001.parquet").read_bytes()
    assert main(args) == 0  # same command -> byte-identical shard
    assert (out / "data" / "hi_3x4" / "test-00000-of-00001.parquet").read_bytes() == first


def test_cli_errors_and_registry(upstream, capsys):
    assert main(["data", "generate", "--benchmark", "globalgroup", "--seed", "1"]) == 2
    assert "needs --subset" in capsys.readouterr().err
    assert "globalgroup" in generate.generators()


def test_generator_registry_accepts_new_benchmarks_and_flags(monkeypatch):
    """Another engineer's generator (e.g. clembench --game) plugs into the same parser."""
    import argparse

    seen = {}

    def add(group):
        group.add_argument("--game")

    def run(args):
        seen.update(vars(args))
        return {"configs": 1, "rows": args.count, "out": "x"}

    only = {"toygame": generate.Generator("toygame", run, add)}  # isolated from the real registry
    monkeypatch.setattr(generate, "generators", lambda: dict(only))
    parser = argparse.ArgumentParser()
    generate.add_arguments(parser)
    args = parser.parse_args(["--benchmark", "toygame", "--game", "taboo", "--count", "3"])
    assert generate.run_generator(args)["rows"] == 3 and seen["game"] == "taboo" and seen["seed"] == 0


class _GroupVectors:
    """A stand-in fastText model: every word of the grouping with topic t gets the one-hot vector e_t."""

    def __init__(self, rows):
        from custom_metrics.topics import tokenize

        topics = sorted({g["topic"] for r in rows for g in r["groups"]})
        self.dim = len(topics)
        self.by_text = {}
        for row in rows:
            for group in row["groups"]:
                for word in group["words"]:
                    text = " ".join(tokenize(word, row["language"]))
                    assert self.by_text.setdefault(text, topics.index(group["topic"])) == topics.index(group["topic"])

    def get_dimension(self) -> int:
        return self.dim

    def get_sentence_vector(self, text: str):
        import numpy as np

        vec = np.zeros(self.dim, dtype=np.float32)
        vec[self.by_text[text]] = 1.0
        return vec


def test_fresh_games_get_an_ari_when_vectors_are_present(gg_root):
    """Seed 000 §6 ARI: K-means (k = groups) on the word vectors vs the gold groups.

    With vectors that put every word of a grouping at its topic's point e_t (3 distinct points per
    game), K-means (k = 3) finds the gold groups exactly, and the ARI of identical partitions is 1 for every game.  Without vectors
    the column is null."""
    from custom_metrics.topics import Embedder

    plain = generate.generate_globalgroup(gg_root, "en", 3, 4, count=5, seed=3)
    assert all(r["ari"] is None for r in plain)
    embedder = Embedder(_GroupVectors(plain), "en")
    rows = generate.generate_globalgroup(gg_root, "en", 3, 4, count=5, seed=3, embedder=embedder)
    assert [r["groups"] for r in rows] == [r["groups"] for r in plain]
    assert [r["ari"] for r in rows] == pytest.approx([1.0] * 5)
    assert all(r["canprop_overlap"] is None and r["canprop_length"] is None for r in rows)


def test_cli_fills_ari_from_real_fasttext_vectors(upstream, tmp_path, monkeypatch):
    from tests.support.fasttext_small import train_small_fasttext

    sheet = gg.read_groupings(upstream / "globalgroup" / "Grouping Datasets" / gg.SUBSETS["en"].groupings)
    train_small_fasttext(tmp_path / "ft", {g.topic: g.words for g in sheet}, lang="en", dim=8, sentences=1500)
    monkeypatch.setenv("TRIANGULATE_FASTTEXT_DIR", str(tmp_path / "ft"))
    out = tmp_path / "fresh"
    args = "data generate --benchmark globalgroup --subset en --seed 2 --groups 2 --size 4 --count 4 --out".split() + [str(out)]
    assert main(args) == 0
    ds = load_globalgroup("en_2x4", path=out)
    aris = ds["test"]["ari"]
    assert len(aris) == 4 and all(a is not None and -1.0 <= a <= 1.0 for a in aris)
    assert "cc.en.300.bin" in (out / "README.md").read_text(encoding="utf-8")
    monkeypatch.delenv("TRIANGULATE_FASTTEXT_DIR")
    assert main(args) == 0
    assert load_globalgroup("en_2x4", path=out)["test"]["ari"] == [None] * 4
