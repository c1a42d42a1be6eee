"""The run-folder layout: the one module that knows how ``--output_path`` folders are laid out.

``triangulate play`` and ``lm_eval`` (``triangulate eval``) both write, per model::

    DIR/<model>/results_<date>.json           the results JSON (lm-eval's shape), one per run
    DIR/<model>/episodes_<task>.jsonl         play: one record per finished episode (appended as it ends)
    DIR/<model>/episodes_<task>.rank<k>.jsonl play, distributed: rank k's part until rank 0 folds it in
    DIR/<model>/episodes_<task>.turns.jsonl   play: the answered turns of unfinished episodes (rank parts
                                              ``.turns.rank<k>.jsonl``); gone when the task's episodes are all done
    DIR/<model>/samples_<task>_<date>.jsonl   lm_eval --log_samples: one logged sample per line

``<model>`` is the model's folder name (:func:`models.naming.model_folder_name`; lm-eval
picks the same name for its runs). ``<date>`` is lm-eval's file date id (ISO time, ``:`` -> ``-``).
Everything that finds, names or reads these files goes through here: file names, discovery of the
models and tasks of a folder, the latest results of a model and task, and reading (results JSON with
:meth:`ResultsFile.read`; JSONL with :func:`plumbing.jsonio.read_jsonl`, which skips and counts a torn last
line; a report's folders whole, each file once, with :func:`read_folders`). lm-eval's own writer
(``EvaluationTracker``) spells its names itself.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from plumbing.errors import UserError
from plumbing.jsonio import Records, TornLines, read_json, read_jsonl, torn_last_lines

log = logging.getLogger(__name__)

RESULTS_PREFIX = "results_"
EPISODES_PREFIX = "episodes_"
SAMPLES_PREFIX = "samples_"
RESULTS_GLOB = f"{RESULTS_PREFIX}*.json"
EPISODES_GLOB = f"{EPISODES_PREFIX}*.jsonl"
SAMPLES_GLOB = f"{SAMPLES_PREFIX}*.jsonl"
#: the layout in one line, for help texts and error messages
LAYOUT = f"DIR/<model>/{RESULTS_PREFIX}<date>.json, {EPISODES_PREFIX}<task>.jsonl (play), {SAMPLES_PREFIX}<task>_<date>.jsonl (lm_eval --log_samples)"
#: the files a run's per-sample records live in, as a phrase for messages
#: a play results JSON's ``{task: [episode id, ...]}``: the finished episodes each task's numbers come from (the
#: episodes file keeps every episode ever played; a smaller ``--limit`` rerun reports a subset of them)
EPISODE_IDS_KEY = "episode_ids"
RECORD_FILES = f"{EPISODES_GLOB} or {SAMPLES_GLOB}"
#: the kinds of per-sample file that may be absent when read (:func:`plumbing.jsonio.read_jsonl` ``missing_ok``): play's
#: ``"play"`` episodes (none yet: play decodes them, :func:`multiturn.api.decode_episodes`); lm-eval's ``"samples"``
#: file missing is an error
MAY_BE_MISSING = frozenset({"play"})

_SAMPLES_NAME = re.compile(rf"^{SAMPLES_PREFIX}(?P<task>.+)_(?P<date>\d{{4}}-\d{{2}}-\d{{2}}T[0-9.\-]+)\.jsonl$")
_EPISODES_NAME = re.compile(rf"^{EPISODES_PREFIX}(?P<task>[^.]+)\.jsonl$")


# --- names -------------------------------------------------------------------------------------


def timestamp() -> str:
    """lm-eval's file date id: ISO time with ':' replaced by '-'."""
    return datetime.now().isoformat().replace(":", "-")


#: the longest folder name written (bytes of UTF-8): file systems allow 255 per name
MAX_FOLDER_BYTES = 200


def short_folder_name(name: str, limit: int = MAX_FOLDER_BYTES) -> str:
    """``name`` when it fits ``limit`` bytes, else its start and 12 hex digits of its SHA-256 (``<start>-<hash>``):
    a 300-character model name gets a folder that the file system accepts, the same one each time."""
    if len(name.encode("utf-8")) <= limit:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    start = name.encode("utf-8")[: limit - len(digest) - 1].decode("utf-8", errors="ignore")
    return f"{start}-{digest}"


def model_dir(output: str | Path, model_folder: str) -> Path:
    """``DIR/<model>``: where one model's files of an ``--output_path`` go."""
    return Path(output) / model_folder


def new_results_path(model_dir: Path) -> Path:
    """``<model_dir>/results_<now>.json``: the name a new results file gets."""
    return Path(model_dir) / f"{RESULTS_PREFIX}{timestamp()}.json"


