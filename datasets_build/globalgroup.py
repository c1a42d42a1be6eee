"""GlobalGroup (seed 000, github.com/cgsol/globalgroup) -> Hub-ready dataset, one row per game.

93 configs ``<subset>_<g>x<w>``: subsets en es es_en zh zh_en hi hi_en ar ar_en nyt_shuf with
g, w in {2, 3, 4} (300 dev + 300 test games each) and nyt_seq with g = 4 (211 dev / 300 test) (§3.2).

Sources, all under the upstream folder:
- ``Games Datasets/<subset>/<split>/*_groupcount_#g#_groupsize_#w#_gamecount_#N#_subset_#split#.csv``:
  one row per group; a game is a block of consecutive rows whose unnamed first column restarts at 0
  (``Game #`` is not unique: nyt-seq test files reuse it). ``Tag 1-3`` are category tags for
  en/es/zh(-en); for ar/hi(-en) ``Tag 1`` is the 0/1 "culturally related" flag.
- ``Grouping Datasets/all_*_grouping*.xlsx``: the source groupings; ``Tag 1`` is the culturally
  related flag (joined onto each game group by topic and word set). NYT groupings carry no flag.
- ``Scored Games Datasets/<subset>/test/scored_#<subset>#_#g#_#w#_#N#_#test#.csv``: the same test
  rows plus the candidate-proposal prompt/response and per-game difficulty (word overlap, group
  length, ARI). Files listed in the snapshot's ``MISSING.txt`` give nulls; other missing files are errors.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from pathlib import Path

import datasets

from datasets_build.globalgroup_names import SUBSET_NAMES, SUBSETS, Subset
from datasets_build.hub import CardInfo, write_hub_folder
from datasets_build.manifest import pinned_source_line
from datasets_build.prompts import write_globalgroup_prompts
from datasets_build.registry import register_builder
from datasets_build.tabular import parse_float, parse_int, read_csv_rows, read_xlsx_rows, source_error
from plumbing.errors import UserError

NAME = "globalgroup"
SETTINGS = (2, 3, 4)
SPLITS = ("dev", "test")
CARD_DIR = Path(__file__).with_name("cards")


GROUP_FEATURES = {
    "topic": datasets.Value("string"),
    "words": datasets.Sequence(datasets.Value("string")),
    "tags": datasets.Sequence(datasets.Value("string")),
    "culturally_related": datasets.Value("bool"),
}
FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "subset": datasets.Value("string"),
        "language": datasets.Value("string"),
        "culture": datasets.Value("string"),
        "split": datasets.Value("string"),
        "game_number": datasets.Value("int64"),
        "n_groups": datasets.Value("int64"),
        "group_size": datasets.Value("int64"),
        "words": datasets.Sequence(datasets.Value("string")),
        "groups": [GROUP_FEATURES],
        "repeat_of": datasets.Value("string"),
        "canprop_overlap": datasets.Value("float64"),
        "canprop_length": datasets.Value("float64"),
        "ari": datasets.Value("float64"),
        "canprop_response": datasets.Value("string"),
        "canprop_prompt": datasets.Value("string"),
    }
)
DIFFICULTY_COLUMNS = {
    "canprop_overlap": "Average CanProp Group Overlap",
    "canprop_length": "Average CanProp Group Length",
    "ari": "Average Adjusted Rand Index",
}


def settings_of(subset: str) -> list[tuple[int, int]]:
    """The (groups, words-per-group) settings of a subset: nyt_seq has 4 groups only (§3.2)."""
    groups = (4,) if subset == "nyt_seq" else SETTINGS
    return [(g, w) for g in groups for w in SETTINGS]


def config_names() -> list[str]:
    return [f"{s}_{g}x{w}" for s in SUBSET_NAMES for g, w in settings_of(s)]


def game_id(subset: str, g: int, w: int, split: str, index: int) -> str:
    return f"{subset}_{g}x{w}_{split}_{index:03d}"


def shuffled_pool(groups: list[dict], key: str) -> list[str]:
    """All group words in an order fixed by ``key`` (SHA-256 seeded), the paper's "shuffled word pool"."""
    words = [w for group in groups for w in group["words"]]
    seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
    random.Random(seed).shuffle(words)
    return words


# ---------------------------------------------------------------- groupings spreadsheets


@dataclass(frozen=True)
class Grouping:
    """One row of a grouping spreadsheet: topic, its (up to) four words, culturally related flag, sheet row."""

    topic: str
    words: tuple[str, ...]
    culturally_related: bool | None
    row: int


