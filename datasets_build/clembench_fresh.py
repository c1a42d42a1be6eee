"""Fresh clembench instances: ``triangulate data generate --benchmark clembench --game G --seed S`` makes new episodes
with the published procedures (documented in the dataset card, ``cards/clembench.md``), written as a folder of the
``clembench`` dataset (:mod:`datasets_build.clembench`: its rows, features and card)."""

from __future__ import annotations

import argparse
import csv
import json
import random
from collections.abc import Sequence
from pathlib import Path
from statistics import mean, pstdev
from typing import Any

from datasets_build.clembench import FEATURES, NAME, card, episode_row, playable
from datasets_build.clembench_upstream import (
    game_dir,
    load_instances,
    read_json,
    wordle_word_list,
)
from datasets_build.generate import register_generator
from datasets_build.hub import atomic_dir, write_hub_folder
from plumbing.errors import UserError
from plumbing.paths import data_root

GENERATED_GAMES = ("wordle", "wordle_withclue", "wordle_withcritic", "taboo", "referencegame", "imagegame", "privateshared")
EMPTY = "\u25a2"


def frequency_bands(words: Sequence[str], lang: str = "en") -> dict[str, list[str]]:
    """clembench's bands over candidate words: high > mean + std, low < mean - std, medium between
    (wordle/utils/dump_categorized_words.py), with frequencies from the ``wordfreq`` package."""
    from wordfreq import word_frequency

    freqs = {w: word_frequency(w, lang) for w in words}
    freqs = {w: f for w, f in freqs.items() if f > 0}
    if len(freqs) < 3:
        raise UserError("too few candidate words with a known frequency to form frequency bands")
    mu, sd = mean(freqs.values()), pstdev(freqs.values())
    bands: dict[str, list[str]] = {"high_frequency": [], "medium_frequency": [], "low_frequency": []}
    for word in sorted(freqs, key=lambda w: (-freqs[w], w)):
        band = "high_frequency" if freqs[word] > mu + sd else "low_frequency" if freqs[word] < mu - sd else "medium_frequency"
        bands[band].append(word)
    return bands


def _split_count(count: int, parts: int) -> list[int]:
    return [count // parts + (1 if i < count % parts else 0) for i in range(parts)]


def _read_pairs(path: Path | None, what: str) -> dict[str, Any]:
    if path is None:
        return {}
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{what} file {path} does not exist")
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))

    with path.open(newline="", encoding="utf-8") as fh:
        return {row[0].strip().lower(): row[1].strip() for row in csv.reader(fh) if len(row) >= 2}


def generate_wordle(game: str, count: int, seed: int, clues: dict[str, str]) -> list[dict[str, Any]]:
    """Target words from the frequency bands of the allowed-word list (high and medium, as v1.6)."""
    template = load_instances(game)[0]
    needs_clue = bool(template["use_clue"])
    candidates = sorted(wordle_word_list())
    if needs_clue:
        if not clues:
            raise UserError(
                f"--game {game} needs --clues FILE (csv word,clue or JSON {{word: clue}}): v1.6 took its clues "
                "from the NYT crossword clue set on Kaggle, which is not redistributed"
            )
        candidates = [w for w in candidates if w in clues]
    bands = frequency_bands(candidates)
    rng = random.Random(seed)
    rows = []
    for exp_index, (band, n) in enumerate(zip(("high_frequency", "medium_frequency"), _split_count(count, 2))):
        pool = bands[band]
        if len(pool) < n:
            raise UserError(f"only {len(pool)} {band} candidate words for {n} games")
        name = f"{band}_words_{template['name'].split('_words_', 1)[1]}"
        for game_id, word in enumerate(rng.sample(pool, n), start=1):
            base = {
                k: v for k, v in template.items() if k not in ("id", "game_id", "target_word", "target_word_clue", "target_word_difficulty")
            }
            episode = {
                **base,
                "name": name,
                "experiment": name,
                "experiment_index": exp_index,
                "game_id": game_id,
                "target_word": word,
                "target_word_clue": clues.get(word, ""),
                "target_word_difficulty": band,
            }
            episode["id"] = f"{exp_index}_{name}_{game_id}"
            rows.append(episode)
    return rows


