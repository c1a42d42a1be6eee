"""The SPLAT situation puzzles (seed 004) as a Hub-ready dataset ``splat``, plus the game's prompts.

Source: upstream ``splat/puzzles.xlsx`` (Sheet1: ``title``, ``story``, ``answer``,
``level of difficulty`` such as ``"7/10 HARD"``; 975 rows). Levels 1-3 are easy, 4-6 medium and
7-9 hard, as the published levels and the authors' ``metrics.py`` bucket them (217 / 648 / 110).

Without ``$TRIANGULATE_UPSTREAM`` the pinned files (``manifests/splat.toml``) are downloaded and
verified (:mod:`datasets_build.sources`).

The built folder holds config ``default``, split ``test`` (one row per puzzle, upstream order) and
``prompts/*.txt``: the player and judge prompts of the authors' code (``config.yaml`` and the
string literals of ``puzzle_arena.py``, read with :mod:`ast`; the shared copy's ``splat/prompts`` holds
the same texts, tests compare), so that
``triangulate play --tasks splat`` needs only the built folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import datasets
import yaml

from datasets_build.hub import CardInfo, write_hub_folder
from datasets_build.manifest import pinned_source_line
from datasets_build.registry import register_builder
from datasets_build.upstream_literals import message_literals, parse_python, string_assignments
from plumbing import atomic
from plumbing.errors import UserError
from plumbing.paths import dataset_dir

NAME = "splat"
COLUMNS = ("title", "story", "answer", "level of difficulty")
DIFFICULTIES = ("easy", "medium", "hard")
#: prompt name -> upstream file under ``splat/prompts`` (see that folder's NOTES.txt)
PROMPT_FILES = {
    "player_init": "player_init.txt",
    "judge_init": "judge_init.txt",
    "judge_puzzle_template": "judge_puzzle_template.txt",
    "player_ready_message": "player_ready_message.txt",
}
_LEVEL = re.compile(r"^\s*(\d)\s*/\s*10\s+(EASY|MEDIUM|HARD)\s*$", re.IGNORECASE)

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "title": datasets.Value("string"),
        "story": datasets.Value("string"),
        "answer": datasets.Value("string"),
        "level": datasets.Value("int32"),
        "level_label": datasets.Value("string"),
        "difficulty": datasets.Value("string"),
    }
)

CITATION = """@inproceedings{chen2024weak,
  title={Weak-eval-Strong: Evaluating and Eliciting Lateral Thinking of LLMs with Situation Puzzles},
  author={Chen, Qi and Zhang, Bowen and Wang, Gang and Wu, Qi},
  booktitle={Advances in Neural Information Processing Systems (NeurIPS)},
  year={2024}
}"""

CARD_BODY = """\
SPLAT: 975 graded situation puzzles (Chen et al., NeurIPS 2024, arXiv 2410.06733). A player model
asks yes/no questions about an incomplete story; a judge model that knows the answer replies yes,
no or irrelevant, and says "Congratulations" when the player's account matches; at most 15 rounds.

Fields: `id` (`splat_NNN`, NNN = 0-based row of upstream `puzzles.xlsx`), `title`, `story`,
`answer` (the hidden scenario), `level` (1-9, from `level of difficulty` "N/10 LABEL"),
`level_label` (as published), `difficulty` (easy = levels 1-3, medium = 4-6, hard = 7-9; 217 / 648
/ 110 puzzles). Text is as published (no spelling fixes).

`prompts/` holds the player and judge prompts of the authors' code: `player_init.txt` and
`judge_init.txt` (config.yaml), `judge_puzzle_template.txt` (Python %-format with title, story,
answer) and `player_ready_message.txt` (string literals of puzzle_arena.py).