def settings_path(model_dir: Path, task: str) -> Path:
    """``episodes_<task>.settings.json``: the settings a task's stored episodes were played with (resume checks them)."""
    return Path(model_dir) / f"episodes_{task}.settings.json"


def episodes_path(model_dir: Path, task: str, rank: int | None = None) -> Path:
    """``episodes_<task>.jsonl``; ranks of a distributed run stream to ``episodes_<task>.rank<k>.jsonl`` parts."""
    suffix = "" if rank is None else f".rank{rank}"
    return Path(model_dir) / f"{EPISODES_PREFIX}{task}{suffix}.jsonl"


def turns_path(model_dir: Path, task: str, rank: int | None = None) -> Path:
    """``episodes_<task>.turns.jsonl``: every answered turn of the task's unfinished episodes, appended as it is answered
    (a killed run resumes mid-episode); ranks of a distributed run write ``episodes_<task>.turns.rank<k>.jsonl``.
    Neither name is an episodes file (:func:`is_episodes_file`) nor a rank part (:func:`rank_parts`)."""
    suffix = "" if rank is None else f".rank{rank}"
    return Path(model_dir) / f"{EPISODES_PREFIX}{task}.turns{suffix}.jsonl"


def turn_parts(model_dir: Path, task: str) -> list[Path]:
    """The ``episodes_<task>.turns.rank<k>.jsonl`` parts a distributed run left in ``model_dir``."""
    return sorted(Path(model_dir).glob(f"{EPISODES_PREFIX}{task}.turns.rank*.jsonl"))


def rank_parts(model_dir: Path, task: str) -> list[Path]:
    """The ``episodes_<task>.rank<k>.jsonl`` parts a distributed run left in ``model_dir``."""
    return sorted(Path(model_dir).glob(f"{EPISODES_PREFIX}{task}.rank*.jsonl"))


def is_results_file(path: Path) -> bool:
    """A ``results_*.json`` file name."""
    return Path(path).name.startswith(RESULTS_PREFIX) and Path(path).suffix == ".json"


def is_samples_file(path: Path) -> bool:
    """An lm-eval ``samples_*.jsonl`` name (play's episode files are not samples)."""
    return Path(path).name.startswith(SAMPLES_PREFIX) and Path(path).suffix == ".jsonl"


def is_episodes_file(path: Path) -> bool:
    """A play ``episodes_<task>.jsonl`` name (rank parts excluded)."""
    return _EPISODES_NAME.match(Path(path).name) is not None


def results_date(path: Path) -> str:
    """The ``<date>`` of ``results_<date>.json``."""
    return Path(path).stem.removeprefix(RESULTS_PREFIX)


def oldest_first(files: Iterable[Path]) -> list[Path]:
    """Results files in the order they were written: by the date in their names (lm-eval's and play's ISO time),
    which a copy keeps (``cp`` without ``-p``, a sync, an unpacked archive give every file a new mtime); the
    modification time breaks a tie only."""
    return sorted((Path(p) for p in files), key=lambda p: (results_date(p), p.stat().st_mtime))


# --- discovery ---------------------------------------------------------------------------------


def results_files(root: Path) -> list[Path]:
    """Every ``results_*.json`` under ``root`` (a file is taken as is); ``UserError`` when there is none."""
    root = Path(root)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise UserError(f"results path {root} does not exist")
    files = sorted(p for p in root.rglob(RESULTS_GLOB) if p.is_file())
    if not files:
        raise UserError(f"no {RESULTS_GLOB} under {root}; pass folders written by lm_eval/triangulate play --output_path")
    return files


def has_results(root: Path) -> bool:
    """Any ``results_*.json`` under ``root``."""
    return Path(root).is_dir() and any(Path(root).rglob(RESULTS_GLOB))


def results_since(folder: Path, since: float) -> list[str]:
    """``results_*.json`` under ``folder`` written since ``since`` (a time.time()), relative to ``folder``."""
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob(RESULTS_GLOB) if p.stat().st_mtime >= since - 1)


def play_tasks(model_dir: Path) -> list[str]:
    """Tasks with an ``episodes_<task>.jsonl`` in ``model_dir`` (rank parts excluded)."""
    return sorted(m["task"] for p in Path(model_dir).glob(EPISODES_GLOB) if (m := _EPISODES_NAME.match(p.name)))


