"""Results files of ``lm_eval --output_path`` and ``triangulate play --output_path`` as :class:`Run` objects.

Both write a results JSON per run (the layout: :mod:`plumbing.run_folder`) in lm-eval's shape:
``results[task]["<metric>,<filter>"]``, ``configs[task]``, ``group_subtasks`` and ``config.model_args``
(a dict from lm_eval's CLI, a string from its Python API), next to lm_eval's logged samples
(``--log_samples``) or play's episodes. Models are identified from ``config``, never from folder names, and
named uniquely over everything one command reads (:func:`name_models`: two models never share a row).

:func:`read_runs` is the report's one reading edge: every results file and per-sample file under its folders is
read once into a :class:`RunSet`; each :class:`Run` carries its metric values, its main scores (computed once with
the report's main-metric rules) and its item records, which the score table, the leaderboard cells, the chance
levels, the analyses and the episode pages (:attr:`RunSet.record_files`) all share.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import cached_property
from pathlib import Path
from typing import Any

from models.naming import unique_report_ids
from models.ref import ModelRef
from plumbing import run_folder
from plumbing.errors import UserError
from plumbing.jsonio import Records, TornLines, read_jsonl
from plumbing.run_folder import EPISODE_IDS_KEY, ResultsFile

NON_METRIC_KEYS = {"alias", "name", "sample_len", "samples", " "}


@dataclass
class Run:
    """One results JSON: the model it scored and every task's metrics."""

    model: str
    path: Path
    date: str
    results: dict[str, dict[str, Any]]
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    group_subtasks: dict[str, list[str]] = field(default_factory=dict)
    samples: dict[str, Path] = field(default_factory=dict)  # task -> its samples / episodes JSONL
    n_samples: dict[str, int] = field(default_factory=dict)  # task -> samples scored (lm-eval's ``n-samples``, effective)
    n_total: dict[str, int] = field(default_factory=dict)  # task -> samples of the whole task (``n-samples``, original)
    episode_ids: dict[str, set[str]] = field(default_factory=dict)  # task -> the episodes its numbers come from (play)
    config: dict[str, Any] = field(default_factory=dict)  # the results file's ``config`` (the run's settings)
    ref: ModelRef | None = None  # the model the file scored, made once from its ``config`` (None: named by ``model`` only)
    records: dict[str, Records] = field(default_factory=dict)  # task -> the records of ``samples[task]``, read once (read_runs)
    values: dict[str, dict[str, float]] = field(default_factory=dict)  # task -> {metric: value} (metric_values), computed once
    main: dict[str, tuple[str, float]] = field(default_factory=dict)  # task -> (main metric, value), computed once (read_runs)

    def top_level_tasks(self, max_members: int = 12) -> list[str]:
        """Tasks to list as benchmarks: a group of more than ``max_members`` tasks (mmlu's subjects,
        bbh's 24 tasks) stands for its members; smaller groups (the seven clembench games, the
        GlobalGroup subsets) are listed with their members. A group of seed replicas (``<group>_seed_<k>``, the
        lm_pragmatics prompt orders) stands for them too: their spread is the group's seed spread, not a benchmark."""
        members = {
            t
            for g, subs in self.group_subtasks.items()
            if g in self.results and (len(subs) > max_members or seed_replicas(g, subs))
            for t in subs
        }
        return [t for t in self.results if t not in members]


def seed_replicas(group: str, members: list[str]) -> bool:
    """True when every member of ``group`` is ``<group>_seed_<k>``: one benchmark run under several seeds."""
    return bool(members) and all(re.fullmatch(rf"{re.escape(group)}_seed_\d+", m) for m in members)


#: the main metric of a task a run has no number for (:func:`main_metric`'s answer then)
NO_SCORE = ("", math.nan)


@dataclass(frozen=True)
class RecordFile:
    """One file of per-sample records, found and read once: its task, kind (``"play"`` episodes or lm-eval
    ``"samples"``), path, its model's unique name, the newest results file of its folder that reports its task (None
    when none does) and its records."""

    task: str
    kind: str
    path: Path
    model: str
    results: ResultsFile | None
    records: Records = field(compare=False, repr=False)

    @property
    def task_args(self) -> dict:
        """The ``--task_args`` the run of the task used (its results file's config)."""
        return dict((self.results.config if self.results else {}).get("task_args") or {})


