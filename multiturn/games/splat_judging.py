"""SPLAT's judge verdicts read and compared with human labels (seed 004, Chen et al. NeurIPS 2024): how a judge
reply reads (:func:`judge_label`, the authors' "congratulations" rule), the human label files of the ``human_labels``
task option (:func:`read_human_labels`) and eq. 6's agreement (Sec. 5.1, App. A.3: :func:`agreement_scores`). The
game and its tasks are :mod:`multiturn.games.splat`; this module registers nothing."""

from __future__ import annotations

import csv
import json
import os
import re
from itertools import combinations
from pathlib import Path
from typing import Any

from plumbing.errors import UserError

SUCCESS_WORD = "congratulations"
JUDGE_WORDS = ("yes", "no", "irrelevant")
HUMAN_LABELS = (*JUDGE_WORDS, "matched", "unmatched")
_JUDGE_WORD = re.compile(r"\b(yes|no|irrelevant)\b", re.IGNORECASE)


def is_success(judge_reply: str) -> bool:
    """The authors' rule: the judge's reply, lower-cased, contains "congratulations"."""
    return SUCCESS_WORD in str(judge_reply).lower()


def judge_label(judge_reply: str) -> str:
    """``congratulations`` if solved, else the first of yes / no / irrelevant in the reply, else ``other``."""
    if is_success(judge_reply):
        return SUCCESS_WORD
    match = _JUDGE_WORD.search(str(judge_reply)[:10_000])
    return match.group(1).lower() if match else "other"


def agrees(judge_reply: str, human: str) -> bool:
    """Eq. 6's delta: final answers compare matched/unmatched (matched = congratulations), questions the word."""
    label = judge_label(judge_reply)
    if human in ("matched", "unmatched"):
        return (label == SUCCESS_WORD) == (human == "matched")
    return label == human


# --- human labels ---------------------------------------------------------------------------


FINAL_LABELS = ("matched", "unmatched")
AGREEMENT_KINDS = ("final", "reasoning")


def label_kind(label: str) -> str:
    """``final`` for matched/unmatched (final answers), ``reasoning`` for yes/no/irrelevant (questions)."""
    return "final" if label in FINAL_LABELS else "reasoning"


def read_human_labels(path: str | os.PathLike) -> dict[str, list[tuple[str, list[str]]]]:
    """Puzzle id -> [(player turn, [label of each rater])] from one or more CSV / JSONL files (``id``,
    ``turn``, ``label``, optional ``rater``; several files joined by ``os.pathsep`` are one rater each)."""
    merged: dict[str, dict[str, list[str]]] = {}
    for part in [p for p in str(path).split(os.pathsep) if p.strip()] or [str(path)]:
        for pid, turn, label in _read_label_file(Path(part.strip())):
            merged.setdefault(pid, {}).setdefault(turn, []).append(label)
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for pid, turns in merged.items():
        for turn, labels in turns.items():
            if len({label_kind(label) for label in labels}) > 1:
                raise UserError(f"{path}: puzzle {pid} turn {turn[:60]!r} mixes final-answer and question labels: {', '.join(labels)}")
            out.setdefault(pid, []).append((turn, labels))
    return out


def _read_label_file(path: Path) -> list[tuple[str, str, str]]:
    if not path.is_file():
        raise UserError(f"human labels file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".jsonl", ".json"):
        try:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: not JSON lines ({exc})") from exc
    else:
        rows = list(csv.DictReader(text.splitlines()))
    out = []
    for number, row in enumerate(rows, start=1):
        try:
            pid, turn, label = str(row["id"]), str(row["turn"]), str(row["label"]).strip().lower()
        except (KeyError, TypeError) as exc:
            raise UserError(f"{path} row {number}: needs columns id, turn, label") from exc
        if label not in HUMAN_LABELS:
            raise UserError(f"{path} row {number}: label {label!r} is not one of {', '.join(HUMAN_LABELS)}")
        out.append((pid, turn, label))
    return out


def agreement_scores(judged: list[dict[str, Any]]) -> dict[str, float]:
    """Eq. 6 per kind over one episode's labelled turns (each ``{"humans": [...], "judge": reply}``):
    ``judge_agreement_<kind>`` = agreeing (judge, human) comparisons / ``judge_labels_<kind>`` comparisons;
    ``human_agreement_<kind>`` = agreeing pairs of human labels / ``human_pairs_<kind>`` pairs (turns with
    two or more labels). Kinds absent from the episode are absent from the result."""
    counts: dict[str, list[int]] = {}
    for item in judged:
        humans = list(item["humans"])
        kind = label_kind(humans[0])
        judge = counts.setdefault(f"judge_{kind}", [0, 0])
        for human in humans:
            judge[0] += agrees(item["judge"], human)
            judge[1] += 1
        if len(humans) >= 2:
            pairs = counts.setdefault(f"human_{kind}", [0, 0])
            for a, b in combinations(humans, 2):
                pairs[0] += a == b
                pairs[1] += 1
    out: dict[str, float] = {}
    for key, (agree, n) in counts.items():
        who, kind = key.split("_")
        size = "labels" if who == "judge" else "pairs"
        out[f"{who}_agreement_{kind}"] = agree / n
        out[f"{who}_{size}_{kind}"] = float(n)
    return out


#: agreement metric -> the count it is weighted by when episodes are pooled
AGREEMENT_WEIGHTS = {
    f"{who}_agreement_{kind}": f"{who}_{size}_{kind}" for who, size in (("judge", "labels"), ("human", "pairs")) for kind in AGREEMENT_KINDS
}
