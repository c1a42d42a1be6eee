"""How a model is named: one naming rule on parsed ``model_args``, for play, eval, score, report and suite.

The rule (lm-eval's ``EvaluationTracker``): a model is named by the value of the first of
:data:`NAME_KEYS` in its ``model_args`` (``pretrained=org/name`` -> ``org/name``), else by its registry
name (``--model``); the embedded SmolLM2 (no ``--model``, no ``--model_args``) is
:data:`~models.default_model.DEFAULT_MODEL_NAME`. A URL login never becomes part of a name.
From that one name come:

- :func:`model_name`: the name itself (``config.model_name`` of a play results file);
- :func:`model_folder_name`: its folder in an ``--output_path`` (lm-eval's ``sanitize_model_name``, so
  ``lm_eval`` and ``triangulate play`` runs of one model land side by side);
- :func:`short_id`: the name the report gives a model: a GGUF model's name (:func:`gguf_model_name`), a local
  path's last component, a hub id whole;
- :func:`unique_report_ids`: the ids of every model under one report, viewer or export, made unique: two models whose
  whole names differ (:func:`identity_key`: ``/models/orgA/Same``, ``/models/orgB/Same``) but shorten to one id
  get the parent folders that tell them apart (``orgA/Same``, ``orgB/Same``), and each such renaming is said in
  one line, so no model's scores merge into another's;
- :func:`label_of`: a suite's default label for a model entry (its id in folder-safe characters;
  :data:`EMBEDDED_LABEL` for the embedded model).

Each takes parsed ``model_args``: :class:`models.ref.ModelRef` parses them once, at the edge (a stored results
``config`` too: :meth:`models.ref.ModelRef.stored`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from models.args import redact_url
from models.default_model import DEFAULT_MODEL_NAME
from plumbing.errors import UserError
from plumbing.run_folder import short_folder_name

#: model_args keys naming the model, in lm-eval's order (evaluation_tracker._get_model_name).
NAME_KEYS: tuple[str, ...] = ("peft", "delta", "pretrained", "model", "path", "engine")
#: the suite's label of the embedded model
EMBEDDED_LABEL = "smollm2"
#: the longest suite label (it names a folder, with the task's label beneath it)
MAX_LABEL_CHARS = 100
#: the quantisation tag at the end of a GGUF file stem (``.Q4_1``, ``.Q4_K_M``, ``.IQ2_XS``, ``.F16``, ``.BF16``)
GGUF_QUANT = re.compile(r"\.(I?Q\d\w*|B?F16|F32)$", re.IGNORECASE)


def gguf_model_name(gguf_file: str) -> str:
    """The one name of a GGUF model in folders and reports: the file stem with its quantisation tag joined by
    ``-`` (``SmolLM2-135M-Instruct.Q4_1.gguf`` -> ``SmolLM2-135M-Instruct-Q4_1``; dots of a version stay)."""
    stem = Path(str(gguf_file)).name.removesuffix(".gguf")
    return GGUF_QUANT.sub(lambda m: "-" + m.group(1), stem)


def _named_value(args: Mapping[str, Any]) -> str | None:
    """The value of the first of :data:`NAME_KEYS` that ``args`` sets (None when none does)."""
    value = next((args[k] for k in NAME_KEYS if args.get(k) not in (None, "")), None)
    return None if value is None else redact_url(str(value))


def is_embedded(model: str | None, model_args: Any) -> bool:
    """No ``--model`` and no ``--model_args``: the embedded SmolLM2."""
    return model is None and not model_args


def model_name(model: str | None, model_args: Mapping[str, Any] | None) -> str:
    """The model's name: the first :data:`NAME_KEYS` value of ``model_args`` (parsed), else ``model``."""
    if is_embedded(model, model_args):
        return DEFAULT_MODEL_NAME
    return _named_value(model_args or {}) or model or "model"


def model_folder_name(model: str | None, model_args: Mapping[str, Any] | None) -> str:
    """The model's folder in an ``--output_path``: :func:`model_name` through lm-eval's ``sanitize_model_name``."""
    from lm_eval.utils import sanitize_model_name

    folder = short_folder_name(sanitize_model_name(model_name(model, model_args)))  # a 300-character name fits
    return folder if folder.strip(".") else "model"  # `..` would write beside --output_path


