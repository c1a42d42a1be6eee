"""NYT Connections (seed 001, github.com/mustafamariam/LLM-Connections-Solver) -> Hub-ready dataset.

Upstream holds 442 games (``scoring/scripts/gold_data.json``, one entry per line of
``automated_call/all_games.txt``, same order): the paper's 438 test games (§3.1), the 3 few-shot
games of the prompt (entries flagged ``"exclude": true``) and one unusable game whose words were
lost upstream (all ``?``: 16 non-distinct words). Gold groups are listed in difficulty order
(yellow, green, blue, purple); ``game_with_knowledge_taxonomy.json`` labels each group with its
knowledge type (§3.2), joined by game index and group position after checking the word sets.

Human baselines (§5.2, App. D.1, Tables 3-4): ``results/novice.json`` (100 games) and ``expert.json``
(50 games) hold one unweighted clustering ``score`` per game played by humans (their ``categories`` are
the gold groups, not the humans' answers, so weighted scores cannot be recomputed). The build joins each
game to our ids by its 16 words and writes ``human_scores.json`` into the built folder
(:func:`read_human_scores`, :func:`load_human_scores`). The raw replies of Claude 3.5 Sonnet and GPT-4o
(``results/claude3.5sonnet.json``, ``gpt4o.json``, §5.1) go to ``published_answers.json`` the same way
(:func:`read_published_answers`), for the report to re-score with our code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import datasets

from datasets_build.globalgroup import shuffled_pool
from datasets_build.hub import CardInfo, write_hub_folder
from datasets_build.manifest import pinned_source_line
from datasets_build.prompts import write_connections_prompt
from datasets_build.registry import register_builder
from datasets_build.tabular import require_file, source_error
from plumbing import atomic
from plumbing.jsonio import read_json
from plumbing.paths import dataset_dir

NAME = "connections"
COLORS = ("yellow", "green", "blue", "purple")
TEST_GAMES, FEWSHOT_GAMES = 438, 3  # §3.1: 441 distinct games, 3 for few-shot prompting, 438 test
CARD_DIR = Path(__file__).with_name("cards")
GOLD = "scoring/scripts/gold_data.json"
TAXONOMY = "game_with_knowledge_taxonomy.json"
HUMAN_LEVELS = ("novice", "expert")  # results/<level>.json
HUMAN_SCORES_FILE = "human_scores.json"  # in the built folder
#: the paper's published raw LLM answers (results/<file>.json, the full reply in ``reason``) -> the row label
PUBLISHED_ANSWERS = {"claude3.5sonnet": "Claude 3.5 Sonnet", "gpt4o": "GPT-4o"}
PUBLISHED_ANSWERS_FILE = "published_answers.json"  # in the built folder

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "game_id": datasets.Value("int64"),
        "date": datasets.Value("string"),
        "words": datasets.Sequence(datasets.Value("string")),
        "groups": [
            {
                "topic": datasets.Value("string"),
                "words": datasets.Sequence(datasets.Value("string")),
                "level": datasets.Value("int64"),
                "color": datasets.Value("string"),
                "knowledge": datasets.Sequence(datasets.Value("string")),
                "complexity": datasets.Value("string"),
                "based_on": datasets.Sequence(datasets.Value("string")),
            }
        ],
    }
)

_QUOTES = "'\"‘’“” \t"


def parse_word_list(text: str) -> list[str]:
    """``"['A', 'B', ’C’]"`` (the taxonomy's stringified lists, with stray curly quotes) -> words, no eval."""
    inner = text.strip().removeprefix("[").removesuffix("]")
    return [part.strip(_QUOTES) for part in re.split(r",\s*(?=['\"‘’“”])", inner) if part.strip(_QUOTES)]


# Upstream spells three word-form labels two ways; the paper's names (§3.2) are the nouns.
LABEL_SPELLINGS = {"phonological": "phonology", "orthographical": "orthography", "morphological": "morphology"}


def split_labels(text: str) -> list[str]:
    """``"semantic relations + morphological"`` -> ``["semantic relations", "morphology"]`` (paper's label names)."""
    parts = [part.strip() for part in text.split("+") if part.strip()]
    return [LABEL_SPELLINGS.get(part.lower(), part) for part in parts]


def gold_groups(path: Path, index: int, entry: object) -> list[tuple[str, list[str]]]:
    if not isinstance(entry, dict) or not isinstance(entry.get("categories"), dict):
        raise source_error(path, f"entry {index}", "expected an object with 'categories'")
    groups = []
    for topic, value in entry["categories"].items():
        words = value.get("Words") if isinstance(value, dict) else value  # one upstream entry nests {"Words": [...]}
        if not isinstance(words, list) or len(words) != 4 or not all(isinstance(w, str) for w in words):
            raise source_error(path, f"entry {index}", f"group {topic!r} is not a list of 4 words")
        groups.append((str(topic).strip(), [w.strip() for w in words]))
    if len(groups) != 4:
        raise source_error(path, f"entry {index}", f"{len(groups)} groups, expected 4")
    return groups


def knowledge_labels(path: Path, index: int, entry: object, groups: list[tuple[str, list[str]]]) -> list[dict]:
    notes = entry.get("reasoning_annotation") if isinstance(entry, dict) else None
    if not isinstance(notes, list) or len(notes) != 4:
        raise source_error(path, f"entry {index}", "expected 4 'reasoning_annotation' items")
    out = []
    for (topic, words), note in zip(groups, notes):
        if set(parse_word_list(str(note.get("Words in Category", "")))) != set(words):
            raise source_error(path, f"entry {index}", f"annotated words of {note.get('Categories')!r} differ from gold group {topic!r}")
        out.append(
            {
                "knowledge": split_labels(str(note.get("Knowledge Type", ""))),
                "complexity": str(note.get("Complexity", "")).strip() or None,
                "based_on": split_labels(str(note.get("Based On", ""))),
            }
        )
    return out


def read_games(root: Path) -> dict[str, list[dict]]:
    """{"test": 438 rows, "fewshot": 3 rows} from the upstream gold and taxonomy files."""
    gold_path, tax_path = root / GOLD, root / TAXONOMY
    gold, taxonomy = read_json(require_file(gold_path), "source"), read_json(require_file(tax_path), "source")
    if not isinstance(gold, list) or not isinstance(taxonomy, list) or len(gold) != len(taxonomy):
        raise source_error(tax_path, None, f"expected two lists of equal length ({GOLD} and {TAXONOMY})")
    splits: dict[str, list[dict]] = {"test": [], "fewshot": []}
    for index, (entry, notes) in enumerate(zip(gold, taxonomy)):
        groups = gold_groups(gold_path, index, entry)
        words = [w for _, ws in groups for w in ws]
        if len(set(words)) != 16:
            continue  # the one upstream game whose words were lost (all "?"), unusable
        labels = knowledge_labels(tax_path, index, notes, groups)
        row = {
            "id": f"connections_{index:03d}",
            "game_id": index,
            "date": None,
            "words": shuffled_pool([{"words": ws} for _, ws in groups], f"connections_{index:03d}"),
            "groups": [
                {"topic": topic, "words": ws, "level": level, "color": COLORS[level], **labels[level]}
                for level, (topic, ws) in enumerate(groups)
            ],
        }
        splits["fewshot" if entry.get("exclude") else "test"].append(row)
    for split, expected in (("test", TEST_GAMES), ("fewshot", FEWSHOT_GAMES)):
        if len(splits[split]) != expected:
            raise source_error(gold_path, None, f"{len(splits[split])} {split} games, expected {expected} (seed 001 §3.1)")
    return splits


def read_human_scores(root: Path) -> dict[str, list[dict]]:
    """Level -> [{"id": "connections_NNN", "game_id": N, "unweighted_clustering": s}] from upstream
    ``results/<level>.json``; games are found in ``scoring/scripts/gold_data.json`` by their word set."""
    gold = read_json(require_file(root / GOLD), "source")
    index = {frozenset(w.strip().casefold() for _, ws in gold_groups(root / GOLD, i, e) for w in ws): i for i, e in enumerate(gold)}
    out: dict[str, list[dict]] = {}
    for level in HUMAN_LEVELS:
        path = root / "results" / f"{level}.json"
        games = read_json(require_file(path), "source")
        if not isinstance(games, list):
            raise source_error(path, None, "expected a list of games")
        rows = []
        for number, game in enumerate(games):
            if not isinstance(game, dict) or not isinstance(game.get("allwords"), str) or not isinstance(game.get("score"), int):
                raise source_error(path, f"entry {number}", "expected 'allwords' (text) and 'score' (integer)")
            words = frozenset(w.strip().casefold() for w in game["allwords"].split(", "))  # "20,000" is one word
            if words not in index:
                raise source_error(path, f"entry {number}", "its 16 words are no game of gold_data.json")
            rows.append({"id": f"connections_{index[words]:03d}", "game_id": index[words], "unweighted_clustering": int(game["score"])})
        out[level] = rows
    return out


def read_published_answers(root: Path) -> dict[str, list[dict]]:
    """Model label -> [{"id": "connections_NNN", "game_id": N, "response": full reply, "published_score": s,
    "categorical_score": the human verdicts per category}]
    from upstream ``results/<model>.json`` (§5.1: the raw replies of Claude 3.5 Sonnet and GPT-4o to every
    game, and the paper's unweighted score); games are joined by their 16 words as the human scores are.
    The report re-scores the replies with our parser and metrics on the games a run played."""
    gold = read_json(require_file(root / GOLD), "source")
    index = {frozenset(w.strip().casefold() for _, ws in gold_groups(root / GOLD, i, e) for w in ws): i for i, e in enumerate(gold)}
    out: dict[str, list[dict]] = {}
    for stem, label in PUBLISHED_ANSWERS.items():
        path = root / "results" / f"{stem}.json"
        games = read_json(require_file(path), "source")
        if not isinstance(games, list):
            raise source_error(path, None, "expected a list of games")
        rows = []
        for number, game in enumerate(games):
            if not isinstance(game, dict) or not isinstance(game.get("allwords"), str) or not isinstance(game.get("reason"), str):
                raise source_error(path, f"entry {number}", "expected 'allwords' and 'reason' (text)")
            words = frozenset(w.strip().casefold() for w in game["allwords"].split(", "))
            if words in index:  # the one upstream game whose words were lost matches none
                i = index[words]
                verdicts = game.get("categorical_score") if isinstance(game.get("categorical_score"), dict) else {}
                rows.append(
                    {
                        "id": f"connections_{i:03d}",
                        "game_id": i,
                        "response": game["reason"],
                        "published_score": game.get("score"),
                        # the human judge's per-category verdicts (§4.3.2), "<model's name>_#_<gold name>": "Yes"/"No"
                        "categorical_score": {str(k): str(v) for k, v in verdicts.items()},
                    }
                )
        out[label] = rows
    return out


def load_published_answers() -> dict[str, list[dict]]:
    """The published LLM answers written by the build (``published_answers.json``); {} for an older build."""
    path = dataset_dir(NAME) / PUBLISHED_ANSWERS_FILE
    return read_json(path, "dataset file") if path.is_file() else {}


def load_human_scores() -> dict[str, list[dict]]:
    """The human scores written by the build (``human_scores.json`` of the built folder); {} when the
    folder was built without them (an older build)."""
    path = dataset_dir(NAME) / HUMAN_SCORES_FILE
    return read_json(path, "dataset file") if path.is_file() else {}


@register_builder(NAME)
def build(out_dir: Path) -> dict:
    """Write the Connections folder (config ``default``: splits ``test`` and ``fewshot``) into ``out_dir``."""
    from datasets_build.sources import source_dir

    root = source_dir(NAME)
    splits = read_games(root)
    card = CardInfo(
        pretty_name="NYT Connections (Connecting the Dots)",
        license="unknown",
        citation=(CARD_DIR / "connections_citation.txt").read_text(encoding="utf-8"),
        body=(CARD_DIR / "connections.md").read_text(encoding="utf-8"),
        language=("en",),
        task_categories=("text-generation",),
        tags=("word-grouping", "abstract-reasoning", "connections"),
        source=pinned_source_line(NAME),
    )
    summary = write_hub_folder(out_dir, {"default": splits}, FEATURES, card)
    write_connections_prompt(root, out_dir)  # the paper's prompt (Appendix A) travels with the data
    humans = read_human_scores(root)  # §5.2 human baselines, joined to our game ids
    atomic.write_text(Path(out_dir) / HUMAN_SCORES_FILE, json.dumps(humans, indent=1) + "\n")
    answers = read_published_answers(root)  # §5.1 raw LLM replies, re-scored by the report on the games played
    atomic.write_text(Path(out_dir) / PUBLISHED_ANSWERS_FILE, json.dumps(answers, ensure_ascii=False) + "\n")
    return summary
