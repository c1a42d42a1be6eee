"""Re-scoring ``triangulate play`` results with the current code, without calling a model.

Every episode record keeps its model calls (``calls``: role and reply in play order). :func:`replay`
builds a fresh game from the record's instance and seed and hands it those replies in order, so the
game's current parsing, rules and scoring decide the episode again; :func:`rescore_run` does that
for every play task of a run folder (:mod:`plumbing.run_folder`) and builds a new results JSON (the same shape as
``triangulate play`` writes, :func:`multiturn.engine.results.results_payload`); :func:`store_rescored` writes the
new per-episode scores back into the episodes files (and the scoring version into their settings), so the viewer
shows what the results say. A replay that the current code
plays differently (it asks for more replies than were stored, or for another role) is reported as
diverged and the episode keeps its stored scores: re-playing it would need the model.

With a ``judge`` backend, judge requests go to that model as well (the stored judge reply still drives
the game, so the player's stored replies stay valid) and each pair of verdicts is returned for the
agreement report (:func:`judge_agreement`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multiturn import registry
from multiturn.engine import results as res
from multiturn.engine.record import read_episodes
from multiturn.engine.store import TaskStore
from multiturn.game import Request, TaskSpec
from plumbing import run_folder
from plumbing.checks import DEFAULT_SEED
from plumbing.errors import UserError
from plumbing.locks import lock_all


class ReplayDiverged(Exception):
    """The current code asks for a different sequence of model calls than the record holds."""


@dataclass
class Replayed:
    """One episode re-scored: its new record, and the judge calls seen (stored reply, new judge reply)."""

    record: dict[str, Any]
    judged: list[tuple[str, str]] = field(default_factory=list)


def replay(task: TaskSpec, record: Mapping[str, Any], judge: Callable[[TaskSpec, Request], str] | None = None) -> Replayed:
    """Play ``record``'s stored replies through a fresh game; raise :class:`ReplayDiverged` when they do not fit.

    ``judge(task, request)``, when given, answers every judge request too (its reply is collected next
    to the stored one; the stored one is what the game gets)."""
    calls = record.get("calls")
    if calls is None:
        raise ReplayDiverged("the record has no stored calls (written before `triangulate score` existed)")
    if not isinstance(calls, list) or not all(isinstance(c, Mapping) and "role" in c for c in calls):
        raise ReplayDiverged("the record's calls are not a list of {role, reply} objects (a damaged or foreign record)")
    if not isinstance(record.get("instance"), Mapping):
        raise ReplayDiverged("the record has no instance object (a damaged or foreign record)")
    game = task.make_game(record["instance"], int(record.get("seed", DEFAULT_SEED)))
    judged: list[tuple[str, str]] = []
    for number, call in enumerate(calls):
        request = None if game.done else game.next_request()
        if request is None:
            raise ReplayDiverged(f"the game ended after {number} of {len(calls)} stored replies")
        if request.role != call["role"]:
            raise ReplayDiverged(f"call {number}: the game asks the {request.role}, the record has a {call['role']} reply")
        reply = "" if call.get("reply") is None else str(call["reply"])
        if judge is not None and request.role == "judge":
            judged.append((reply, judge(task, request)))
        game.on_reply(reply)
    if not game.done and game.next_request() is not None:
        raise ReplayDiverged(f"the game wants more than the {len(calls)} stored replies")
    new = dict(record)
    new["scores"] = dict(game.scores())
    new["transcript"] = list(game.transcript) or record.get("transcript", [])
    for key, value in game.record().items():
        new[key] = value
    return Replayed(new, judged)


@dataclass
class TaskRescore:
    """One task of a run re-scored."""

    task: str
    summary: dict[str, Any]
    diverged: dict[str, str]  # episode id -> why its stored scores were kept
    changed_episodes: int
    judged: list[tuple[str, str]]


def rescore_task(task: TaskSpec, records: Sequence[Mapping[str, Any]], n_original: int, judge=None) -> TaskRescore:
    """Replay every finished record of one task and summarise them as ``triangulate play`` does."""
    new_records: list[dict[str, Any]] = []
    diverged: dict[str, str] = {}
    changed = 0
    judged: list[tuple[str, str]] = []
    for record in records:
        if record.get("failed"):
            new_records.append(dict(record))
            continue
        try:
            out = replay(task, record, judge)
        except ReplayDiverged as exc:
            diverged[str(record["id"])] = str(exc)
            new_records.append(dict(record))
            continue
        judged.extend(out.judged)
        changed += int(_scores_differ(record.get("scores", {}), out.record["scores"]))
        new_records.append(out.record)
    return TaskRescore(task.name, res.summarize(task, new_records, n_original), diverged, changed, judged)


def _scores_differ(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return set(a) != set(b) or any(not same_value(a[k], b[k]) for k in a)


def same_value(a: Any, b: Any, tol: float = 1e-9) -> bool:
    """Equal, with floats compared to ``tol`` and NaN equal to NaN."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        fa, fb = float(a), float(b)
        return (math.isnan(fa) and math.isnan(fb)) or abs(fa - fb) <= tol * max(1.0, abs(fa), abs(fb))
    return a == b


