"""GlobalGroup builder on the real upstream snapshot: counts, joins, repeats, determinism, bad sources."""

from __future__ import annotations

import csv
import os
import re
import shutil
from pathlib import Path

import datasets
import pytest

from datasets_build import globalgroup as gg
from datasets_build.hub import atomic_dir, read_card_sizes, write_hub_folder
from datasets_build.load import load_globalgroup
from plumbing.errors import UserError
from triangulation.cli.main import main


@pytest.fixture(scope="session")
def gg_folder(upstream, tmp_path_factory) -> Path:
    """One real build of the whole dataset per test process (shared with the tasks tests when they run too)."""
    try:
        from tests.support.built_data import built_data_root
    except ImportError:  # pragma: no cover - helper renamed: build here
        out = tmp_path_factory.mktemp("gg") / "globalgroup"
        with atomic_dir(out) as tmp:
            gg.build(tmp)
        return out
    return built_data_root(str(upstream)) / "globalgroup"


@pytest.fixture(scope="session")
def en_4x4(gg_folder):
    return load_globalgroup("en_4x4", path=gg_folder)


def test_93_configs_with_the_papers_counts(gg_folder):
    sizes = read_card_sizes(gg_folder)
    assert len(sizes) == 93 == len(gg.config_names())
    for config, splits in sizes.items():
        expected = {"dev": 211, "test": 300} if config.startswith("nyt_seq") else {"dev": 300, "test": 300}
        assert splits == expected, config
    assert sorted(c for c in sizes if c.startswith("nyt_seq")) == ["nyt_seq_4x2", "nyt_seq_4x3", "nyt_seq_4x4"]
    text = (gg_folder / "README.md").read_text(encoding="utf-8")
    assert "| `nyt_seq_4x4` | 211 | 300 |" in text and "| `zh_en_2x3` | 300 | 300 |" in text
    assert (gg_folder / "prompts" / "canprop_templates.json").is_file()


def test_parquet_rows_match_the_card_and_schema(gg_folder):
    for config in ("zh_4x4", "nyt_seq_4x2", "ar_en_2x3"):
        ds = load_globalgroup(config, path=gg_folder)
        assert {s: len(ds[s]) for s in ds} == read_card_sizes(gg_folder)[config]
        g, w = map(int, config.rsplit("_", 1)[1].split("x"))
        for row in ds["test"]:
            assert row["id"].startswith(f"{config}_test_") and (row["n_groups"], row["group_size"]) == (g, w)
            assert len(row["groups"]) == g and all(len(gr["words"]) == w and gr["topic"] for gr in row["groups"])
            gold = [x for gr in row["groups"] for x in gr["words"]]
            assert sorted(row["words"]) == sorted(gold) and len(set(gold)) == g * w and all(gold)


def test_games_are_row_blocks_in_upstream_order(upstream, en_4x4):
    """Game NNN = the NNN-th block of rows whose unnamed first column restarts at 0."""
    path = next((upstream / "globalgroup" / "Games Datasets" / "en" / "test").glob("*groupcount_#4#_groupsize_#4#*"))
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    starts = [i for i, r in enumerate(rows) if r[""] == "0"]
    for index in (0, 123, 299):
        block = rows[starts[index] : starts[index] + 4]
        game = en_4x4["test"][index]
        assert game["id"] == f"en_4x4_test_{index:03d}"
        assert game["game_number"] == int(block[0]["Game #"])
        assert [g["topic"] for g in game["groups"]] == [r["True Topic"].strip() for r in block]
        assert [g["words"] for g in game["groups"]] == [[r[f"Word {k}"].strip() for k in range(1, 5)] for r in block]
        assert game["words"] != [x for g in game["groups"] for x in g["words"]]  # the pool is shuffled


def test_nyt_seq_repeats_are_kept_and_marked(gg_folder):
    test = load_globalgroup("nyt_seq_4x4", path=gg_folder)["test"]
    by_id = {r["id"]: r for r in test}
    repeats = [r for r in test if r["repeat_of"]]
    assert len(test) == 300 and len(repeats) == 44  # DESIGN: 44 of 300 repeat an earlier game
    assert len({r["game_number"] for r in test}) < 300  # `Game #` is reused, ids are not
    assert len(by_id) == 300
    for r in repeats:
        first = by_id[r["repeat_of"]]
        assert first["id"] < r["id"] and first["repeat_of"] is None
        key = lambda row: sorted((g["topic"], sorted(g["words"])) for g in row["groups"])  # noqa: E731
        assert key(first) == key(r)


