"""Inspect AI logs of our runs: one ``.eval`` file per model x task (an lm-eval group's subtasks in one log, as
lm-eval reports the group; each log its own ``task_id``, so Inspect View shows every model), written with
inspect_ai's own API.

Every play episode (``episodes_<task>.jsonl``) and every lm-eval sample (``samples_<task>_<date>.jsonl``) of a
results folder becomes an :class:`inspect_ai.log.EvalSample`, through the viewer's data model
(:mod:`triangulation.viewer.episodes`, the one reading of each record shape):

- ``messages``: the conversation in order; the game master and the prompt are ``user`` messages (a system
  prompt a ``system`` one), the players and the judge ``assistant`` messages, our role in ``metadata.role``;
- ``target``: the gold (lm-eval's target or the gold groups; a play episode's hidden solution: the word, the
  rule, the groups, as its game's ``EpisodeSummary.target`` states it) where there is one; the instance played
  (an lm-eval sample's doc) in ``metadata.instance``;
- ``scores``: each numeric per-episode score as a :class:`~inspect_ai.scorer.Score` whose ``answer`` is our
  parsed reading of the replies and whose ``explanation`` is the viewer's verdict sentence;
- the log's ``results``: the task's aggregate metrics from the results JSON (with their standard errors).

``inspect view --log-dir LOG_DIR`` (or ``inspect view bundle``), ``read_eval_log`` and
``inspect_ai.analysis.samples_df`` then read them like any Inspect run. inspect-ai is the optional extra
``triangulate[inspect]``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from multiturn.api import TurnView
from plumbing import run_folder
from plumbing.errors import UserError
from triangulation.runs.results_io import Run, main_metric, metric_values, run_of
from triangulation.viewer.episodes import Episode
from triangulation.viewer.pages import RecordFile, file_episodes, find_episode_files

SCORER = "triangulate"
INSTALL_HINT = "inspect-ai is not installed: pip install 'triangulate[inspect]' (or pip install inspect-ai)"


def require_inspect() -> None:
    """Raise a one-line UserError naming the extra when inspect_ai cannot be imported."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise UserError(INSTALL_HINT) from None


def finite(value: Any) -> float | None:
    """``value`` as a finite float, else None (NaN scores, strings and lists are not Inspect score values)."""
    if isinstance(value, bool):
        return float(value)
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def chat_message(turn: TurnView, model: str):
    """One viewer turn as an Inspect chat message (our role, addressee and parsed notes in its metadata)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    meta: dict[str, Any] = {"role": turn.role}
    if turn.to:
        meta["to"] = turn.to
    if turn.reading is not None:
        meta["parsed"] = turn.reading
    if turn.why:
        meta["why"] = turn.why
    if turn.verdict is not None:
        meta["correct"] = turn.verdict
    if turn.role == "gm":
        cls = ChatMessageSystem if turn.to == "system prompt" else ChatMessageUser
        return cls(content=turn.text, metadata=meta)
    return ChatMessageAssistant(content=turn.text, model=model, metadata=meta)


def parsed_reading(episode: Episode) -> str:
    """What we read from the model's replies, one line per reply: our reading, or why it did not parse."""
    return "\n".join(t.reading if t.reading is not None else (t.why or "unparsed") for t in episode.turns if t.role != "gm")


