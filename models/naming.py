"""How a model is named: one ``parse_model_args`` and one naming rule, for play, eval, score, report and suite.

The rule (lm-eval's ``EvaluationTracker``): a model is named by the value of the first of
:data:`NAME_KEYS` in its ``model_args`` (``pretrained=org/name`` -> ``org/name``), else by its registry
name (``--model``); the embedded SmolLM2 (no ``--model``, no ``--model_args``) is
:data:`~models.default_model.DEFAULT_MODEL_NAME`. A URL login never becomes part of a name.
From that one name come:

- :func:`model_name`: the name itself (``config.model_name`` of a play results file);
- :func:`model_folder_name`: its folder in an ``--output_path`` (lm-eval's ``sanitize_model_name``, so
  ``lm_eval`` and ``triangulate play`` runs of one model land side by side);
- :func:`model_id`: the name the report gives a results file's model, read from its ``config`` (never
  from the folder): a GGUF model's name (:func:`gguf_model_name`), a local path's last component, a hub id whole;
- :func:`model_label`: a suite's default label for a model entry (:func:`model_id` in folder-safe
  characters; ``smollm2`` for the embedded model).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from models.args import parse_model_args, redact_url
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


def model_name(model: str | None, model_args: str | Mapping[str, Any] | None) -> str:
    """The model's name: the first :data:`NAME_KEYS` value of ``model_args``, else ``model``."""
    if is_embedded(model, model_args):
        from models.default_model import DEFAULT_MODEL_NAME

        return DEFAULT_MODEL_NAME
    return _named_value(parse_model_args(model_args)) or model or "model"


def model_folder_name(model: str | None, model_args: str | Mapping[str, Any] | None) -> str:
    """The model's folder in an ``--output_path``: :func:`model_name` through lm-eval's ``sanitize_model_name``."""
    from lm_eval.utils import sanitize_model_name

    folder = short_folder_name(sanitize_model_name(model_name(model, model_args)))  # a 300-character name fits
    return folder if folder.strip(".") else "model"  # `..` would write beside --output_path


def model_id(config: Mapping[str, Any]) -> str:
    """The model a results file scored, from its ``config`` (not from the folder name).

    :func:`model_name`'s value shortened for reading: :func:`gguf_model_name` when ``gguf_file`` is given
    (``SmolLM2-135M-Instruct-Q4_1``, the embedded model's folder name),
    the last path component when the value is a local path (``/x/y/Llama-3-8B`` -> ``Llama-3-8B``; hub
    ids ``org/name`` stay whole); without a named value ``config.model_name``, else ``config.model``.
    """
    args = parse_model_args(config.get("model_args"))
    if args.get("gguf_file"):
        return gguf_model_name(str(args["gguf_file"]))
    value = _named_value(args)
    if value:
        value = value.rstrip("/")
        if value.startswith(("/", "./", "../", "~")) or value.count("/") > 1:
            value = value.rsplit("/", 1)[-1]
        return value
    name = config.get("model_name") or config.get("model")
    if not name:
        raise UserError("results file has no config.model_args or config.model to identify the model")
    return str(name)


def model_label(model: str | None, model_args: str | Mapping[str, Any] | None) -> str:
    """A suite's default label (and folder) for a model entry: :func:`model_id` in ``[A-Za-z0-9._+-]``."""
    if is_embedded(model, model_args):
        return EMBEDDED_LABEL
    raw = model_id({"model_args": model_args, "model": model})
    return short_folder_name(re.sub(r"[^A-Za-z0-9._+-]+", "_", raw).strip("_"), MAX_LABEL_CHARS) or "model"