The upstream repository has no licence file: treat the puzzles as research data of their authors.
"""


def level_of(label: object, where: str) -> tuple[int, str]:
    """``"7/10 HARD"`` -> ``(7, "hard")``; the bucket is fixed by the number (1-3 easy, 4-6 medium, 7-9 hard)."""
    match = _LEVEL.match(str(label or ""))
    if not match:
        raise UserError(f"{where}: level of difficulty {label!r} is not like '7/10 HARD'")
    level = int(match.group(1))
    if not 1 <= level <= 9:
        raise UserError(f"{where}: level {level} is outside 1-9")
    bucket = DIFFICULTIES[(level - 1) // 3]
    if bucket != match.group(2).lower():
        raise UserError(f"{where}: level {level} is labelled {match.group(2)!r}, expected {bucket.upper()}")
    return level, bucket


def read_puzzles(xlsx: Path) -> list[dict]:
    """The puzzle rows of ``puzzles.xlsx`` in upstream order, validated (one error names file and row)."""
    import openpyxl

    if not xlsx.is_file():
        raise UserError(f"{xlsx} is missing; check TRIANGULATE_UPSTREAM")
    sheet = openpyxl.load_workbook(xlsx, read_only=True, data_only=True).worksheets[0]
    rows = sheet.iter_rows(values_only=True)
    header = [str(c).strip() if c is not None else "" for c in next(rows, ())]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise UserError(f"{xlsx}: missing column(s) {', '.join(missing)} (found {header})")
    col = {c: header.index(c) for c in COLUMNS}
    puzzles: list[dict] = []
    for excel_row, values in enumerate(rows, start=2):
        if values is None or all(v is None or str(v).strip() == "" for v in values):
            continue
        where = f"{xlsx.name} row {excel_row}"
        cell = {c: values[i] if i < len(values) else None for c, i in col.items()}
        for c in ("title", "story", "answer"):
            if cell[c] is None or not str(cell[c]).strip():
                raise UserError(f"{where}: empty {c!r}")
        level, bucket = level_of(cell["level of difficulty"], where)
        puzzles.append(
            {
                "id": f"splat_{len(puzzles):03d}",
                "title": str(cell["title"]).strip(),
                "story": str(cell["story"]).strip(),
                "answer": str(cell["answer"]).strip(),
                "level": level,
                "level_label": str(cell["level of difficulty"]).strip(),
                "difficulty": bucket,
            }
        )
    if not puzzles:
        raise UserError(f"{xlsx}: no puzzle rows")
    return puzzles


def read_prompts(folder: Path) -> dict[str, str]:
    """The four protocol strings from a ``prompts/`` folder (upstream or built), exact text."""
    prompts = {}
    for name, filename in PROMPT_FILES.items():
        path = folder / filename
        if not path.is_file():
            raise UserError(f"SPLAT prompt file {path} is missing")
        prompts[name] = path.read_text(encoding="utf-8")
    return check_prompts(prompts, folder)


def check_prompts(prompts: dict[str, str], where: Path) -> dict[str, str]:
    if prompts["judge_puzzle_template"].count("%s") != 3:
        raise UserError(f"{where}: the judge puzzle template needs three %s fields (title, story, answer)")
    empty = [k for k, v in prompts.items() if not v.strip()]
    if empty:
        raise UserError(f"{where}: empty SPLAT prompt(s) {', '.join(empty)}")
    return prompts


def upstream_prompts(root: Path) -> dict[str, str]:
    """The prompts of the authors' code, derived from the pinned upstream files: the role prompts from
    ``config.yaml`` (``prompt.prompt_player_init`` / ``prompt_judge_init``); the judge puzzle template
    (``prompt_puzzle = "..." % (title, story, answer)``) and the player's ready message (the
    ``{"role": "user", "content": "..."}`` literal) from ``puzzle_arena.py``, read with :mod:`ast`."""
    config_path = root / "config.yaml"
    if not config_path.is_file():
        raise UserError(f"{config_path} is missing; check TRIANGULATE_UPSTREAM")
    try:
        section = yaml.safe_load(config_path.read_text(encoding="utf-8"))["prompt"]
        roles = {"player_init": section["prompt_player_init"], "judge_init": section["prompt_judge_init"]}
    except (yaml.YAMLError, KeyError, TypeError) as exc:
        raise UserError(f"{config_path}: no prompt.prompt_player_init / prompt.prompt_judge_init ({exc})") from exc
    arena = root / "puzzle_arena.py"
    if not arena.is_file():
        raise UserError(f"{arena} is missing; check TRIANGULATE_UPSTREAM")
    tree = parse_python(arena.read_text(encoding="utf-8"), str(arena))
    puzzle = string_assignments(tree).get("prompt_puzzle")
    ready = next(message_literals(tree, "user"), None)
    if puzzle is None or ready is None:
        raise UserError(f"{arena}: cannot find the prompt_puzzle and the user-message string literals")
    return check_prompts({**roles, "judge_puzzle_template": puzzle, "player_ready_message": ready}, arena)


@register_builder(NAME)
def build_splat(out_dir: Path) -> dict:
    """Write the ``splat`` folder (config ``default``, split ``test``; ``prompts/``) into ``out_dir``."""
    from datasets_build.sources import source_dir

    source = source_dir(NAME)
    puzzles = read_puzzles(source / "puzzles.xlsx")
    prompts = upstream_prompts(source)
    card = CardInfo(
        pretty_name="SPLAT situation puzzles",
        license="unknown",
        citation=CITATION,
        body=CARD_BODY,
        language=("en",),
        task_categories=("text-generation",),
        tags=("lateral-thinking", "situation-puzzles", "multi-turn", "llm-as-judge"),
        source=pinned_source_line(NAME),
    )
    summary = write_hub_folder(out_dir, {"default": {"test": puzzles}}, FEATURES, card)
    (out_dir / "prompts").mkdir(parents=True, exist_ok=True)
    for name, filename in PROMPT_FILES.items():
        atomic.write_text(out_dir / "prompts" / filename, prompts[name])
    return summary


def load_splat(path: str | Path | None = None, **kwargs) -> datasets.DatasetDict:
    """The built ``splat`` dataset (``test`` split); a missing build names ``triangulate data build``."""
    from datasets_build.load import load_config

    return load_config(NAME, "default", path)


def load_prompts() -> dict[str, str]:
    """The SPLAT protocol prompts stored with the built dataset."""
    return read_prompts(dataset_dir(NAME) / "prompts")