@dataclass
class RunSet:
    """Everything one command reads under its results folders, each file read once (:func:`read_runs`): the runs
    (each with its main scores and item records), every per-sample file found under the folders that hold results
    files (``(task, kind, path)`` of :func:`plumbing.run_folder.record_files`) and the records of every per-sample
    file read, by path."""

    runs: list[Run]
    files: list[ResultsFile]
    found: list[tuple[str, str, Path]]
    records: dict[Path, Records]

    @property
    def torn(self) -> TornLines:
        """The per-sample files whose torn last line was skipped (a run killed mid-write)."""
        return TornLines({path: records.skipped for path, records in self.records.items() if records.skipped})

    @cached_property
    def record_files(self) -> list[RecordFile]:
        """The per-sample files found in the folders of the runs (what the episode pages show), each named as the
        run of the newest results file of its folder is (:func:`name_models`; a folder below them without results
        files by its own name)."""
        by_path = {f.path: (r, f) for r, f in zip(self.runs, self.files)}
        newest: dict[Path, list[tuple[Run, ResultsFile]]] = {}
        for path in reversed(run_folder.oldest_first(by_path)):
            newest.setdefault(path.parent, []).append(by_path[path])
        return [
            RecordFile(
                task,
                kind,
                path,
                stored[0][0].model if stored else path.parent.name,
                next((f for _, f in stored if task in f.results), None),
                self.records[path],
            )
            for task, kind, path in self.found
            for stored in [newest.get(path.parent, [])]
        ]


def read_runs(roots: Sequence[Path], overrides: Mapping[str, Any] | None = None, labels: Mapping[Path, str] | None = None) -> RunSet:
    """Read every results file and per-sample file under ``roots`` once (:func:`plumbing.run_folder.read_folders`):
    each run named (:func:`name_models`; ``labels``: folder -> the suite label of the model whose runs it holds), with
    its item records and its main scores (:func:`main_metric` with ``overrides``, once per task)."""
    read = run_folder.read_folders(roots)
    records = {path: decoded(stored, kind) for path, (kind, stored) in read.records.items()}
    runs = [complete_run(run_of(f), overrides, records) for f in read.files]
    name_models(runs, labels)  # two models whose paths end in the same folder name keep two rows
    return RunSet(runs, read.files, read.found, records)


def complete_run(run: Run, overrides: Mapping[str, Any] | None, records: Mapping[Path, Records]) -> Run:
    """``run`` with its item records (``records``: path -> the records read), its metric values (:func:`metric_values`)
    and its main scores (:func:`main_metric` with ``overrides``) set, each once."""
    run.records = {task: records[path] for task, path in run.samples.items()}
    run.values = {task: metric_values(results) for task, results in run.results.items()}
    run.main = {task: chosen_metric(task, values, run.configs.get(task, {}), overrides) for task, values in run.values.items()}
    return run


def read_records(path: Path, kind: str) -> Records:
    """The records of one per-sample file of ``kind`` as :func:`plumbing.run_folder.read_folders` reads them (a torn last
    line skipped and counted, ``Records.skipped``; missing: :data:`plumbing.run_folder.MAY_BE_MISSING`), :func:`decoded`."""
    return decoded(read_jsonl(path, missing_ok=kind in run_folder.MAY_BE_MISSING), kind)


def decoded(records: Records, kind: str) -> Records:
    """A per-sample file's records as read: lm-eval ``"samples"`` as stored, ``"play"`` episodes decoded
    (:func:`multiturn.api.decode_episodes`)."""
    if kind == "samples":
        return records
    from multiturn.api import decode_episodes  # lm-eval's utilities, which nothing else here loads

    return decode_episodes(records)


def read_run(path: Path, overrides: Mapping[str, Any] | None = None) -> Run:
    """Parse one results JSON, with its item records and main scores (``overrides``: :func:`main_metric`'s); unreadable
    or foreign files raise a one-line UserError."""
    file = ResultsFile.read(path)
    return complete_run(run_of(file), overrides, {p: read_records(p, kind) for _, kind, p in file.beside})


def run_of(file: ResultsFile) -> Run:
    """The :class:`Run` of a results file read once: its model a :class:`~models.ref.ModelRef` made here, once."""
    data, config = file.data, file.config
    try:
        ref = ModelRef.stored(config)
    except UserError as exc:  # the file is named: "results file has no config.model_args ..." alone says not which
        raise UserError(f"{file.path}: {exc}") from None
    run = Run(
        model=ref.report_id,
        path=file.path,
        date=file.date,
        results={str(k): v for k, v in {**(data.get("groups") or {}), **data["results"]}.items() if isinstance(v, dict)},
        configs={str(k): v for k, v in (data.get("configs") or {}).items() if isinstance(v, dict)},
        group_subtasks={str(k): list(v) for k, v in (data.get("group_subtasks") or {}).items() if isinstance(v, list)},
        n_samples=_n_samples(data.get("n-samples")),
        n_total=_n_samples(data.get("n-samples"), "original"),
        episode_ids=_episode_ids(data.get(EPISODE_IDS_KEY)),
        config=dict(config),
        ref=ref,
    )
    beside = {task: path for task, _, path in file.beside}
    run.samples = {task: beside[task] for task in run.results if task in beside}
    return run