def generate_taboo(count: int, seed: int, related: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Target words by frequency band (high / medium / low, as v1.6); three related words each from ``related``."""
    if not related:
        raise UserError(
            "--game taboo needs --related FILE (JSON {word: [three related words]}): v1.6 picked related words "
            "by hand from the Merriam-Webster thesaurus, which is not redistributed"
        )
    usable = sorted(w for w, rel in related.items() if len(rel) >= 3)
    bands = frequency_bands(usable)
    templates = load_instances("taboo")
    rng = random.Random(seed)
    rows = []
    for exp_index, (band, n) in enumerate(zip(("high_frequency", "medium_frequency", "low_frequency"), _split_count(count, 3))):
        if len(bands[band]) < n:
            raise UserError(f"only {len(bands[band])} {band} words with related words for {n} games")
        name = {"high_frequency": "high_en", "medium_frequency": "medium_en", "low_frequency": "low_en"}[band]
        base = {k: v for k, v in templates[0].items() if k in ("max_turns", "describer_initial_prompt", "guesser_initial_prompt")}
        for game_id, word in enumerate(rng.sample(bands[band], n)):
            rows.append(
                {
                    **base,
                    "name": name,
                    "experiment": name,
                    "experiment_index": exp_index,
                    "game_id": game_id,
                    "target_word": word,
                    "related_word": list(related[word][:3]),
                    "id": f"{exp_index}_{name}_{game_id}",
                }
            )
    return rows


def _grid_cells(grid: str) -> list[str]:
    return grid.strip().replace("\n", " ").split(" ")


def random_grid(rng: random.Random, letters: int, letter: str, size: int = 5) -> str:
    """clembench's random grid: ``letters`` draws of a random cell set to ``letter``."""
    cells = [[EMPTY] * size for _ in range(size)]
    for _ in range(min(size * size, letters)):
        cells[rng.randint(0, size - 1)][rng.randint(0, size - 1)] = letter
    return "\n".join(" ".join(row) for row in cells)


def generate_imagegame(count: int, seed: int) -> list[dict[str, Any]]:
    """compact_grids: the upstream base grids with X replaced by a random letter; random_grids: 5..min(10, #X)
    random cells of a random letter (imagegame/instancegenerator.py)."""
    base_grids = read_json(game_dir("imagegame") / "resources" / "grids_v1_5.json")
    template = load_instances("imagegame")[0]
    rng = random.Random(seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    rows = []
    for exp_index, (name, n) in enumerate(zip(("compact_grids", "random_grids"), _split_count(count, 2))):
        for game_id in range(n):
            grid = base_grids[rng.randrange(len(base_grids))]
            letter = rng.choice(alphabet)
            if name == "compact_grids":
                target = grid.replace("X", letter).strip()
            else:
                target = random_grid(rng, rng.randint(5, max(5, min(grid.count("X"), 10))), letter)
            filled = sum(c != EMPTY for c in _grid_cells(target))
            episode = {k: v for k, v in template.items() if k not in ("id", "game_id", "target_grid", "number_of_letters")}
            episode.update(
                name=name,
                experiment=name,
                experiment_index=exp_index,
                game_id=game_id,
                target_grid=target + "\n",
                number_of_letters=filled,
                id=f"{exp_index}_{name}_{game_id}",
            )
            rows.append(episode)
    return rows


def _hamming(a: str, b: str) -> int:
    return sum(x != y for x, y in zip(_grid_cells(a), _grid_cells(b)))


def generate_referencegame(count: int, seed: int) -> list[dict[str, Any]]:
    """Triplets per grid category: a target and the two grids of its category nearest to it (cell edit distance),
    the target shown to Player 2 at a random position; random_grids: random X grids (grids_v1.5 README)."""
    folder = game_dir("referencegame") / "resources"
    grids = read_json(folder / "grids_v1.5.json")
    head_a = (folder / "initial_prompts" / "player_a_prompt_header_zero_shot.template").read_text(encoding="utf-8")
    head_b = (folder / "initial_prompts" / "player_b_prompt_header_zero_shot.template").read_text(encoding="utf-8")
    template = load_instances("referencegame")[0]
    names = [["first", "1st", "1"], ["second", "2nd", "2"], ["third", "3rd", "3"]]
    rng = random.Random(seed)
    categories = list(grids)
    rows = []
    for exp_index, (category, n) in enumerate(zip(categories, _split_count(count, len(categories)))):
        pool = [g.strip() for g in grids[category]]
        for game_id in range(n):
            if category == "random_grids" or len(pool) < 3:
                trio = [random_grid(rng, rng.randint(5, 12), "X") for _ in range(3)]
            else:
                target = rng.choice(pool)
                others = sorted((g for g in pool if g != target), key=lambda g: (_hamming(target, g), g))[:2]
                trio = [target, *others]
            position = rng.randrange(3)
            order = [trio[1], trio[2]]
            order.insert(position, trio[0])
            p1 = head_a.replace("TARGET_GRID", trio[0]).replace("SECOND_GRID", trio[1]).replace("THIRD_GRID", trio[2])
            p2 = head_b.replace("FIRST_GRID", order[0]).replace("SECOND_GRID", order[1]).replace("THIRD_GRID", order[2])
            rows.append(
                {
                    "name": category,
                    "experiment": category,
                    "experiment_index": exp_index,
                    "game_id": game_id,
                    "id": f"{exp_index}_{category}_{game_id}",
                    "player_1_prompt_header": p1,
                    "player_2_prompt_header": p2,
                    "player_1_target_grid": trio[0],
                    "player_1_second_grid": trio[1],
                    "player_1_third_grid": trio[2],
                    "player_2_first_grid": order[0],
                    "player_2_second_grid": order[1],
                    "player_2_third_grid": order[2],
                    "target_grid_name": names[position],
                    **{
                        k: template[k]
                        for k in (
                            "player_1_response_pattern",
                            "player_2_response_pattern",
                            "player_1_response_tag",
                            "player_2_response_tag",
                        )
                    },
                }
            )
    return rows


def generate_privateshared(count: int, seed: int) -> list[dict[str, Any]]:
    """Per experiment: slot values from slot_values.json (distinct), a random request order, a random request
    wording per slot and a random probe wording per slot and probing turn (privateshared/instancegenerator.py)."""
    texts = game_dir("privateshared") / "resources" / "texts"
    published = load_instances("privateshared")
    experiments = list(dict.fromkeys(ep["experiment"] for ep in published))
    rng = random.Random(seed)
    rows = []
    for exp_index, (name, n) in enumerate(zip(experiments, _split_count(count, len(experiments)))):
        template = next(ep for ep in published if ep["experiment"] == name)
        values = read_json(texts / name / "slot_values.json")
        requests = read_json(texts / name / "requests.json")
        probes = read_json(texts / name / "probing_questions.json")
        for game_id in range(n):
            slots: dict[str, str] = {}
            for slot in template["slots"]:
                choices = [v for v in values[slot] if v.lower() not in {x.lower() for x in slots.values()}]
                slots[slot] = rng.choice(choices)
            prompt = template["initial_prompt"]
            for slot, old in template["slots"].items():
                prompt = prompt.replace(f"\n{slot.upper()}: {old}\n", f"\n{slot.upper()}: {slots[slot]}\n", 1)
            order = list(slots)
            rng.shuffle(order)
            rows.append(
                {
                    "name": name,
                    "experiment": name,
                    "experiment_index": exp_index,
                    "game_id": game_id,
                    "id": f"{exp_index}_{name}_{game_id}",
                    "tag": template["tag"],
                    "lang": template.get("lang", "en"),
                    "slots": slots,
                    "initial_prompt": prompt,
                    "request_order": order,
                    "requests": {s: rng.randrange(len(requests[s])) for s in slots},
                    "probes": {str(t): {s: rng.randrange(len(probes[s])) for s in slots} for t in range(len(slots) + 1)},
                }
            )
    return rows


def generate_rows(game: str, count: int, seed: int, clues: dict | None = None, related: dict | None = None) -> list[dict[str, Any]]:
    """``count`` fresh episodes of ``game`` (flattened instance dicts with their extras, playable by :mod:`multiturn.games.clem`)."""
    if game.startswith("wordle"):
        rows = generate_wordle(game, count, seed, {k.lower(): v for k, v in (clues or {}).items()})
    elif game == "taboo":
        rows = generate_taboo(count, seed, related or {})
    elif game == "imagegame":
        rows = generate_imagegame(count, seed)
    elif game == "referencegame":
        rows = generate_referencegame(count, seed)
    elif game == "privateshared":
        rows = generate_privateshared(count, seed)
    else:
        raise UserError(f"unknown clembench game {game!r}; choose from {', '.join(GENERATED_GAMES)}")
    return [playable(game, row) for row in rows]


def _arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--game", choices=GENERATED_GAMES, help="clembench game to generate instances for")
    group.add_argument("--clues", type=Path, default=None, help="wordle_withclue/withcritic: csv word,clue or JSON {word: clue}")
    group.add_argument("--related", type=Path, default=None, help="taboo: JSON {word: [related words]}")


@register_generator(NAME, add_arguments=_arguments, help="fresh clembench instances (seed 002: games, not instances)")
def run_generate(args: argparse.Namespace) -> dict:
    game = getattr(args, "game", None)
    if not game:
        raise UserError("--benchmark clembench needs --game (one of " + ", ".join(GENERATED_GAMES) + ")")
    rows = generate_rows(game, args.count, args.seed, _read_pairs(args.clues, "--clues"), _read_pairs(args.related, "--related"))
    out = (args.out or data_root() / "generated" / f"clembench_{game}_seed{args.seed}").expanduser().resolve()
    extra = (
        f"\n\n## This folder\n\nGenerated with `triangulate data generate --benchmark clembench --game {game} "
        f"--count {args.count} --seed {args.seed}`: config `{game}`, split `test`, {len(rows)} episodes.\n"
    )
    with atomic_dir(out) as tmp:
        summary = write_hub_folder(tmp, {game: {"test": [episode_row(game, ep) for ep in rows]}}, FEATURES, card(extra))
    return {**summary, "out": out}