def read_groupings(path: Path) -> list[Grouping]:
    """The groupings of one ``Grouping Datasets`` spreadsheet (``Tag 1`` = culturally related 0/1, NYT: empty)."""
    columns = ["Word 1", "Word 2", "Word 3", "Word 4", "Topic", "Tag 1"]
    out = []
    for row, record in read_xlsx_rows(path, columns):
        topic = record["Topic"].strip()
        words = tuple(record[f"Word {i}"].strip() for i in range(1, 5) if record[f"Word {i}"].strip())
        if not topic or len(words) < 2:
            raise source_error(path, row, f"a grouping needs a topic and at least 2 words, got {topic!r} {list(words)!r}")
        flag = record["Tag 1"].strip()
        if flag not in ("", "0", "1"):
            raise source_error(path, row, f"column 'Tag 1' is {flag!r}, expected 0, 1 or empty")
        out.append(Grouping(topic, words, None if flag == "" else flag == "1", row))
    return out


def group_amounts(root: Path) -> dict[str, tuple[int | None, int]]:
    """Seed 000 Table 1's last two columns per native subset: (culturally related groups, all groups) of its
    ``Grouping Datasets`` sheet (``Tag 1`` = 1; NYT sheets carry no flag: None). Translated subsets share
    their native sheet's groups; nyt-seq and nyt-shuf share one sheet."""
    out: dict[str, tuple[int | None, int]] = {}
    for subset in SUBSETS.values():
        if subset.language != subset.culture and subset.culture != "nyt":
            continue  # es-en, zh-en, ...: the native subset's row
        groupings = read_groupings(root / "Grouping Datasets" / subset.groupings)
        flags = [g.culturally_related for g in groupings]
        related = None if all(f is None for f in flags) else sum(bool(f) for f in flags)
        out[subset.folder] = (related, len(groupings))
    return out


def cultural_flags(groupings: list[Grouping]) -> dict[str, list[tuple[frozenset, bool | None]]]:
    index: dict[str, list[tuple[frozenset, bool | None]]] = {}
    for g in groupings:
        index.setdefault(g.topic, []).append((frozenset(g.words), g.culturally_related))
    return index


def lookup_flag(index: dict, topic: str, words: list[str]) -> bool | None:
    """The culturally related flag of the grouping with this topic whose words contain ``words`` (None if ambiguous)."""
    flags = {flag for word_set, flag in index.get(topic, []) if set(words) <= word_set}
    return flags.pop() if len(flags) == 1 else None


# ---------------------------------------------------------------- game CSVs


def find_file(folder: Path, pattern: str, what: str) -> Path:
    hits = sorted(folder.glob(pattern)) if folder.is_dir() else []
    if len(hits) != 1:
        problem = "file is missing" if not hits else f"{len(hits)} files match"
        raise UserError(f"bad source {folder}/{pattern}: {problem} ({what})")
    return hits[0]


def game_file(root: Path, subset: Subset, split: str, g: int, w: int) -> tuple[Path, int]:
    """The game CSV of one setting and the game count its name announces."""
    path = find_file(
        root / "Games Datasets" / subset.folder / split,
        f"*_groupcount_#{g}#_groupsize_#{w}#_gamecount_#*#_subset_#{split}#.csv",
        f"{subset.name} {g}x{w} {split} games",
    )
    count = re.search(r"_gamecount_#(\d+)#", path.name)
    return path, int(count.group(1))  # type: ignore[union-attr]


def read_game_blocks(path: Path, g: int, w: int) -> list[list[tuple[int, dict]]]:
    """Rows grouped into games: a block starts where the unnamed first column is 0 and counts 0..g-1."""
    header = ["", "Game #", "True Topic", "Tag 1", "Tag 2", "Tag 3", *[f"Word {i}" for i in range(1, w + 1)]]
    blocks: list[list[tuple[int, dict]]] = []
    for row, record in read_csv_rows(path, expected_header=header):
        position = parse_int(path, row, "(unnamed first column)", record[""])
        parse_int(path, row, "Game #", record["Game #"])
        if position == 0:
            blocks.append([])
        elif not blocks or position != len(blocks[-1]):
            expected = len(blocks[-1]) if blocks else 0
            raise source_error(path, row, f"first column is {position}, expected {expected} (a game is a block counting 0..{g - 1})")
        blocks[-1].append((row, record))
        if len(blocks[-1]) > g:
            raise source_error(path, row, f"game has more than {g} groups")
    for block in blocks:
        if len(block) != g:
            raise source_error(path, block[0][0], f"game starting here has {len(block)} groups, expected {g}")
    return blocks