def rescore_runs(
    model_dir: Path, tasks: Sequence[str] | None = None, judge=None
) -> list[tuple[dict[str, Any], list[TaskRescore], dict[str, Any]]]:
    """Re-score every play task of ``model_dir`` (or ``tasks``), one :func:`rescore_run` per results file
    that last reported them (each run of the folder with its own ``--task_args``)."""
    names = [t for t in run_folder.play_tasks(model_dir) if tasks is None or t in tasks]
    check_newest_results(model_dir)
    return [rescore_run(model_dir, group, judge, old.data) for old, group in run_folder.results_by_source(model_dir, names)]


def rescore_run(
    model_dir: Path, tasks: Sequence[str] | None = None, judge=None, old: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], list[TaskRescore], dict[str, Any]]:
    """Re-score the play tasks ``tasks`` (every one when None) of ``model_dir`` as the results payload ``old``
    reported them (default: the newest file reporting any); returns ``(new payload, per-task reports, old payload)``.

    The tasks are rebuilt with that run's ``--task_args`` and their groups are aggregated again where the
    run asked for a group.
    """
    names = [t for t in run_folder.play_tasks(model_dir) if tasks is None or t in tasks]
    if old is None:
        check_newest_results(model_dir)
        newest = run_folder.latest_results(model_dir, names)
        old = newest.data if newest is not None else {}
    config = dict(old.get("config", {}))
    task_args = dict(config.get("task_args") or {})
    reports: list[TaskRescore] = []
    for name in names:
        task = registry.get_task(name, task_args)
        store = TaskStore(model_dir, name)
        path = store.episodes
        records = list(store.finished().values())
        check_intact(path, len(records), old.get("n-samples", {}).get(name, {}).get("effective"))
        finished = {str(r["id"]) for r in records}
        failed = [r for r in read_episodes(path) if r.get("failed") and str(r["id"]) not in finished]
        n_original = int(old.get("n-samples", {}).get(name, {}).get("original", len(records) + len(failed)))
        reports.append(rescore_task(task, records + failed, n_original, judge))
    groups = {g: m for g, m in registry.group_names().items() if g in (config.get("tasks") or []) and any(t in names for t in m)}
    payload = res.results_payload(
        {r.task: r.summary for r in reports},
        groups=groups,
        config={**config, "rescored_from": old.get("date")},
        model_name=str(old.get("model_name", Path(model_dir).name)),
        model_name_sanitized=str(old.get("model_name_sanitized", Path(model_dir).name)),
    )
    return payload, reports, old


