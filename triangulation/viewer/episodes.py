"""Episodes and samples as conversations: the data model behind the episode viewer (pure functions).

Every record of ``triangulate play`` (``episodes_<task>.jsonl``, :mod:`multiturn.engine.record`) and every
lm-eval ``--log_samples`` record (``samples_<task>_<date>.jsonl``) becomes one :class:`Episode`: a
list of :class:`multiturn.game.TurnView` (who spoke, what, and our parsed reading of it, verdict and
why), an outcome, a main score and the scores with a sentence saying why.

A play record is read by the game that wrote it (``TaskSpec.turn_views`` and ``TaskSpec.summary``:
the game module owns how it is shown, so nothing here knows a family); an lm-eval sample shows its
prompt, its response with the groups we parse from it, the gold and the task's metrics.

Nothing here writes HTML: :mod:`triangulation.viewer.pages` escapes and renders these objects.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from custom_metrics.parsing import parse_groups
from multiturn.api import EpisodeSummary, TaskSpec, TurnView, get_task, is_play_task, transcript_views
from triangulation.runs.results_io import RecordFile
from triangulation.runs.samples import response_text

#: roles the viewer lays out in their own column / colour
ROLES = ("gm", "player", "player_b", "judge")
ROLE_LABELS = {"gm": "game master", "player": "player", "player_b": "second player", "judge": "judge"}
#: the per-episode score shown in the list: the first of these keys an episode reports
MAIN_SCORE_KEYS = ("main_score", "overall", "group_f1", "weighted_clustering", "accuracy", "solved", "groups_found", "f1")


@dataclass
class Episode:
    id: str
    model: str
    task: str
    failed: bool
    outcome: str
    score: float
    turns: list[TurnView]
    scores: dict[str, Any]
    why: str
    error: str = ""
    facts: list[tuple[str, str]] = field(default_factory=list)  # stimuli / gold shown above the turns
    facts_title: str = ""  # what the facts are ("the solution (hidden from the player)", ...)
    target: str = ""  # the gold / hidden solution as text ("" when the task has none)
    instance: dict[str, Any] = field(default_factory=dict)  # the instance played (an lm-eval sample's doc)


def number(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out


def main_score(scores: Mapping[str, Any]) -> float:
    for key in MAIN_SCORE_KEYS:
        if key in scores:
            return number(scores[key])
    return math.nan


def outcome_of(record: Mapping[str, Any], scores: Mapping[str, Any]) -> str:
    """One word or two: failed / aborted / success / lost / solved / not solved / the accuracy."""
    if record.get("failed"):
        return "failed"
    if number(scores.get("aborted")) == 1:
        return "aborted"
    if number(scores.get("success")) == 1:
        return "success"
    if number(scores.get("lose")) == 1:
        return "lost"
    if "solved" in scores:
        return "solved" if number(scores["solved"]) == 1 else "not solved"
    if "accuracy" in scores:
        return f"accuracy {number(scores['accuracy']):.2f}"
    return "finished"


def short(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def episodes_by_task(found: Iterable[RecordFile]) -> dict[str, list[Episode]]:
    """task -> episodes of every file ``found``, tasks in name order (a torn last line was skipped and counted as the
    file was read)."""
    tasks: dict[str, list[Episode]] = defaultdict(list)
    for file in found:
        tasks[file.task].extend(file_episodes(file))
    return dict(sorted(tasks.items()))


def file_episodes(found: RecordFile) -> list[Episode]:
    """The episodes of one per-sample file: play records read by the game that wrote them, lm-eval samples as prompt and reply."""
    if found.kind == "play":
        spec = play_task(found.task, found.task_args)
        return [from_record(record, found.model, spec) for record in found.records]
    return [from_sample(record, found.model, found.task) for record in found.records]


# --- play records ----------------------------------------------------------------------------


def play_task(name: str, task_args: Mapping[str, Any] | None = None) -> TaskSpec | None:
    """The play task that wrote a record (built with the run's ``--task_args``), or None when no play task
    has that name (then the record is shown as stored)."""
    if not is_play_task(name):
        return None
    try:
        return get_task(name, task_args)
    except Exception:  # options this code no longer accepts: the default task still reads the record
        return get_task(name)


def from_record(record: Mapping[str, Any], model: str, task: TaskSpec | None = None) -> Episode:
    """A ``triangulate play`` JSONL record as an :class:`Episode`: its task's own views of the turns
    (``TaskSpec.turn_views``, the exact messages each role saw) and summary; a record of no known task
    shows its stored transcript."""
    scores = dict(record.get("scores") or {})
    task = task if task is not None else play_task(str(record.get("task", "")))
    turns = task.turn_views(record) if task is not None else transcript_views(record)
    summary = task.summary(record) if task is not None else EpisodeSummary()
    why = summary.why
    if record.get("failed"):
        summary.outcome = ""
        why = f"Not scored: the backend failed ({record.get('error') or 'no error text'}); the episode is played again on resume."
    return Episode(
        id=str(record.get("id", "")),
        model=model,
        task=str(record.get("task", "")),
        failed=bool(record.get("failed")),
        outcome=summary.outcome or outcome_of(record, scores),
        score=main_score(scores),
        turns=turns,
        scores=scores,
        why=why,
        error=str(record.get("error") or ""),
        facts=summary.facts,
        facts_title=summary.facts_title,
        target=summary.target,
        instance=dict(record.get("instance") or {}),
    )


# --- lm-eval samples ----------------------------------------------------------------------------


def sample_prompt(record: Mapping[str, Any]) -> str:
    """The prompt lm-eval sent: ``arguments`` as ``{"gen_args_0": {"arg_0": ...}}`` (0.4.x) or a list; a chat
    history serialised as JSON (API backends, the chance player) is shown as its messages' text."""
    args = record.get("arguments")
    text = ""
    if isinstance(args, Mapping):
        first = next(iter(args.values()), {})
        if isinstance(first, Mapping):
            text = str(first.get("arg_0", ""))
    elif isinstance(args, list) and args:
        inner = args[0]
        text = str(inner[0] if isinstance(inner, list) and inner else inner)
    if text.startswith("[{"):
        try:
            messages = json.loads(text)
        except json.JSONDecodeError:
            return text
        if isinstance(messages, list) and all(isinstance(m, Mapping) and "content" in m for m in messages):
            return "\n\n".join(f"[{m.get('role', 'user')}] {m['content']}" for m in messages)
    return text


def from_sample(record: Mapping[str, Any], model: str, task: str) -> Episode:
    doc = dict(record.get("doc") or {})
    response = response_text(record)
    metric_names = list(record.get("metrics") or [])
    scores = {m: record.get(m) for m in metric_names if m in record}
    readings: list[str] = []
    facts: list[tuple[str, str]] = []
    gold = doc.get("groups")
    pool = doc.get("words")
    if isinstance(pool, list) and isinstance(gold, list):
        n_groups = int(doc.get("n_groups") or len(gold))
        for group in parse_groups(response, [str(w) for w in pool], n_groups=n_groups):
            readings.append(f"{group.topic or group.label or 'group'}: {', '.join(group.words)}")
        facts = [(str(g.get("topic", "")), ", ".join(map(str, g.get("words", [])))) for g in gold if isinstance(g, Mapping)]
    elif record.get("target") not in (None, ""):
        facts = [("gold", short(record.get("target")))]
    why = (
        ""
        if readings or not isinstance(gold, list)
        else "no group could be parsed from the reply (the parser expects groups of the pool's words)"
    )
    reply = TurnView("player", response, reading="; ".join(readings) or None, why=why)
    turns = [TurnView("gm", sample_prompt(record), to="prompt"), reply]
    shown = ", ".join(f"{k} {number(v):.3g}" for k, v in scores.items())
    why = f"lm-eval scored this sample with the task's process_results: {shown or 'no metric recorded'}."
    return Episode(
        id=str(record.get("doc_id", "")),
        model=model,
        task=task,
        failed=False,
        outcome=outcome_of({}, scores),
        score=main_score(scores),
        turns=turns,
        scores=scores,
        why=why,
        facts=facts,
        facts_title="the gold groups" if isinstance(gold, list) else "",
        target="\n".join(f"{k}: {v}" if k != "gold" else v for k, v in facts),
        instance=doc,
    )