def test_published_difficulty_joined_from_scored_files(upstream, gg_folder, en_4x4):
    path = upstream / "globalgroup" / "Scored Games Datasets" / "en" / "test" / "scored_#en#_#4#_#4#_#300#_#test#.csv"
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for index in (0, 7, 299):
        first = rows[4 * index]
        game = en_4x4["test"][index]
        assert game["canprop_overlap"] == float(first["Average CanProp Group Overlap"])
        assert game["canprop_length"] == float(first["Average CanProp Group Length"])
        assert game["ari"] == float(first["Average Adjusted Rand Index"])
        assert game["canprop_response"] == first["CanProp Response"]
        assert game["canprop_prompt"] == first["CanProp Prompt"]
    assert all(r["canprop_overlap"] is None and r["ari"] is None for r in en_4x4["dev"])
    assert all(r["canprop_overlap"] is not None for r in en_4x4["test"])
    # the three Hindi files absent from the snapshot (MISSING.txt) give nulls, the others are there
    assert all(r["canprop_response"] is None for r in load_globalgroup("hi_4x4", path=gg_folder)["test"])
    assert all(r["canprop_response"] for r in load_globalgroup("hi_3x4", path=gg_folder)["test"])
    assert "`hi_4x2`, `hi_4x3`, `hi_4x4`" in (gg_folder / "README.md").read_text(encoding="utf-8")


def test_culturally_related_flags_and_tags(upstream, gg_folder, en_4x4):
    # en: flag joined from the grouping spreadsheet; the scored file's Tag 1 is an independent record of it
    path = upstream / "globalgroup" / "Scored Games Datasets" / "en" / "test" / "scored_#en#_#4#_#4#_#300#_#test#.csv"
    with path.open(encoding="utf-8") as handle:
        published = [r["Tag 1"] == "1" for r in csv.DictReader(handle)]
    ours = [g["culturally_related"] for r in en_4x4["test"] for g in r["groups"]]
    assert ours == published and 0 < sum(ours) < len(ours)
    assert all(g["tags"] and g["tags"][0] in {"Everyday", "Pop culture", "Linguistic"} for r in en_4x4["test"] for g in r["groups"])
    ar = load_globalgroup("ar_4x4", path=gg_folder)["test"]
    assert all(g["culturally_related"] in (True, False) and g["tags"] == [] for r in ar for g in r["groups"])
    es = load_globalgroup("es_2x2", path=gg_folder)["dev"]  # es has one topic twice in its spreadsheet
    assert all(g["culturally_related"] is not None for r in es for g in r["groups"])
    nyt = load_globalgroup("nyt_shuf_4x4", path=gg_folder)["test"]
    assert all(g["culturally_related"] is None for r in nyt for g in r["groups"])
    assert {(r["language"], r["culture"]) for r in load_globalgroup("zh_en_4x4", path=gg_folder)["dev"]} == {("en", "zh")}


def test_words_lost_to_pandas_na_parsing_are_restored(gg_folder):
    """Upstream has 7 NYT rows where the word NA (sodium) became an empty cell; no empty word survives."""
    restored = 0
    for config in ("nyt_shuf_3x3", "nyt_shuf_4x4"):
        for split in ("dev", "test"):
            for row in load_globalgroup(config, path=gg_folder)[split]:
                for group in row["groups"]:
                    assert all(group["words"])
                    restored += group["topic"] == "PERIODIC TABLE SYMBOLS" and "NA" in group["words"]
    assert restored >= 2


def test_same_sources_give_byte_identical_parquet(upstream, tmp_path):
    root = upstream / "globalgroup"
    outputs = []
    for name in ("a", "b"):
        configs, absent = gg.read_all(root, subsets=["zh", "nyt_seq"])
        write_hub_folder(tmp_path / name, configs, gg.FEATURES, gg.card(configs, absent, "src"))
        outputs.append({p.relative_to(tmp_path / name): p.read_bytes() for p in sorted((tmp_path / name).rglob("*.parquet"))})
    assert len(outputs[0]) == 2 * 12 and outputs[0] == outputs[1]