def short_id(args: Mapping[str, Any], fallback: str | None) -> str:
    """A model's report id from its parsed ``args`` (``fallback``: the stored ``model_name`` or registry name).

    :func:`model_name`'s value shortened for reading: :func:`gguf_model_name` when ``gguf_file`` is given
    (``SmolLM2-135M-Instruct-Q4_1``, the embedded model's folder name),
    the last path component when the value is a local path (``/x/y/Llama-3-8B`` -> ``Llama-3-8B``; hub
    ids ``org/name`` stay whole); without a named value ``config.model_name``, else ``config.model``.
    """
    if args.get("gguf_file"):
        return gguf_model_name(str(args["gguf_file"]))
    value = _named_value(args)
    if value:
        value = value.rstrip("/")
        if value.startswith(("/", "./", "../", "~")) or value.count("/") > 1:
            value = value.rsplit("/", 1)[-1]
        return value
    if not fallback:
        raise UserError("results file has no config.model_args or config.model to identify the model")
    return str(fallback)


def identity_key(args: Mapping[str, Any], fallback: str | None) -> str:
    """The model's identity, the whole name :func:`short_id` shortens: the first :data:`NAME_KEYS` value as given (a
    URL login dropped; a ``gguf_file`` under it: two GGUF files of one name in two folders are two models), else
    ``config.model_name``/``config.model``, with ``@revision`` when a Hub ``revision`` is pinned. Two results files
    of one model share it; two weights never do."""
    value = _named_value(args)
    key = value.rstrip("/") if value else ""
    if args.get("gguf_file"):
        gguf = redact_url(str(args["gguf_file"]))
        key = gguf if not key or gguf.startswith("/") else f"{key}/{gguf}"
    key = key or str(fallback or "")
    revision = args.get("revision")
    return f"{key}@{revision}" if revision not in (None, "", "main") else key


class Identified(Protocol):
    """What :func:`unique_report_ids` reads of a model (:class:`models.ref.ModelRef`): its short id and its identity."""

    @property
    def report_id(self) -> str: ...

    @property
    def key(self) -> str: ...


def unique_report_ids(refs: Sequence[Identified], labels: Sequence[str | None] | None = None) -> tuple[list[str], list[str]]:
    """Each model's report id, unique per model (``refs``: each one's :func:`short_id` as ``report_id`` and
    :func:`identity_key` as ``key``, a :class:`models.ref.ModelRef`): models with one key share an id, and
    models with different keys but one id get as many parent folders of their keys as tell them apart
    (``/models/orgA/Same`` -> ``orgA/Same``; one model at two revisions: ``org/name@rev``). ``labels``: each model's
    suite label (``name:``), or None: labelled models that share an id are named by their labels (two entries of
    one weights under two names keep two rows). Returns the ids and one line per renamed collision."""
    ids = [ref.report_id for ref in refs]
    idents = list(zip((ref.key for ref in refs), labels if labels is not None else [None] * len(refs)))
    by_id: dict[str, dict[tuple[str, str | None], None]] = {}
    for short, ident in zip(ids, idents):
        by_id.setdefault(short, {})[ident] = None
    renamed: dict[tuple[str, tuple[str, str | None]], str] = {}
    notes = []
    for short, group in by_id.items():
        if len(group) > 1:
            names = _group_names(short, list(group))
            renamed.update({(short, ident): name for ident, name in names.items()})
            pairs = ", ".join(f"{key if label is None else label} -> {names[(key, label)]}" for key, label in group)
            notes.append(f"{len(group)} different models are all named {short!r}; each is named apart: {pairs}")
    return [renamed.get((short, ident), short) for short, ident in zip(ids, idents)], notes


def _group_names(short: str, idents: list[tuple[str, str | None]]) -> dict[tuple[str, str | None], str]:
    """Names for models sharing the id ``short``: a suite label names its model; the others by their keys."""
    keys = [key for key, label in idents if label is None]
    by_key = _distinct_names(short, keys) if len(set(keys)) > 1 else {key: short for key in keys}
    return {(key, label): label if label is not None else by_key[key] for key, label in idents}


def _distinct_names(short: str, keys: list[str]) -> dict[str, str]:
    """For models whose keys differ but whose id is ``short``: ``short`` under the fewest parent folders of each
    key that make the names distinct (the whole key when none do)."""
    if len({key.rsplit("@", 1)[0] for key in keys}) == 1:  # one model at several revisions
        return {key: f"{short}@{key.rsplit('@', 1)[1]}" if "@" in key else short for key in keys}
    parents = [key.split("/")[:-1] for key in keys]
    for depth in range(1, max(len(p) for p in parents) + 1):
        names = ["/".join([*p[-depth:], short]) if p else short for p in parents]
        if len(set(names)) == len(names):
            return dict(zip(keys, names))
    return {key: key or short for key in keys}


def label_of(report_id: str) -> str:
    """A suite's default label (and folder) for a model entry: its report id in ``[A-Za-z0-9._+-]``."""
    return short_folder_name(re.sub(r"[^A-Za-z0-9._+-]+", "_", report_id).strip("_"), MAX_LABEL_CHARS) or "model"
