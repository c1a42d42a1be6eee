"""CLadder yes/no scoring (seed 003 App. E.2.1, following Jin et al. 2023).

Seed 003, App. E.2.1: "In the case of CLADDER, we followed the original work which treated the task as
generative and probed for the presence of the substrings "yes"/"no" at the beginning of the model's
answer." As in the authors' task (``cladder`` in their lm-eval fork), the answer is lower-cased, one layer
of single quotes, then of double quotes, then whitespace is stripped from both ends; an answer starting
with "yes" predicts yes, else one starting with "no" predicts no, anything else predicts neither and
counts as wrong. Accuracy = share of items whose prediction equals the gold label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

YES, NO, NEITHER = 1, 0, -1


def yes_no_prediction(response: str) -> int:
    """1 (yes), 0 (no) or -1 (neither) from the beginning of ``response``."""
    text = response.lower().strip("'").strip('"').strip()
    if text.startswith("yes"):
        return YES
    if text.startswith("no"):
        return NO
    return NEITHER


def gold_label(label: str) -> int:
    """``"yes"`` -> 1, ``"no"`` -> 0 (the v1.5 ``label`` column); anything else is a data error."""
    value = str(label).strip().lower()
    if value not in ("yes", "no"):
        raise ValueError(f"CLadder label {label!r} is neither yes nor no")
    return YES if value == "yes" else NO


def cladder_correct(response: str, label: str) -> float:
    """1.0 when the answer starts with the gold yes/no, else 0.0."""
    return float(yes_no_prediction(response) == gold_label(label))


def process_results(doc: Mapping, results: Sequence[str]) -> dict[str, float]:
    """lm-eval hook: ``acc`` of the one greedy generation."""
    return {"acc": cladder_correct(results[0], doc["label"])}
