"""The episode record: one line of an episodes JSONL, written and read here only.

An :class:`EpisodeRecord` holds one finished (or failed) episode: its id, task, seed, the fingerprint of the
settings it was played under (``settings_id``: :func:`multiturn.engine.store.settings_id`, checked on resume
when ``episodes_<task>.settings.json`` is gone) and instance,
whether a backend call failed, the game's scores, every model call in play order (``calls``: role
and reply; ``triangulate score`` replays them through the game), the game's transcript and the
game's own extras (``Game.record()``: trials, events, rounds, ...), which sit at the top level.

Every reply is stored once, in ``calls``. The game's transcript and extras repeat replies (a
reply is a transcript message, a trial's ``response``, ...); on disk each string equal to a stored
reply is a reference ``{"$reply": k}`` to ``calls[k]`` (:func:`encode`), and :func:`decode` puts the
text back, so readers see the whole record. Replies shorter than :data:`MIN_REF_CHARS` (``m``,
``odd``, an option number: shorter than the reference itself) stay where the game put them. Schema
versions:

- 1 (no ``schema_version``; up to issue 20): replies written out wherever they occur;
- 2: ``schema_version: 2`` and replies referenced as above.

Both read (:func:`read_episodes`); a newer version than :data:`SCHEMA_VERSION` is a one-line error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from lm_eval.utils import handle_non_serializable

from plumbing import jsonio
from plumbing.errors import UserError
from plumbing.jsonio import Records, read_jsonl
from plumbing.secrets import scrub_tree

SCHEMA_VERSION = 2
#: replies shorter than this stay inline (a reference, ``{"$reply": 12}``, is about this long)
MIN_REF_CHARS = 16
#: the key of a reference to a stored reply (``{"$reply": k}`` stands for ``calls[k]["reply"]``)
REPLY_REF = "$reply"
#: a call's key holding the length of a reply that was cut to ``--max_reply_chars`` (the stored reply is its start)
CUT_KEY = "cut_from"
#: the record's own keys; everything else at the top level is the game's extras
CORE_KEYS = ("schema_version", "id", "task", "seed", "settings_id", "failed", "error", "instance", "transcript", "scores", "calls")


class Call(TypedDict, total=False):
    """One model call: the role asked and its reply (None, with ``error``, when the backend failed)."""

    role: str
    reply: str | None
    error: str


class EpisodeRecord(TypedDict, total=False):
    """One episode as the engine writes it and every reader gets it (the game's extras besides)."""

    schema_version: int
    id: str
    task: str
    seed: int
    settings_id: str
    failed: bool
    error: str | None
    instance: dict[str, Any]
    transcript: list[dict[str, Any]]
    scores: dict[str, float]
    calls: list[Call]


def make_record(
    *,
    task: str,
    instance: Mapping[str, Any],
    seed: int,
    calls: Sequence[Mapping[str, Any]],
    transcript: Sequence[Mapping[str, Any]],
    scores: Mapping[str, float],
    extras: Mapping[str, Any],
    error: str | None = None,
    settings_id: str | None = None,
) -> EpisodeRecord:
    """The record of one episode. ``calls`` are the engine's calls (``role``, ``reply``, ``prompt``,
    ``error``); the prompt is kept only where the game keeps no transcript (then the calls are it)."""
    record: EpisodeRecord = {
        "schema_version": SCHEMA_VERSION,
        "id": str(instance["id"]),
        "task": task,
        "seed": seed,
        **({"settings_id": settings_id} if settings_id else {}),
        "failed": error is not None,
        "error": error,
        "instance": dict(instance),
        "transcript": [dict(t) for t in transcript] or [dict(c) for c in calls],
        "scores": {} if error is not None else dict(scores),
        "calls": [{"role": c["role"], "reply": c["reply"], **({CUT_KEY: c[CUT_KEY]} if CUT_KEY in c else {})} for c in calls],
    }
    if error is None:
        for key, value in extras.items():
            record.setdefault(key, value)  # type: ignore[misc]  (a game's extras: trials, events, ...)
    return record


def encode(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record as written: ``schema_version`` set and every string of the transcript and the game's
    extras that equals a stored reply (of :data:`MIN_REF_CHARS` or more) replaced by a reference to its
    first call."""
    replies: dict[str, int] = {}
    for k, call in enumerate(record.get("calls") or []):
        reply = call.get("reply")
        if isinstance(reply, str) and len(reply) >= MIN_REF_CHARS:
            replies.setdefault(reply, k)
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    for key, value in record.items():
        if key == "transcript" or key not in CORE_KEYS:  # the transcript and the game's extras
            value = _refer(value, replies)
        out[key] = value
    return out


def _refer(value: Any, replies: Mapping[str, int]) -> Any:
    if isinstance(value, str):
        k = replies.get(value)
        return value if k is None else {REPLY_REF: k}
    if isinstance(value, Mapping):
        if set(value) == {REPLY_REF}:
            raise ValueError(f"a game's record holds a {REPLY_REF!r} object; it would read back as a reply")
        return {key: _refer(v, replies) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_refer(v, replies) for v in value]
    return value


def decode(raw: Mapping[str, Any], where: str = "record") -> EpisodeRecord:
    """A record as read: schema 1 as it is, schema 2 with its reply references resolved."""
    version = raw.get("schema_version", 1)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise UserError(f"{where}: episode record schema_version {version!r} is newer than this triangulate reads ({SCHEMA_VERSION})")
    if version < 2:
        return dict(raw)  # type: ignore[return-value]
    calls = raw.get("calls") or []
    return {key: _resolve(value, calls, where) if key == "transcript" or key not in CORE_KEYS else value for key, value in raw.items()}  # type: ignore[return-value]


def _resolve(value: Any, calls: Sequence[Mapping[str, Any]], where: str) -> Any:
    if isinstance(value, Mapping):
        if set(value) == {REPLY_REF}:
            k = value[REPLY_REF]
            if not isinstance(k, int) or not 0 <= k < len(calls):
                raise UserError(f"{where}: reply reference {k!r} outside the record's {len(calls)} calls")
            return calls[k].get("reply")
        return {key: _resolve(v, calls, where) for key, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, calls, where) for v in value]
    return value


def dumps(record: Mapping[str, Any]) -> str:
    """One JSONL line of ``record`` (encoded; NaN kept as lm-eval writes it; numpy values converted) through the
    one encoder (:func:`plumbing.jsonio.dumps`: a reply's lone surrogates are replaced and counted in the record),
    every string scrubbed of credentials first (:func:`plumbing.secrets.scrub_tree`: a key the server echoes
    into a reply is stored as ``<redacted>``, as ``triangulate eval`` stores it in its samples)."""
    return jsonio.dumps(scrub_tree(encode(record)), count=True, default=handle_non_serializable)


#: the type each core key must have when present (a damaged line: ``"instance": "x"``, ``"scores": ["a", 1]``)
CORE_TYPES: dict[str, tuple[type, ...]] = {
    "id": (str, int),
    "task": (str,),
    "failed": (bool,),
    "error": (str, type(None)),
    "instance": (Mapping,),
    "transcript": (list,),
    "scores": (Mapping,),
}


def damage(record: Mapping[str, Any]) -> str | None:
    """Why ``record`` is no episode record (a missing ``id``, a core key of the wrong type, a call in the list of
    calls that is no object), or None. ``scores`` values are not checked here: a non-numeric one is played again on resume."""
    if "id" not in record:
        return "has no 'id'"
    for key, types in CORE_TYPES.items():
        value = record.get(key)
        if key in record and (not isinstance(value, types) or (key == "id" and isinstance(value, bool))):
            return f"{key!r} is {_json_type(value)}, not {' or '.join(_json_type(t) for t in types)}"
    calls = record.get("calls")
    if isinstance(calls, list) and not all(isinstance(c, Mapping) for c in calls):
        return "a call is not an object"  # (``calls`` that is no list at all: score keeps the stored scores, as before)
    return None


def has_numeric_scores(record: Mapping[str, Any]) -> bool:
    """``scores`` is an object of numbers (NaN allowed) or nulls, as every game writes it (a finished episode without
    them is a damaged record: a resume plays it again)."""
    scores = record.get("scores")
    return isinstance(scores, Mapping) and all(v is None or isinstance(v, (int, float)) for v in scores.values())


def _json_type(value: Any) -> str:
    """``value``'s (or the type ``value``'s) name in JSON: object, array, string, integer, true/false, null."""
    kind = value if isinstance(value, type) else type(value)
    names = ((bool, "true/false"), (Mapping, "an object"), (list, "an array"), (str, "a string"), (int, "an integer"), (float, "a number"))
    return next((name for t, name in names if issubclass(kind, t)), "null" if kind is type(None) else kind.__name__)


def read_episodes(path: Path) -> Records:
    """The decoded records of an episodes file (none when it is missing). A torn last line is skipped
    and counted (:func:`plumbing.jsonio.read_jsonl`); a line that is no episode record (:func:`damage`)
    is a one-line error naming file and line (every reader: score, view, report, export, a resuming play)."""
    records = read_jsonl(path, missing_ok=True)
    return decode_episodes(records)


def decode_episodes(records: Records) -> Records:
    """An episodes file's records as :func:`plumbing.jsonio.read_jsonl` read them, each checked (:func:`damage`: a line
    that is no episode record is a one-line error naming file and line) and decoded in place (:func:`decode`)."""
    path = records.path
    for k, (number, line) in enumerate(zip(records.lines, records)):
        why = damage(line)
        if why is not None:
            raise UserError(
                f"{path}:{number}: not an episode record ({why}); repair or delete that line, or play the task again with --overwrite"
            )
        records[k] = decode(line, f"{path}:{number}: episode {line['id']!r}")  # each line checked and decoded in place
    return records