def samples_files(model_dir: Path, tasks: Sequence[str] | None = None) -> dict[str, Path]:
    """task -> its newest ``samples_<task>_<date>.jsonl`` in ``model_dir`` (only ``tasks`` when given)."""
    found: dict[str, tuple[str, Path]] = {}
    for path in Path(model_dir).glob(SAMPLES_GLOB):
        match = _SAMPLES_NAME.match(path.name)
        if not match or (tasks is not None and match["task"] not in tasks):
            continue
        if match["task"] not in found or match["date"] > found[match["task"]][0]:
            found[match["task"]] = (match["date"], path)
    return {task: path for task, (_, path) in sorted(found.items())}


def model_dirs(run_dir: Path) -> list[Path]:
    """Folders under (or equal to) ``run_dir`` holding a ``results_*.json`` next to episodes or samples files."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UserError(f"RUN_DIR {run_dir} is not a folder")
    candidates = {p.parent for p in run_dir.rglob(RESULTS_GLOB)}
    found = sorted(d for d in candidates if play_tasks(d) or samples_files(d))
    if not found:
        unfinished = sorted({p.parent for p in run_dir.rglob(EPISODES_GLOB)} - candidates)
        if unfinished:
            raise UserError(
                f"{unfinished[0]} holds {EPISODES_GLOB} but no {RESULTS_GLOB} yet: a play is still running there or was "
                "stopped before its end; wait for it, or run the same play command again to finish it"
            )
        raise UserError(f"no results with {RECORD_FILES} under {run_dir} (lm-eval runs need --log_samples)")
    return found


def record_files(roots: Iterable[Path]) -> list[tuple[str, str, Path]]:
    """``(task, kind, path)`` for every ``episodes_<task>.jsonl`` (kind ``"play"``) and the newest
    ``samples_<task>_<date>.jsonl`` of each folder and task (kind ``"samples"``) under ``roots`` (a
    file is taken as is when its name fits)."""
    play: list[tuple[str, str, Path]] = []
    latest: dict[tuple[Path, str], tuple[str, Path]] = {}
    for root in roots:
        root = Path(root)
        for path in [root] if root.is_file() else sorted(root.rglob("*.jsonl")):
            if (m := _EPISODES_NAME.match(path.name)) is not None:
                play.append((m["task"], "play", path))
            elif (m := _SAMPLES_NAME.match(path.name)) is not None:
                key = (path.parent, m["task"])
                if key not in latest or latest[key][0] < m["date"]:
                    latest[key] = (m["date"], path)
    return play + [(task, "samples", path) for (_, task), (_, path) in sorted(latest.items())]


def files_beside(results: Path) -> tuple[tuple[str, str, Path], ...]:
    """``(task, kind, path)`` of the per-sample file of each task that the results file ``results`` may report, found
    by name in its folder: lm-eval's ``samples_<task>_<date>.jsonl`` of its date (kind ``"samples"``), else play's
    ``episodes_<task>.jsonl`` (kind ``"play"``)."""
    folder, date = Path(results).parent, results_date(results)
    found = {m["task"]: ("play", p) for p in sorted(folder.glob(EPISODES_GLOB)) if (m := _EPISODES_NAME.match(p.name))}
    for path in sorted(folder.glob(f"{SAMPLES_PREFIX}*_{date}.jsonl")):
        if (m := _SAMPLES_NAME.match(path.name)) is not None and m["date"] == date:
            found[m["task"]] = ("samples", path)
    return tuple((task, kind, path) for task, (kind, path) in found.items())


# --- reading -----------------------------------------------------------------------------------


def torn_lines(roots: Iterable[Path], tasks: Sequence[str] | None = None) -> TornLines:
    """The record files under ``roots`` (:func:`record_files`; of ``tasks`` only, when given) whose torn last line
    the reader skips: what ``score``, ``view`` and ``report`` say they left out."""
    return torn_last_lines(path for task, _, path in record_files(roots) if tasks is None or task in tasks)


@dataclass(frozen=True)
class ResultsFile:
    """One stored ``results_<date>.json``, read once (:meth:`read`): its path, its date and its parsed payload
    (lm-eval's shape, checked), with the per-sample files of its tasks beside it (:func:`files_beside`, found as it is
    read; :meth:`records_file`)."""

    path: Path
    data: Mapping[str, Any] = field(compare=False, repr=False)  # a file is known by its path
    beside: tuple[tuple[str, str, Path], ...] = field(default=(), compare=False, repr=False)  # (task, kind, path)

    @classmethod
    def read(cls, path: Path) -> ResultsFile:
        """The one reader of results JSON: the parsed file, checked to be lm-eval's shape (a ``results``
        object, a ``config`` object when present); anything else is a one-line ``UserError``."""
        beside = files_beside(path)
        try:
            data = read_json(path, "results file")
        except UserError as exc:  # "<path>: malformed JSON (...)" -> say what the file was read as
            text = str(exc)
            raise UserError(text if text.startswith(("results file", "cannot read")) else f"cannot read results file {text}") from None
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            raise UserError(f"{path} is not an lm-eval results file (no 'results' object)")
        if not isinstance(data.get("config") or {}, dict):
            raise UserError(f"{path}: 'config' is not an object")
        return cls(Path(path), data, beside)

    @property
    def date(self) -> str:
        """The ``<date>`` of ``results_<date>.json``."""
        return results_date(self.path)

    @property
    def model_dir(self) -> Path:
        return self.path.parent

    @property
    def results(self) -> Mapping[str, Any]:
        return self.data["results"]

    @property
    def config(self) -> Mapping[str, Any]:
        """The run's ``config`` ({} when the file has none)."""
        return self.data.get("config") or {}

    def reports_any(self, tasks: Sequence[str] | None) -> bool:
        """True when the file reports any of ``tasks`` (None: any file does)."""
        return tasks is None or any(t in self.results for t in tasks)

    def records_file(self, task: str) -> Path | None:
        """The per-sample file of ``task`` for this results file: lm-eval's ``samples_<task>_<date>.jsonl``, else
        play's ``episodes_<task>.jsonl``; None when neither was there when the file was read."""
        return next((path for name, _, path in self.beside if name == task), None)


