"""The ``nback`` dataset: Gong et al.'s n-back base blocks, with the notebooks' system prompts.

Source (upstream ``nback/``, pinned in ``manifests/nback.toml``): the Daniel-Gong/ChatGPT-WM base sets
(50 blocks x 24 trials per variant, line 1 the stimuli, line 2 the ``m``/``-`` targets), and, read as
string literals with :mod:`ast` from the authors' notebooks ``experiments/verbal.ipynb`` and
``experiments/spatial_3*3.ipynb``, the system messages and the 3x3 grid strings the spatial notebook
sends (the shared copy's ``prompts/`` and ``grids_3x3.json`` hold the same texts; tests compare).

``triangulate data build`` writes one config per variant, ``verbal_1`` ... ``spatial_3``, split
``test``, one row per block in upstream order: ``block``, ``n``, ``kind``, ``stimuli`` (one character
per trial), ``targets``, ``messages`` (the user message of each trial: the letter, or the grid
string for a grid position) and ``system_prompt``. The runner (:mod:`multiturn.games.nback`) plays these
rows and reads nothing else.

Adding a variant: add it to :data:`~datasets_build.nback_names.KINDS` and its files upstream; the builder and the loader follow.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import datasets

from datasets_build.hub import CardInfo, write_hub_folder
from datasets_build.load import load_config
from datasets_build.manifest import pinned_source_line
from datasets_build.nback_names import KINDS, MATCH, NON_MATCH
from datasets_build.registry import register_builder
from datasets_build.sources import source_dir
from datasets_build.upstream_literals import message_literals, notebook_cells, string_assignments
from plumbing.errors import UserError

NAME = "nback"
N_BLOCKS = 50
LEVELS = (1, 2, 3)

FEATURES = datasets.Features(
    {
        "block": datasets.Value("int32"),
        "n": datasets.Value("int32"),
        "kind": datasets.Value("string"),
        "stimuli": datasets.Value("string"),
        "targets": datasets.Value("string"),
        "messages": datasets.Sequence(datasets.Value("string")),
        "system_prompt": datasets.Value("string"),
    }
)

CITATION = """@inproceedings{gong2024working,
  title = {Working Memory Capacity of {ChatGPT}: An Empirical Study},
  author = {Gong, Dongyu and Wan, Xingchen and Wang, Dingmin},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  year = {2024}
}"""

CARD_BODY = """# n-back base blocks (Gong et al., AAAI 2024)

The verbal (consonants) and spatial (3x3 grid positions) n-back base sets of Gong et al., "Working
Memory Capacity of ChatGPT: An Empirical Study", for n = 1, 2, 3: 50 blocks of 24 trials each, 8
matches per block, with the system message of the authors' notebooks for each variant.

- Configs `verbal_1` ... `spatial_3`, split `test`, one row per block in upstream order.
- `messages` holds the user message of each trial: the letter (verbal) or the grid string of the
  spatial notebook (spatial). `targets` are the published labels: the upstream generator's
  off-by-one lets trial n repeat trial 0 while labelled `-` in some blocks; the labels are kept.