def test_load_dataset_offline_on_the_built_folder(gg_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = datasets.load_dataset(str(gg_folder), "zh_4x4", cache_dir=str(tmp_path / "cache"))
    assert {s: len(ds[s]) for s in ds} == {"dev": 300, "test": 300}
    assert ds["test"].features == gg.FEATURES
    assert ds["test"][0]["id"] == "zh_4x4_test_000"


# ------------------------------------------------------------------------- bad sources


def write_csv(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


HEADER_2 = ",Game #,True Topic,Tag 1,Tag 2,Tag 3,Word 1,Word 2"


@pytest.mark.parametrize(
    "lines, message",
    [
        ([",Game,Topic,Word 1,Word 2", "0,0,t,a,b"], r"row 1: wrong columns"),
        ([HEADER_2, "0,0,t,,,,a,b", "2,0,u,,,,c,d"], r"row 3: first column is 2, expected 1"),
        ([HEADER_2, "0,0,t,,,,a,b", "x,0,u,,,,c,d"], r"row 3: column '\(unnamed first column\)' is 'x'"),
        ([HEADER_2, "0,0,t,,,,a,b", "1,0,u,,,,c"], r"row 3: 7 fields, header has 8"),
        ([HEADER_2, "0,0,t,,,,a,b", "1,0,u,,,,c,d", "0,1,v,,,,e,f"], r"row 4: game starting here has 1 groups, expected 2"),
        ([HEADER_2, "0,zero,t,,,,a,b", "1,0,u,,,,c,d"], r"row 2: column 'Game #' is 'zero'"),
    ],
)
def test_malformed_game_csv_names_file_and_row(tmp_path, lines, message):
    path = write_csv(tmp_path / "bad.csv", lines)
    with pytest.raises(UserError, match=message) as info:
        gg.read_game_blocks(path, 2, 2)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_empty_word_and_topic_cells_are_errors(tmp_path):
    path = write_csv(tmp_path / "g.csv", [HEADER_2, "0,0,t,,,,a,", "1,0,u,,,,c,d"])
    block = gg.read_game_blocks(path, 2, 2)[0]
    with pytest.raises(UserError, match=r"g.csv: row 2: empty word cell"):
        gg.parse_group(path, *block[0], 2, gg.SUBSETS["en"], {})
    path = write_csv(tmp_path / "h.csv", [HEADER_2, "0,0, ,,,,a,b", "1,0,u,,,,c,d"])
    block = gg.read_game_blocks(path, 2, 2)[0]
    with pytest.raises(UserError, match=r"h.csv: row 2: empty 'True Topic'"):
        gg.parse_group(path, *block[0], 2, gg.SUBSETS["en"], {})


def _linked_copy(src: Path, dst: Path) -> None:
    """A copy of the upstream tree whose files are symlinks (cheap), so single files can be replaced."""
    shutil.copytree(src, dst, copy_function=os.symlink)


def _replace(path: Path, text: str) -> None:
    path.unlink()
    path.write_text(text, encoding="utf-8")


def test_cli_build_with_malformed_row_stops_with_one_line_and_writes_nothing(upstream, tmp_path, monkeypatch, capsys):
    up = tmp_path / "up"
    _linked_copy(upstream / "globalgroup", up / "globalgroup")
    bad = next((up / "globalgroup" / "Games Datasets" / "en" / "dev").glob("*groupcount_#2#_groupsize_#2#*"))
    lines = bad.read_text(encoding="utf-8").splitlines()
    lines[5] = lines[5].rsplit(",", 1)[0]  # drop one field of row 6
    _replace(bad, "\n".join(lines) + "\n")
    monkeypatch.setenv("TRIANGULATE_UPSTREAM", str(up))
    out = tmp_path / "out"
    assert main(["data", "build", "--datasets", "globalgroup", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("triangulate: error: bad source ") and bad.name in err and "row 6: 7 fields, header has 8" in err
    assert not out.exists() or list(out.iterdir()) == []


def test_missing_game_file_and_mismatched_scored_file(upstream, tmp_path, monkeypatch):
    up = tmp_path / "up" / "globalgroup"
    _linked_copy(upstream / "globalgroup", up)
    gone = next((up / "Games Datasets" / "es" / "test").glob("*groupcount_#3#_groupsize_#2#*"))
    gone.unlink()
    with pytest.raises(UserError, match=r"Games Datasets/es/test/.*groupcount_#3#_groupsize_#2#.*: file is missing"):
        gg.read_all(up, subsets=["es"])

    scored = up / "Scored Games Datasets" / "ar" / "test" / "scored_#ar#_#2#_#2#_#300#_#test#.csv"
    text = scored.read_text(encoding="utf-8")
    first_topic = re.search(r"\n0,([^,]+),", text).group(1)
    _replace(scored, text.replace(f"\n0,{first_topic},", "\n0,SOMETHING ELSE,", 1))
    with pytest.raises(UserError, match=r"scored_#ar#_#2#_#2#_#300#_#test#.csv: row 2: does not match game ar_2x2_test_000"):
        gg.read_all(up, subsets=["ar"])


def test_missing_scored_file_not_listed_in_missing_txt_is_an_error(upstream, tmp_path):
    up = tmp_path / "globalgroup"
    _linked_copy(upstream / "globalgroup", up)
    (up / "Scored Games Datasets" / "zh" / "test" / "scored_#zh#_#2#_#2#_#300#_#test#.csv").unlink()
    with pytest.raises(UserError, match=r"scored_#zh#_#2#_#2#_#300#_#test#.csv: file is missing"):
        gg.read_all(up, subsets=["zh"])


def test_bad_grouping_spreadsheet(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Word 1", "Word 2", "Word 3", "Word 4", "Topic", "Tag 1"])
    sheet.append(["a", "b", "c", "d", "T", 1])
    sheet.append(["e", "f", "g", "h", "U", "maybe"])
    book.save(tmp_path / "g.xlsx")
    with pytest.raises(UserError, match=r"g.xlsx: row 3: column 'Tag 1' is 'maybe'"):
        gg.read_groupings(tmp_path / "g.xlsx")
    sheet.delete_cols(5)
    book.save(tmp_path / "h.xlsx")
    with pytest.raises(UserError, match=r"h.xlsx: row 1: missing columns \['Topic'\]"):
        gg.read_groupings(tmp_path / "h.xlsx")
