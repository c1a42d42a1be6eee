"""The episode record (multiturn.engine.record): every reply stored once, and old run folders still read.

``tests/support/run_folder_v1`` was written by main before EpisodeRecord existed (schema 1: replies in
``calls``, ``transcript`` and the game's extras); the current readers must read it, re-score it to the
same numbers and show it in the viewer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from multiturn.engine.record import MIN_REF_CHARS, REPLY_REF, SCHEMA_VERSION, decode, dumps, encode, make_record, read_episodes
from plumbing import run_folder
from plumbing.errors import UserError

RUN_V1 = Path(__file__).resolve().parents[1] / "support" / "run_folder_v1"
MODEL_V1 = RUN_V1 / "random"


def _v1_records() -> list[dict]:
    return [json.loads(line) for path in sorted(MODEL_V1.glob("*.jsonl")) for line in path.read_text(encoding="utf-8").splitlines()]


def _strings(value, skip=("calls", "instance")) -> list[str]:
    """Every string leaf of a record outside ``skip`` (top-level keys)."""
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in skip for s in _strings(v, ())]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, ())]
    return [value] if isinstance(value, str) else []


def test_old_records_read_unchanged_and_each_family_repeats_replies_there():
    records = _v1_records()
    assert len(records) == 7
    for path in sorted(MODEL_V1.glob("*.jsonl")):
        [raw] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert "schema_version" not in raw and read_episodes(path) == [raw]
    # why the new schema: in schema 1 every family stores replies again outside `calls`
    for record in records:
        replies = {c["reply"] for c in record["calls"] if c["reply"]}
        assert replies & set(_strings(record)), record["task"]
    long_repeated = {
        r["task"] for r in records if {c["reply"] for c in r["calls"] if len(c["reply"] or "") >= MIN_REF_CHARS} & set(_strings(r))
    }
    assert {"taboo", "splat_easy", "connections_interactive", "referencegame"} <= long_repeated


def test_encoding_stores_every_reply_once_and_decodes_to_the_same_record():
    for record in _v1_records():
        encoded = encode(record)
        assert encoded["schema_version"] == SCHEMA_VERSION
        replies = {c["reply"] for c in record["calls"] if len(c["reply"] or "") >= MIN_REF_CHARS}
        assert not replies & set(_strings(encoded)), record["task"]  # outside `calls` only references
        assert encoded["calls"] == record["calls"] and encoded["instance"] == record["instance"]
        line = dumps(record)
        assert decode(json.loads(line)) == {**record, "schema_version": SCHEMA_VERSION}
        assert len(line) <= len(json.dumps(record, ensure_ascii=False)) + len('"schema_version": 2, '), record["task"]


def test_decode_rejects_newer_schemas_and_dangling_references():
    with pytest.raises(UserError, match="newer than this triangulate reads"):
        decode({"id": "x", "schema_version": SCHEMA_VERSION + 1})
    with pytest.raises(UserError, match="outside the record's 1 calls"):
        decode({"id": "x", "schema_version": 2, "calls": [{"role": "player", "reply": "a"}], "transcript": [{REPLY_REF: 3}]})
    with pytest.raises(ValueError, match="would read back as a reply"):
        encode({"id": "x", "calls": [], "trials": [{REPLY_REF: 0}]})


def test_make_record_keeps_the_prompt_only_when_the_game_keeps_no_transcript():
    calls = [{"role": "player", "prompt": "2+2?", "reply": "4"}]
    plain = make_record(task="t", instance={"id": 1}, seed=3, calls=calls, transcript=[], scores={"acc": 1.0}, extras={"trials": [1]})
    assert plain["id"] == "1" and plain["transcript"] == calls and plain["calls"] == [{"role": "player", "reply": "4"}]
    assert plain["trials"] == [1] and plain["failed"] is False
    failed = make_record(
        task="t", instance={"id": 1}, seed=3, calls=calls, transcript=[], scores={"acc": 1.0}, extras={"x": 1}, error="boom"
    )
    assert failed["failed"] and failed["scores"] == {} and "x" not in failed


def test_an_old_run_folder_rescores_to_its_stored_numbers_and_shows_in_the_viewer(built_data, tmp_path):
    from multiturn.engine.rescore import changed_metrics, rescore_run
    from triangulation.viewer.pages import load_episodes

    folder = tmp_path / "random"
    shutil.copytree(MODEL_V1, folder)
    payload, reports, old = rescore_run(folder)
    assert len(reports) == 7 and not any(r.diverged for r in reports)
    moved = [(task, metric) for task, metric, before, _ in changed_metrics(old, payload) if before is not None]
    assert moved == []  # the current games score the stored replies as they did (metrics added since appear anew)
    episodes = load_episodes([tmp_path])
    assert sorted(episodes) == run_folder.play_tasks(folder) and all(len(eps) == 1 for eps in episodes.values())
    assert {ep.model for eps in episodes.values() for ep in eps} == {"random"}