@dataclass(frozen=True)
class FolderFiles:
    """Every file under some run folders that a reader of their runs needs, each read once (:func:`read_folders`):
    the results files (read, with their per-sample files beside them), the per-sample files found in the folders
    that hold them (``(task, kind, path)`` of :func:`record_files`) and, by path, the kind and stored records of every
    per-sample file either names."""

    files: list[ResultsFile]
    found: list[tuple[str, str, Path]]
    records: dict[Path, tuple[str, Records]]


def read_folders(roots: Iterable[Path]) -> FolderFiles:
    """Read every results file under ``roots`` (:func:`results_files`: ``UserError`` when a root has none) and every
    per-sample file of their folders and beside them, once each (a torn last line skipped and counted; a missing file of a
    kind in :data:`MAY_BE_MISSING` read as none)."""
    from tqdm.auto import tqdm

    paths = [f for root in roots for f in results_files(root)]
    found = list(dict.fromkeys(record_files(sorted({p.parent for p in paths}))))  # the folders' files, each once
    files = [ResultsFile.read(f) for f in tqdm(paths, desc="reading results", unit="file", disable=len(paths) < 5)]
    kinds = {path: kind for _, kind, path in found} | {path: kind for f in files for _, kind, path in f.beside}
    return FolderFiles(files, found, {path: (kind, read_jsonl(path, missing_ok=kind in MAY_BE_MISSING)) for path, kind in kinds.items()})


def newest_first(files: Iterable[Path]) -> Iterator[ResultsFile]:
    """The readable results files of ``files``, newest first (:func:`oldest_first` reversed), each read once; a file
    that is not lm-eval's shape is skipped with a warning."""
    for path in reversed(oldest_first(files)):
        try:
            yield ResultsFile.read(path)
        except UserError as exc:
            log.warning("skipping %s", exc)


def results_by_source(model_dir: Path, tasks: Sequence[str]) -> list[tuple[ResultsFile, list[str]]]:
    """``tasks`` grouped by the results file each was last reported in (:func:`latest_results` per task, the folder's
    files read once): ``[(that file, its tasks)]``, newest file first. Runs of one model share its folder, each
    with its own settings (``--task_args``, metadata): a task is re-read with the settings of its own run,
    never another's. Tasks no readable file reports are left out."""
    files = list(newest_first(Path(model_dir).glob(RESULTS_GLOB)))
    groups: dict[Path, tuple[ResultsFile, list[str]]] = {}
    for task in tasks:
        found = next((f for f in files if f.reports_any([task])), None)
        if found is not None:
            groups.setdefault(found.path, (found, []))[1].append(task)
    return sorted(groups.values(), key=lambda g: str(g[0].data.get("date", "")), reverse=True)


def latest_results(model_dir: Path, tasks: Sequence[str] | None = None) -> ResultsFile | None:
    """The newest ``results_*.json`` of ``model_dir`` that reports any of ``tasks`` (any task when None);
    None if none. lm-eval and play runs of one model share the folder; a file that is not lm-eval's
    shape is skipped with a warning."""
    return next((f for f in newest_first(Path(model_dir).glob(RESULTS_GLOB)) if f.reports_any(tasks)), None)
