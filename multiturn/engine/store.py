"""``TaskStore(model_dir, task)``: the one owner of a play task's files in a model folder (the folder's results files:
:mod:`multiturn.engine.results`).

The files (their names: :mod:`plumbing.run_folder`)::

    episodes_<task>.jsonl              one record per finished episode, appended and flushed as it ends
    episodes_<task>.rank<k>.jsonl      rank k's records in a distributed run, until rank 0 folds them in
    episodes_<task>.settings.json      the settings the stored episodes were played with (a resume checks them)
    episodes_<task>.turns.jsonl        the turn log: every answered turn of an unfinished episode, appended and
                                       flushed as it is answered (rank parts ``.turns.rank<k>.jsonl``)
    episodes_<task>.jsonl.lock         the lock one writing process holds (:mod:`plumbing.locks`)

A killed run loses nothing answered (:mod:`multiturn.engine.turns`): finished episodes are skipped on resume, an
unfinished one is rebuilt from its logged turns, so only the requests in flight at the kill are asked again. On resume
a truncated last line (the write a kill interrupted) is dropped, failed episodes are dropped so they are played again,
and the turn log keeps only the turns of episodes without a record (:meth:`TaskStore.compact`).

Stored episodes are resumed only when they were played with the same settings: the one rule is here
(:func:`same_settings`, :func:`settings_id`, :func:`settings_diff`); what a task is played with is
:attr:`multiturn.engine.settings.TaskSettings.episode_settings`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from multiturn.engine.record import dumps, has_numeric_scores, read_episodes
from multiturn.engine.turns import TurnLog, Turns, read_turns, turn_line
from plumbing import atomic, jsonio, run_folder
from plumbing.errors import UserError
from plumbing.jsonio import read_json

log = logging.getLogger(__name__)


# --- one task's files --------------------------------------------------------------------------------


class TaskStore:
    """One task's files in ``model_dir``: paths, rank parts, settings file, lock target, resume, compaction, appends."""

    def __init__(self, model_dir: str | Path, task: str):
        self.model_dir = Path(model_dir)
        self.task = task

    # --- paths ---------------------------------------------------------------------------------

    @property
    def episodes(self) -> Path:
        """``episodes_<task>.jsonl``; also the path whose lock (``.lock``) one writing process holds."""
        return run_folder.episodes_path(self.model_dir, self.task)

    @property
    def settings_file(self) -> Path:
        return run_folder.settings_path(self.model_dir, self.task)

    @property
    def turns(self) -> Path:
        return run_folder.turns_path(self.model_dir, self.task)

    def write_paths(self, rank: int, world: int) -> tuple[Path, Path]:
        """(episodes file, turn log) this rank appends to: the main files, or its own parts in a distributed run."""
        if world <= 1:
            return self.episodes, self.turns
        return run_folder.episodes_path(self.model_dir, self.task, rank), run_folder.turns_path(self.model_dir, self.task, rank)

    def rank_parts(self) -> list[Path]:
        return run_folder.rank_parts(self.model_dir, self.task)

    def writers(self, rank: int, world: int) -> tuple[EpisodeWriter, TurnLog]:
        """The appenders of this rank's finished episodes and answered turns (:meth:`write_paths`)."""
        episodes, turns = self.write_paths(rank, world)
        return EpisodeWriter(episodes), TurnLog(turns)

    def has_episodes(self) -> bool:
        """Any stored record (the main file not empty, or a rank part)."""
        return self.episodes.is_file() and self.episodes.stat().st_size > 0 or bool(self.rank_parts())

    # --- reading -------------------------------------------------------------------------------

    def finished(self) -> dict[str, dict[str, Any]]:
        """id -> record of the finished episodes of the main file (:func:`finished_records`)."""
        return finished_records([self.episodes])

    def stored_settings(self) -> Any:
        """The settings file's content, or None when there is none."""
        return read_json(self.settings_file, "run settings") if self.settings_file.is_file() else None

    def played_with(self, settings: Mapping[str, Any]) -> bool:
        """The stored episodes are whole (a main episodes file, no rank parts) and were played with ``settings`` (the
        settings file equals them by :func:`multiturn.engine.store.same_settings`)."""
        if not self.episodes.is_file() or not self.settings_file.is_file() or self.rank_parts():
            return False
        return same_settings(self.stored_settings(), settings)

    def stored_turns(self, ids: Iterable[str]) -> Turns:
        """The logged turns of the episodes ``ids`` (from the main turn log: read it after :meth:`compact`)."""
        wanted = set(ids)
        return {i: turns for i, turns in read_turns([self.turns]).items() if i in wanted and turns}

    # --- before a run (rank 0, under the lock) ---------------------------------------------------

    def check_settings(self, settings: Mapping[str, Any], *, overwrite: bool = False) -> None:
        """Stored episodes are resumed only when they were played with the same ``settings``
        (:func:`multiturn.engine.settings.episode_settings`: model and its args, task options, seed, gen_kwargs, the
        task's scoring version; compared by :func:`multiturn.engine.store.same_settings`); otherwise a one-line
        ``UserError`` names what changed and offers ``--overwrite`` or a new folder. Without the settings file every
        stored record's ``seed`` and ``settings_id`` are checked instead (:meth:`check_records`). Records the settings
        for the next run."""
        has_episodes = self.has_episodes() or self._has_turns()
        if has_episodes and not overwrite and self.settings_file.is_file():
            old = self.stored_settings()
            if isinstance(old, dict) and not same_settings(old, settings):
                self._refuse(settings_diff(old, settings))
        elif has_episodes and not overwrite:
            self.check_records(settings)
            self.drop_turns()  # turns carry no settings of their own: without the settings file they cannot be checked
        if overwrite or not self.settings_file.is_file() or not has_episodes:
            jsonio.write_json(self.settings_file, dict(settings), indent=1, sort_keys=True, default=str)

    def check_records(self, settings: Mapping[str, Any]) -> None:
        """The settings file is gone: every stored record's ``seed`` and ``settings_id`` must be this run's (records
        from before ``settings_id`` was stored are checked by seed alone), else the one-line refusal."""
        wanted = settings_id(settings)
        gone = f"{self.settings_file.name} is missing"
        for path in [self.episodes, *self.rank_parts()]:
            for record in read_episodes(path):
                if record.get("seed") is not None and record.get("seed") != settings.get("seed"):
                    self._refuse(f"seed: {record.get('seed')} -> {settings.get('seed')}, by the stored records; {gone}")
                if record.get("settings_id") not in (None, wanted):
                    self._refuse(f"settings fingerprint {record.get('settings_id')} -> {wanted}, by the stored records; {gone}")

    def _refuse(self, diff: str) -> None:
        raise UserError(
            f"{self.episodes} holds episodes played with other settings ({diff}); "
            "resume with the same settings, pass --overwrite to start this task over, or choose a new --output_path"
        )

    def compact(self, *, overwrite: bool = False) -> None:
        """With ``overwrite`` delete the task's episode files and turn logs; else fold the rank parts of an interrupted
        run into the main files, keeping only finished episodes (a truncated line and failed episodes are dropped, so
        they are played again) and the logged turns of episodes that have no record."""
        parts, turn_parts = self.rank_parts(), run_folder.turn_parts(self.model_dir, self.task)
        if overwrite:
            for path in [self.episodes, *parts, self.turns, *turn_parts]:
                path.unlink(missing_ok=True)
            return
        recorded: set[str] = set()
        if self.episodes.exists() or parts:
            files = [self.episodes, *parts]
            recorded = {str(r["id"]) for path in files for r in read_episodes(path)}
            self.rewrite(finished_records(files).values())
        if self.turns.exists() or turn_parts:
            kept = {i: t for i, t in read_turns([self.turns, *turn_parts]).items() if i not in recorded and t}
            atomic.write_lines(self.turns, (turn_line(t) + "\n" for turns in kept.values() for t in turns))
        for path in [*parts, *turn_parts]:
            path.unlink(missing_ok=True)

    def _has_turns(self) -> bool:
        return self.turns.is_file() and self.turns.stat().st_size > 0

    # --- writing -------------------------------------------------------------------------------

    def rewrite(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Atomically replace the episodes file with exactly ``records`` (compaction, ``triangulate score``)."""
        atomic.write_lines(self.episodes, (dumps(record) + "\n" for record in records))

    def set_scoring_version(self, stored: Mapping[str, Any], version: Any) -> None:
        """The settings file ``stored`` with the current scoring ``version`` (after ``triangulate score`` rewrote the records)."""
        jsonio.write_json(self.settings_file, {**stored, "scoring_version": version}, indent=1, sort_keys=True, default=str)

    def append_gathered(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Rank 0 after a distributed run: append every rank's new records to the main file, drop the episode parts."""
        with EpisodeWriter(self.episodes) as writer:
            for record in records:
                writer.write(record)
        for path in self.rank_parts():
            path.unlink(missing_ok=True)

    def drop_turns(self) -> None:
        """Every wanted episode has its record: the turn log (and its parts) holds nothing a resume needs."""
        for path in [self.turns, *run_folder.turn_parts(self.model_dir, self.task)]:
            path.unlink(missing_ok=True)


def finished_records(paths: Iterable[Path]) -> dict[str, dict[str, Any]]:
    """id -> record over several files, keeping only episodes that finished (not ``failed``); first wins."""
    done: dict[str, dict[str, Any]] = {}
    for path in paths:
        for record in read_episodes(path):
            if record.get("failed"):
                continue
            if not has_numeric_scores(record):
                log.warning("%s: episode %s has no numeric scores (a damaged record); it is played again", path, record["id"])
                continue
            done.setdefault(str(record["id"]), record)
    return done


class EpisodeWriter:
    """Appends one record per finished episode and flushes it at once (:class:`plumbing.atomic.LineAppender`)."""

    def __init__(self, path: Path):
        self._lines = atomic.LineAppender(path)
        self.path = self._lines.path

    def write(self, record: Mapping[str, Any]) -> None:
        self._lines.write(dumps(record))

    def close(self) -> None:
        self._lines.close()

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- the resume rule: stored episodes are resumed only under the same settings ---------------------


def canonical(value: Any) -> str:
    """The one form two settings are compared in (sorted keys, any value as its JSON or ``str``)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def same_settings(old: Any, new: Mapping[str, Any]) -> bool:
    """The one comparison rule: stored settings ``old`` equal ``new`` in :func:`canonical` form."""
    return canonical(old) == canonical(dict(new))


def settings_id(settings: Mapping[str, Any]) -> str:
    """The fingerprint of a run's settings that every episode record carries (``settings_id``): the first 16 hex
    digits of the SHA-256 of their :func:`canonical` JSON (what ``episodes_<task>.settings.json`` holds)."""
    return hashlib.sha256(canonical(settings).encode("utf-8", "replace")).hexdigest()[:16]


def settings_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """``"key: old -> new; ..."`` for every key whose :func:`canonical` value differs."""
    keys = [k for k in dict.fromkeys([*old, *new]) if canonical(old.get(k)) != canonical(new.get(k))]
    return "; ".join(f"{k}: {canonical(old.get(k))} -> {canonical(new.get(k))}" for k in keys)
