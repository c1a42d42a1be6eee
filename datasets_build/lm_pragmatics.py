"""LM-Pragmatics (Hu et al. 2023, github.com/jennhu/lm-pragmatics) -> Hub-ready dataset.

The evaluation data are the 35 zero-shot story prompt files ``prompts/<Phenomenon>_prompts_seed<k>_examples0.csv``
(seven phenomena x five option-order seeds; the ``no-story`` ablation files are not used by Triangulating).
One config per phenomenon (the config names of the Triangulating authors' Hub copy
``clembench-playpen/lm-pragmatics``), one split per seed (``seed_0`` .. ``seed_4``). Each row keeps the
upstream prompt byte for byte; the option order and labels are parsed from their Python-list strings
with ``ast.literal_eval`` (bounded literals, never executed code).
"""

from __future__ import annotations

import ast
from pathlib import Path

import datasets

from datasets_build.hub import CardInfo, write_hub_folder
from datasets_build.manifest import pinned_repo
from datasets_build.registry import register_builder
from datasets_build.tabular import parse_int, read_csv_rows, source_error

NAME = "lm_pragmatics"
CARD_DIR = Path(__file__).with_name("cards")
SEEDS = (0, 1, 2, 3, 4)
# config name -> upstream file stem, and items per seed (Hu et al. 2023, Table 1; checked on build)
PHENOMENA: dict[str, tuple[str, int]] = {
    "coherence": ("CoherenceInference", 40),
    "deceits": ("Deceits", 20),
    "humour": ("Humour", 25),
    "indirect_speech": ("IndirectSpeech", 20),
    "irony": ("Irony", 25),
    "maxims": ("Maxims", 19),
    "metaphor": ("Metaphor", 20),
}
REQUIRED = (
    "phenomenon",
    "item_id",
    "content",
    "randomized_option_order",
    "randomized_labels_complex",
    "randomized_true_answer",
    "original_labels_complex",
    "is_example",
    "prompt",
    "seed",
)

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "phenomenon": datasets.Value("string"),
        "item_id": datasets.Value("int64"),
        "seed": datasets.Value("int64"),
        "content": datasets.Value("string"),
        "prompt": datasets.Value("string"),
        "randomized_option_order": datasets.Sequence(datasets.Value("int64")),
        "randomized_labels_complex": datasets.Sequence(datasets.Value("string")),
        "randomized_true_answer": datasets.Value("int64"),
        "original_labels_complex": datasets.Sequence(datasets.Value("string")),
        "randomized_violated_maxims": datasets.Sequence(datasets.Value("string")),
        "original_violated_maxims": datasets.Sequence(datasets.Value("string")),
    }
)


def prompt_file(root: Path, stem: str, seed: int) -> Path:
    return root / "prompts" / f"{stem}_prompts_seed{seed}_examples0.csv"


def parse_list(path: Path, row: int, column: str, text: str) -> list:
    """A Python-list string such as ``"[3, 4, 1, 2]"`` or ``"['A', 'B']"`` (``ast.literal_eval``, bounded)."""
    if len(text) > 10_000:
        raise source_error(path, row, f"column {column!r} is too long for an option list")
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        raise source_error(path, row, f"column {column!r} is {text[:60]!r}, expected a Python list") from None
    if not isinstance(value, list):
        raise source_error(path, row, f"column {column!r} is {text[:60]!r}, expected a Python list")
    return value


def read_seed_file(path: Path, config: str, seed: int) -> list[dict]:
    """Rows of one ``<Phenomenon>_prompts_seed<k>_examples0.csv`` file, checked for consistency."""
    rows = []
    for number, record in read_csv_rows(path, required=REQUIRED):
        order = parse_list(path, number, "randomized_option_order", record["randomized_option_order"])
        if sorted(order) != list(range(1, len(order) + 1)):
            raise source_error(path, number, f"randomized_option_order {order} is not a permutation of 1..{len(order)}")
        answer = parse_int(path, number, "randomized_true_answer", record["randomized_true_answer"])
        if not 1 <= answer <= len(order):
            raise source_error(path, number, f"randomized_true_answer {answer} is not an option number 1..{len(order)}")
        if record["is_example"].strip() != "False" or parse_int(path, number, "seed", record["seed"]) != seed:
            raise source_error(path, number, f"expected a zero-shot test row of seed {seed}")
        if f"{answer}) " not in record["prompt"]:
            raise source_error(path, number, f"the prompt does not display option {answer}")
        item = parse_int(path, number, "item_id", record["item_id"])
        maxims = {
            column: [str(v) for v in parse_list(path, number, column, record[column])] if record.get(column) else []
            for column in ("randomized_violated_maxims", "original_violated_maxims")
        }
        rows.append(
            {
                "id": f"{config}_seed{seed}_{item}",
                "phenomenon": config,
                "item_id": item,
                "seed": seed,
                "content": record["content"],
                "prompt": record["prompt"],
                "randomized_option_order": [int(v) for v in order],
                "randomized_labels_complex": [
                    str(v) for v in parse_list(path, number, "randomized_labels_complex", record["randomized_labels_complex"])
                ],
                "randomized_true_answer": answer,
                "original_labels_complex": [
                    str(v) for v in parse_list(path, number, "original_labels_complex", record["original_labels_complex"])
                ],
                **maxims,
            }
        )
    return rows


def read_phenomena(root: Path) -> dict[str, dict[str, list[dict]]]:
    """{config: {"seed_<k>": rows}} for the seven phenomena, item counts checked against Hu et al. (2023)."""
    configs: dict[str, dict[str, list[dict]]] = {}
    for config, (stem, items) in PHENOMENA.items():
        configs[config] = {}
        for seed in SEEDS:
            path = prompt_file(root, stem, seed)
            rows = read_seed_file(path, config, seed)
            if len(rows) != items:
                raise source_error(path, None, f"{len(rows)} items, expected {items} for {stem}")
            configs[config][f"seed_{seed}"] = rows
    return configs


@register_builder(NAME)
def build(out_dir: Path) -> dict:
    """Write the LM-Pragmatics folder (7 configs x splits seed_0..seed_4, 845 rows) into ``out_dir``."""
    from datasets_build.sources import source_dir

    configs = read_phenomena(source_dir(NAME))
    repo, commit = pinned_repo(NAME)
    card = CardInfo(
        pretty_name="LM-Pragmatics (Hu et al. 2023), zero-shot story prompts",
        license="unknown",
        citation=(CARD_DIR / "lm_pragmatics_citation.txt").read_text(encoding="utf-8"),
        body=(CARD_DIR / "lm_pragmatics.md").read_text(encoding="utf-8"),
        language=("en",),
        task_categories=("multiple-choice",),
        tags=("pragmatics", "cognitive-test", "triangulating"),
        source=f"https://github.com/{repo} at commit `{commit}`, files `prompts/<Phenomenon>_prompts_seed<k>_examples0.csv`.",
    )
    return write_hub_folder(out_dir, configs, FEATURES, card)


def doc_to_choice(doc: dict) -> list[str]:
    """The scored continuations: the displayed option numbers ``"1" .. "k"`` (the prompt ends "Answer: ")."""
    return [str(number) for number in range(1, len(doc["randomized_option_order"]) + 1)]


def doc_to_target(doc: dict) -> int:
    """Index of the correct option number in :func:`doc_to_choice` (``randomized_true_answer`` is 1-based)."""
    return int(doc["randomized_true_answer"]) - 1