# Strings pandas reads as missing by default: the authors' pipeline turned such words (e.g. the NYT
# word "NA", sodium) into empty cells. They are restored from the grouping spreadsheet.
PANDAS_NA_STRINGS = frozenset(
    "#N/A,#N/A N/A,#NA,-1.#IND,-1.#QNAN,-NaN,-nan,1.#IND,1.#QNAN,<NA>,N/A,NA,NULL,NaN,None,n/a,nan,null".split(",")
)


def restore_na_words(words: list[str], topic: str, groupings: dict[str, list[tuple[frozenset, bool | None]]]) -> list[str] | None:
    """Fill empty cells with the grouping's pandas-NA-like words when that is unambiguous, else None."""
    empty = [i for i, word in enumerate(words) if not word]
    present = {w for w in words if w}
    candidates = {
        w for word_set, _ in groupings.get(topic, []) if present <= word_set for w in word_set - present if w in PANDAS_NA_STRINGS
    }
    if len(candidates) != len(empty):
        return None
    filled = list(words)
    for i, word in zip(empty, sorted(candidates)):
        filled[i] = word
    return filled


def parse_group(path: Path, row: int, record: dict, w: int, subset: Subset, flags: dict) -> dict:
    topic = record["True Topic"].strip()
    words = [record[f"Word {i}"].strip() for i in range(1, w + 1)]
    if not topic:
        raise source_error(path, row, "empty 'True Topic'")
    if any(not word for word in words):
        restored = restore_na_words(words, topic, flags)
        if restored is None:
            raise source_error(path, row, f"empty word cell among {words!r}")
        words = restored
    raw_tags = [record[t].strip() for t in ("Tag 1", "Tag 2", "Tag 3")]
    if subset.flag_in_tag1:
        if raw_tags[0] not in ("0", "1"):
            raise source_error(path, row, f"'Tag 1' is {raw_tags[0]!r}, expected the culturally related flag 0 or 1")
        flag: bool | None = raw_tags[0] == "1"
        tags: list[str] = []
    else:
        tags = [t for t in raw_tags if t and t != "Null"]
        flag = None if subset.culture == "nyt" else lookup_flag(flags, topic, words)
    return {"topic": topic, "words": words, "tags": tags, "culturally_related": flag}


def same_words(scored: list[str], game: list[str]) -> bool:
    """Scored-file words equal the game's, an empty scored cell matching a restored pandas-NA word."""
    return len(scored) == len(game) and all(s == g or (not s and g in PANDAS_NA_STRINGS) for s, g in zip(scored, game))


def groups_key(groups: list[dict]) -> frozenset:
    return frozenset((gr["topic"], tuple(sorted(gr["words"]))) for gr in groups)


def read_setting(root: Path, subset: Subset, split: str, g: int, w: int, flags: dict) -> list[dict]:
    """All games of one (subset, split, setting) as dataset rows, difficulty columns still null."""
    path, announced = game_file(root, subset, split, g, w)
    blocks = read_game_blocks(path, g, w)
    if len(blocks) != announced:
        raise source_error(path, None, f"{len(blocks)} games, but the file name announces {announced}")
    rows, first_seen = [], {}
    for index, block in enumerate(blocks):
        groups = [parse_group(path, row, rec, w, subset, flags) for row, rec in block]
        numbers = {parse_int(path, row, "Game #", rec["Game #"]) for row, rec in block}
        if len(numbers) != 1:
            raise source_error(path, block[0][0], f"one game spans several 'Game #' values {sorted(numbers)}")
        gid = game_id(subset.name, g, w, split, index)
        key = groups_key(groups)
        rows.append(
            {
                "id": gid,
                "subset": subset.name,
                "language": subset.language,
                "culture": subset.culture,
                "split": split,
                "game_number": numbers.pop(),
                "n_groups": g,
                "group_size": w,
                "words": shuffled_pool(groups, gid),
                "groups": groups,
                "repeat_of": first_seen.get(key),
                **{k: None for k in DIFFICULTY_COLUMNS},
                "canprop_response": None,
                "canprop_prompt": None,
            }
        )
        first_seen.setdefault(key, gid)
    return rows


def missing_listed(root: Path) -> set[str]:
    """Paths the snapshot's MISSING.txt declares absent (the upstream commit has them)."""
    path = root / "MISSING.txt"
    if not path.is_file():
        return set()
    text = path.read_text(encoding="utf-8")
    return {m.strip() for m in re.findall(r"absent from snapshot:\s*(.+)", text)}