def check_newest_results(model_dir: Path) -> None:
    """A one-line ``UserError`` naming the newest ``results_*.json`` of ``model_dir`` when it cannot be read: re-scoring
    would otherwise start from an older file, or from none, and write a newer results file without the run's config."""
    files = run_folder.oldest_first(Path(model_dir).glob(run_folder.RESULTS_GLOB))
    if files:
        try:
            run_folder.ResultsFile.read(files[-1])
        except UserError as exc:
            raise UserError(f"{exc}; repair or remove it before re-scoring") from None


def store_rescored(model_dir: Path, reports: Sequence[TaskRescore], *, locked: bool = False) -> list[str]:
    """Write re-scored episodes back (``triangulate score``): each task whose episodes now score differently, or
    whose scoring ``version`` changed, gets its episodes file rewritten with the new per-episode scores (under the
    task's lock, atomically) and its settings file the current scoring version, so the viewer, the results and a
    later resume read the same scores. ``locked``: the caller already holds the episodes files' locks
    (``triangulate score`` does). Returns the tasks rewritten."""
    from multiturn.engine.settings import scoring_version

    written = []
    for report in reports:
        store = TaskStore(model_dir, report.task)
        stored = store.stored_settings()
        version = scoring_version(registry.get_task(report.task))
        stale = isinstance(stored, dict) and stored.get("scoring_version", version) != version
        if not report.changed_episodes and not stale:
            continue
        with nullcontext() if locked else lock_all([store.episodes]):
            store.rewrite(report.summary["records"])
            if isinstance(stored, dict):
                store.set_scoring_version(stored, version)
        written.append(report.task)
    return written


def check_intact(path: Path, n_finished: int, n_stored: Any) -> None:
    """``UserError`` when the episode file holds fewer finished episodes than the stored results counted (a
    damaged line, a deleted record): re-scoring it would write a newer results file from fewer episodes, which
    the report would then prefer."""
    if isinstance(n_stored, int) and n_finished < n_stored:
        raise UserError(
            f"{path} holds {n_finished} readable finished episode(s), the newest results file counted {n_stored}; not "
            "re-scoring from fewer episodes (restore the file, or play the missing episodes again: `triangulate play` resumes)"
        )


def changed_metrics(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, str, Any, Any]]:
    """``(task, metric key, old value, new value)`` for every ``<metric>,<filter>`` value that differs
    between two results payloads (a metric only one side has is listed with None on the other)."""
    out = []
    old_results, new_results = old.get("results", {}), new.get("results", {})
    for task in sorted(set(old_results) | set(new_results)):
        a, b = old_results.get(task, {}), new_results.get(task, {})
        for key in sorted(set(a) | set(b)):
            if "," not in key:
                continue
            if key not in a or key not in b or not same_value(a[key], b[key]):
                out.append((task, key, a.get(key), b.get(key)))
    return out


def judge_agreement(pairs: Sequence[tuple[str, str]], verdict: Callable[[str], Any]) -> dict[str, Any]:
    """Agreement of two judges over the same judge requests: ``verdict`` maps a reply to a label (None when
    it cannot be parsed). Returns the number of requests, the raw agreement and Cohen's kappa over the
    pairs both judges answered parsably."""
    labelled = [(verdict(a), verdict(b)) for a, b in pairs]
    both = [(a, b) for a, b in labelled if a is not None and b is not None]
    n = len(both)
    out: dict[str, Any] = {"n": len(pairs), "n_parsed": n, "agreement": float("nan"), "cohen_kappa": float("nan")}
    if not n:
        return out
    observed = sum(a == b for a, b in both) / n
    labels = {x for pair in both for x in pair}
    expected = sum((sum(a == k for a, _ in both) / n) * (sum(b == k for _, b in both) / n) for k in labels)
    out["agreement"] = observed
    out["cohen_kappa"] = 1.0 if expected == 1.0 else (observed - expected) / (1.0 - expected)
    return out