- Played by `triangulate play --tasks nback_verbal_1 ...` (and `nback_verbal_3_triangulating`, seed
  003's port).

Source: https://github.com/Daniel-Gong/ChatGPT-WM (MIT), base sets and notebooks.
"""


def read_block(path: Path) -> tuple[str, str]:
    """One block file: line 1 the stimuli (one character per trial), line 2 the targets ('m'/'-')."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) < 2 or len(lines[0].strip()) != len(lines[1].strip()):
        raise UserError(f"{path}: expected two lines of equal length (stimuli, targets)")
    stimuli, targets = lines[0].strip(), lines[1].strip()
    if set(targets) - {MATCH, NON_MATCH}:
        raise UserError(f"{path}: targets must be 'm' or '-'")
    return stimuli, targets


def load_blocks(kind: str, n: int, root: Path | None = None) -> list[tuple[str, str]]:
    """The 50 base blocks of ``kind`` ('verbal'/'spatial') at level ``n`` from the upstream files, in block order."""
    root = root or source_dir(NAME)
    folder = root / "ChatGPT-WM" / "datasets" / KINDS[kind]["folder"] / f"{n}back"
    paths = [folder / f"{b}.txt" for b in range(N_BLOCKS)]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise UserError(f"{folder} lacks block files {', '.join(missing[:5])}; check the upstream nback files")
    return [read_block(p) for p in paths]


#: variant -> the authors' notebook (under ChatGPT-WM/experiments) whose system messages and grids the build reads
NOTEBOOKS = {"verbal": "verbal.ipynb", "spatial": "spatial_3*3.ipynb"}


def notebook_path(kind: str, root: Path) -> Path:
    path = root / "ChatGPT-WM" / "experiments" / NOTEBOOKS[kind]
    if not path.is_file():
        raise UserError(f"missing n-back notebook {path}; check the upstream nback files")
    return path


def system_prompts(kind: str, root: Path | None = None) -> dict[int, str]:
    """n -> the notebook's system message for this variant, verbatim: the ``{"role": "system", "content": ...}``
    literals of its code cells in order (the 1-, 2- and 3-back runs; commented-out variants are not code)."""
    path = notebook_path(kind, root or source_dir(NAME))
    found = [text for cell in notebook_cells(path) for text in message_literals(cell, "system")]
    if len(found) != len(LEVELS) or any(f"{n}-back task" not in text for n, text in zip(LEVELS, found)):
        raise UserError(f"{path}: expected the 1-, 2- and 3-back system messages in order, found {len(found)} system message(s)")
    return dict(zip(LEVELS, found))


def load_system_prompt(kind: str, n: int, root: Path | None = None) -> str:
    """The notebook's system message for this variant, verbatim."""
    return system_prompts(kind, root)[n]


def load_grids(root: Path | None = None) -> dict[str, str]:
    """Grid position digit -> the 3x3 grid string sent as the user message (``grid_1`` ... ``grid_9`` of the
    spatial notebook; the notebook sends ``grids[int(digit) - 1]``)."""
    path = notebook_path("spatial", root or source_dir(NAME))
    names = {}
    for cell in notebook_cells(path):
        names.update(string_assignments(cell))
    grids = {str(k): names.get(f"grid_{k}") for k in range(1, 10)}
    if None in grids.values():
        raise UserError(f"{path}: the string literals grid_1 ... grid_9 were not found")
    return grids


def expected_targets(stimuli: Sequence[str], n: int) -> str:
    """'m' where a stimulus equals the one n trials back, else '-' (checks the upstream targets)."""
    return "".join(MATCH if i >= n and stimuli[i] == stimuli[i - n] else NON_MATCH for i in range(len(stimuli)))


def config_name(kind: str, n: int) -> str:
    return f"{kind}_{n}"


def variant_rows(kind: str, n: int, root: Path) -> list[dict[str, Any]]:
    """The dataset rows of one variant (one per block)."""
    prompt = system_prompts(kind, root)[n]
    grids = load_grids(root) if kind == "spatial" else None
    rows = []
    for block, (stimuli, targets) in enumerate(load_blocks(kind, n, root)):
        messages = [grids[s] for s in stimuli] if grids else list(stimuli)
        rows.append(
            {"block": block, "n": n, "kind": kind, "stimuli": stimuli, "targets": targets, "messages": messages, "system_prompt": prompt}
        )
    return rows


@register_builder(NAME)
def build(out_dir: Path) -> dict:
    """Write the nback folder (configs ``<kind>_<n>``, split ``test``) into ``out_dir``."""
    root = source_dir(NAME)
    configs = {config_name(kind, n): {"test": variant_rows(kind, n, root)} for kind in KINDS for n in LEVELS}
    card = CardInfo(
        pretty_name="n-back base blocks (Gong et al., 2024)",
        license="mit",
        citation=CITATION,
        body=CARD_BODY,
        language=("en",),
        task_categories=("text-generation",),
        tags=("working-memory", "n-back", "cognitive-evaluation"),
        source=pinned_source_line(NAME),
    )
    return write_hub_folder(out_dir, configs, FEATURES, card)


def load_nback(kind: str, n: int, data_dir: Path | None = None) -> list[dict[str, Any]]:
    """The blocks of one variant from the built ``nback`` dataset (or the folder ``data_dir``), in block order."""
    if kind not in KINDS or n not in LEVELS:
        raise UserError(f"no n-back variant {kind} {n}; variants: {', '.join(config_name(k, m) for k in KINDS for m in LEVELS)}")
    return load_config(NAME, config_name(kind, n), data_dir)["test"].to_list()