def eval_sample(episode: Episode, sample_id: str):
    """An :class:`~inspect_ai.log.EvalSample` holding the episode's conversation, gold and scores."""
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    messages = [chat_message(t, episode.model) for t in episode.turns]
    first = next((t.text for t in episode.turns if t.role == "gm"), "")
    last = next((t.text for t in reversed(episode.turns) if t.role != "gm"), "")
    answer = parsed_reading(episode)
    scores = {
        name: Score(value=v, answer=answer, explanation=episode.why)
        for name, raw in episode.scores.items()
        if (v := finite(raw)) is not None
    }
    return EvalSample(
        id=sample_id,
        epoch=1,
        input=first,
        target=episode.target,
        messages=messages,
        output=ModelOutput.from_content(model=episode.model, content=last),
        scores=scores,
        metadata={
            "task": episode.task,
            "model": episode.model,
            "outcome": episode.outcome,
            "failed": episode.failed,
            "error": episode.error,
            "instance": json_safe(episode.instance),
        },
    )


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON (Inspect stores JSON): non-finite floats as None, unknown types as their text."""
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def eval_results(run: Run | None, task: str, n: int, main_metrics: Mapping[str, Any] | None = None):
    """The task's aggregate metrics (``results[task]`` of the results JSON) as Inspect ``EvalResults``, the report's
    main metric first (Inspect shows the first score as the log's headline: clembench's clemscore, not the
    Main Score that is NaN when no episode was played). ``main_metrics``: task pattern -> metric, as the report's
    ``abilities.yaml`` (:func:`~triangulation.runs.results_io.main_metric`)."""
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    scores = []
    task_results: Mapping[str, Any] = run.results.get(task, {}) if run else {}
    stderrs = {k.partition(",")[0].removesuffix("_stderr"): finite(v) for k, v in task_results.items() if "_stderr" in k}
    values = metric_values(task_results)
    headline = main_metric(task, run, main_metrics)[0].split("+")[0] if run else ""
    ordered = sorted(values.items(), key=lambda item: item[0] != headline)  # stable: the rest keep their order
    for name, value in ordered:
        metrics = {name: EvalMetric(name=name, value=value)}
        if stderrs.get(name) is not None:
            metrics["stderr"] = EvalMetric(name="stderr", value=stderrs[name])
        scores.append(EvalScore(name=name, scorer=SCORER, metrics=metrics))
    return EvalResults(total_samples=n, completed_samples=n, scores=scores)


def build_log(task: str, model: str, episodes: list[Episode], run: Run | None, source: Path, main_metrics: Mapping[str, Any] | None = None):
    """One :class:`~inspect_ai.log.EvalLog` for ``model`` x ``task`` (sample ids made unique in order)."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalPlan, EvalSpec, EvalStats

    seen: dict[str, int] = {}
    samples = []
    for ep in episodes:
        base = ep.id or str(len(samples))
        seen[base] = seen.get(base, 0) + 1
        samples.append(eval_sample(ep, base if seen[base] == 1 else f"{base}#{seen[base]}"))
    created = created_at(run, source)
    key = slug(f"{model}-{task}")
    spec = EvalSpec(
        eval_id=key,
        run_id=slug(model),
        created=created,
        task=task,
        task_id=key,  # one per model x task: Inspect View hides logs that share a task_id as retries
        task_version=0,
        dataset=EvalDataset(name=task, location=str(source), samples=len(samples), sample_ids=[s.id for s in samples]),
        model=model,
        config=EvalConfig(),
        metadata={"source": str(source), "exported_by": "triangulate export inspect"},
    )
    return EvalLog(
        version=2,
        status="success",
        eval=spec,
        plan=EvalPlan(),
        results=eval_results(run, task, len(samples), main_metrics),
        stats=EvalStats(started_at=created, completed_at=created),
        samples=samples,
    )


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def created_at(run: Run | None, source: Path) -> str:
    """The run's date (from the results file name), else the source file's modification time, ISO 8601."""
    if run is not None:
        m = re.match(r"(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})", run.date)
        if m:
            return f"{m[1]}T{m[2]}:{m[3]}:{m[4]}+00:00"
    return datetime.fromtimestamp(source.stat().st_mtime, tz=timezone.utc).isoformat(timespec="seconds")


def latest_sources(found: list[RecordFile]) -> dict[tuple[str, str], tuple[RecordFile, Run | None]]:
    """(model, task) -> (file, run) of the newest run of that model x task (by the results file's date,
    as the report picks it), among the episode and sample files found."""
    best: dict[tuple[str, str], tuple[tuple[str, float], RecordFile, Run | None]] = {}
    for record in found:
        run = run_of(record.results) if record.results is not None else None
        rank = (run.date if run else "", record.path.stat().st_mtime)
        if (record.model, record.task) not in best or rank > best[(record.model, record.task)][0]:
            best[(record.model, record.task)] = (rank, record, run)
    return {key: (record, run) for key, (_, record, run) in best.items()}


def top_group(run: Run | None, task: str) -> str:
    """The outermost lm-eval group ``task`` belongs to in ``run`` (``lm_pragmatics`` for
    ``lm_pragmatics_irony_seed_3``), else ``task`` itself."""
    parents = {sub: group for group, subs in (run.group_subtasks if run else {}).items() for sub in subs if sub != group}
    seen = {task}
    while task in parents and parents[task] not in seen:
        task = parents[task]
        seen.add(task)
    return task


def log_units(
    sources: Mapping[tuple[str, str], tuple[RecordFile, Run | None]],
) -> dict[tuple[str, str], list[tuple[RecordFile, Run | None]]]:
    """(model, log name) -> its member tasks' (file, run): one log per lm-eval group (its subtasks'
    samples together, as lm-eval reports the group), one per other task."""
    units: dict[tuple[str, str], list[tuple[RecordFile, Run | None]]] = {}
    for (model, task), (record, run) in sorted(sources.items(), key=lambda item: item[0]):
        units.setdefault((model, top_group(run, task)), []).append((record, run))
    return units


def member_episodes(name: str, record: RecordFile) -> list[Episode]:
    """The episodes of ``record``'s task; in a group's log each id is prefixed by its subtask (ids repeat across them)."""
    episodes = file_episodes(record)
    if record.task != name:
        for ep in episodes:
            ep.id = f"{record.task}-{ep.id}"
    return episodes


def export_inspect(run_dirs: Iterable[Path], out: Path, main_metrics: Mapping[str, Any] | None = None) -> list[Path]:
    """Write one ``.eval`` log per model x task found under ``run_dirs`` (the newest run of each) into ``out``;
    returns their paths."""
    require_inspect()
    from inspect_ai.log import write_eval_log

    found = find_episode_files([Path(d) for d in run_dirs])
    if not found:
        raise UserError("no episodes_<task>.jsonl or samples_<task>_<date>.jsonl under " + ", ".join(map(str, run_dirs)))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for (model, name), members in sorted(log_units(latest_sources(found)).items()):
        episodes = [ep for record, _ in members for ep in member_episodes(name, record)]
        log = build_log(name, model, episodes, members[0][1], members[0][0].path, main_metrics)
        stem = f"{log.eval.created[:19].replace(':', '-')}_{slug(name)}_{slug(model)}"
        target = out / f"{run_folder.short_folder_name(stem)}.eval"  # a 300-character model name still fits
        write_eval_log(log, str(target))
        written.append(target)
    return written