def join_scores(root: Path, subset: Subset, g: int, w: int, rows: list[dict], missing: set[str]) -> bool:
    """Fill the published difficulty values of the test games from the scored CSV; False if listed missing."""
    rel = f"Scored Games Datasets/{subset.folder}/test/scored_#{subset.folder}#_#{g}#_#{w}#_#{len(rows)}#_#test#.csv"
    path = root / rel
    if not path.is_file() and rel in missing:
        return False
    required = [
        "Game #",
        "True Topic",
        *[f"Word {i}" for i in range(1, w + 1)],
        "CanProp Prompt",
        "CanProp Response",
        *DIFFICULTY_COLUMNS.values(),
    ]
    records = list(read_csv_rows(path, required=required))
    if len(records) != g * len(rows):
        raise source_error(path, None, f"{len(records)} rows, expected {g * len(rows)} ({len(rows)} games x {g} groups)")
    for index, game in enumerate(rows):
        block = records[index * g : (index + 1) * g]
        for (row, rec), group in zip(block, game["groups"]):
            words = [rec[f"Word {i}"].strip() for i in range(1, w + 1)]
            if rec["True Topic"].strip() != group["topic"] or not same_words(words, group["words"]):
                raise source_error(path, row, f"does not match game {game['id']} group {group['topic']!r} {group['words']!r}")
        first_row, first = block[0]
        for key, column in DIFFICULTY_COLUMNS.items():
            values = {parse_float(path, row, column, rec[column]) for row, rec in block}
            if len(values) != 1:
                raise source_error(path, first_row, f"{column!r} differs within game {game['id']}")
            game[key] = values.pop()
        for key, column in (("canprop_response", "CanProp Response"), ("canprop_prompt", "CanProp Prompt")):
            if len({rec[column] for _, rec in block}) != 1:
                raise source_error(path, first_row, f"{column!r} differs within game {game['id']}")
            game[key] = first[column] or None
    return True


def read_all(root: Path, subsets: list[str] | None = None) -> tuple[dict[str, dict[str, list[dict]]], list[str]]:
    """Every config's rows ({config: {split: rows}}) and the scored files missing upstream."""
    missing = missing_listed(root)
    configs: dict[str, dict[str, list[dict]]] = {}
    absent: list[str] = []
    flag_cache: dict[str, dict] = {}
    for name in subsets or SUBSET_NAMES:
        subset = SUBSETS[name]
        if subset.groupings not in flag_cache:
            flag_cache[subset.groupings] = cultural_flags(read_groupings(root / "Grouping Datasets" / subset.groupings))
        flags = flag_cache[subset.groupings]
        for g, w in settings_of(name):
            config = f"{name}_{g}x{w}"
            configs[config] = {split: read_setting(root, subset, split, g, w, flags) for split in SPLITS}
            if not join_scores(root, subset, g, w, configs[config]["test"], missing):
                absent.append(config)
    return configs, absent


def card(configs: dict[str, dict[str, list[dict]]], absent: list[str], source: str) -> CardInfo:
    repeats = {c: sum(r["repeat_of"] is not None for r in s["test"] + s["dev"]) for c, s in configs.items()}
    repeat_text = ", ".join(f"`{c}` {n}" for c, n in repeats.items() if n) or "none"
    absent_text = ", ".join(f"`{c}`" for c in absent) or "none"
    body = (CARD_DIR / "globalgroup.md").read_text(encoding="utf-8")
    body = body.replace("{{repeats}}", repeat_text).replace("{{missing_scores}}", absent_text)
    return CardInfo(
        pretty_name="GlobalGroup",
        license="apache-2.0",
        citation=(CARD_DIR / "globalgroup_citation.txt").read_text(encoding="utf-8"),
        body=body,
        language=("en", "es", "zh", "hi", "ar"),
        task_categories=("text-generation",),
        tags=("word-grouping", "abstract-reasoning", "connections", "multilingual"),
        source=source,
    )


@register_builder(NAME)
def build(out_dir: Path) -> dict:
    """Write the 93-config GlobalGroup folder into ``out_dir``."""
    from datasets_build.sources import source_dir

    root = source_dir(NAME)
    configs, absent = read_all(root)
    source = pinned_source_line(NAME)
    summary = write_hub_folder(out_dir, configs, FEATURES, card(configs, absent, source))
    write_globalgroup_prompts(root, out_dir)  # the A.3 prompts travel with the data
    return summary