def name_models(runs: list[Run], labels: Mapping[Path, str] | None = None) -> None:
    """Give every run its model's unique name (:func:`models.naming.unique_report_ids` of each run's
    :class:`~models.ref.ModelRef`: two models whose paths end in the same folder name keep two rows), saying each
    renaming on stderr once. ``labels``: folder -> the suite label (``name:``) of the model whose runs it holds (two
    entries of one weights keep two rows)."""
    found = [next((label for folder, label in (labels or {}).items() if r.path.is_relative_to(folder)), None) for r in runs]
    named = [(run, ref, label) for run, label in zip(runs, found) if (ref := run.ref) is not None]  # one made by hand keeps its name
    names, notes = unique_report_ids([ref for _, ref, _ in named], [label for _, _, label in named] if labels else None)
    for (run, _, _), name in zip(named, names):
        run.model = name
    say_renamed(notes)


_SAID: set[str] = set()


def say_renamed(notes: list[str]) -> None:
    """Print each model renaming (:func:`models.naming.unique_report_ids`) to stderr, once per process (the report
    and its episode pages name the same models)."""
    for note in notes:
        if note not in _SAID:
            _SAID.add(note)
            print(f"triangulate: {note}", file=sys.stderr)


def _episode_ids(entry: Any) -> dict[str, set[str]]:
    """A play results file's ``episode_ids`` ({task: [id, ...]}) as sets; {} for lm-eval's files and older play ones."""
    if not isinstance(entry, dict):
        return {}
    return {str(task): {str(i) for i in ids} for task, ids in entry.items() if isinstance(ids, list)}


def _n_samples(entry: Any, which: str = "effective") -> dict[str, int]:
    """lm-eval's ``n-samples`` ({task: {"original": N, "effective": M}}) -> {task: M} (``which="original"``: N)."""
    out: dict[str, int] = {}
    for task, counts in (entry or {}).items() if isinstance(entry, dict) else ():
        value = counts.get(which, counts.get("original")) if isinstance(counts, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            out[str(task)] = value
    return out


def metric_values(task_results: Mapping[str, Any]) -> dict[str, float]:
    """``{"metric,filter": v}`` -> ``{metric: v}`` (filter ``none`` preferred; stderr and strings dropped)."""
    out: dict[str, float] = {}
    preferred: dict[str, bool] = {}
    for key, value in task_results.items():
        if key in NON_METRIC_KEYS or "_stderr" in key or isinstance(value, (str, bool)) or value is None:
            continue
        if not isinstance(value, (int, float)):
            continue
        metric, _, filt = key.partition(",")
        is_none = filt in ("", "none")
        if metric not in out or (is_none and not preferred[metric]):
            out[metric] = float(value)
            preferred[metric] = is_none
    return out


def main_metric(task: str, run: Run, overrides: Mapping[str, Any] | None = None) -> tuple[str, float]:
    """The main metric of ``task`` in ``run`` and its value.

    ``overrides`` maps task-name patterns (fnmatch) to a metric name or a list of names (their mean,
    e.g. IFEval's prompt- and instruction-level strict accuracy, seed 003 App. E.2.1). Otherwise the
    first metric of the task's ``metric_list``, else the first metric in the results.
    """
    return chosen_metric(task, metric_values(run.results.get(task, {})), run.configs.get(task, {}), overrides)


def chosen_metric(
    task: str, values: Mapping[str, float], config: Mapping[str, Any], overrides: Mapping[str, Any] | None
) -> tuple[str, float]:
    """:func:`main_metric` of ``task`` given its metric values and its lm-eval config."""
    for pattern, wanted in (overrides or {}).items():
        if fnmatchcase(task, pattern):
            names = [wanted] if isinstance(wanted, str) else list(wanted)
            if all(n in values for n in names):
                return "+".join(names), sum(values[n] for n in names) / len(names)
    for item in config.get("metric_list") or []:
        name = item.get("metric") if isinstance(item, dict) else None
        if isinstance(name, str) and name in values:
            return name, values[name]
    if values:
        name = next(iter(values))
        return name, values[name]
    return NO_SCORE
