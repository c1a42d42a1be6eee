"""One model, named once: :class:`ModelRef`, the registry name plus its parsed, immutable ``model_args``.

A ``ModelRef`` is made at an edge (a command's flags, a suite file's model entry, a stored results ``config``) by
:meth:`ModelRef.parse`, the one call of :func:`parse_model_args` (here, with the identity it makes) for that model. Every form the rest of
the code needs is derived from it, here:

- :attr:`ModelRef.name`, :attr:`ModelRef.folder`, :attr:`ModelRef.report_id`, :attr:`ModelRef.label`: the naming
  rule of :mod:`models.naming`;
- :attr:`ModelRef.key`: the model's identity, what makes two models different weights (the named value, a GGUF
  file with its folder, a Hub ``revision``), so two of them never share a report row;
- :attr:`ModelRef.redacted` / :attr:`ModelRef.args_string`: the forms results and logs store;
- :attr:`ModelRef.resume_args`: the form a resume compares (:data:`TRANSPORT_ARGS` left out);
- :meth:`ModelRef.fingerprint`: what changes results only. Credentials (secret-named keys, a URL's password) and
  :data:`OPERATIONAL_KEYS` (how long to wait, how many requests at once) are left out, so rotating a key or
  adding a ``timeout`` reruns nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from models.args import model_args_string, redact_model_args, redact_url
from models.naming import EMBEDDED_LABEL, identity_key, is_embedded, label_of, model_folder_name, model_name, short_id
from plumbing.errors import UserError
from plumbing.secrets import SECRET_KEY_PATTERN

#: model_args keys that change how a backend is reached, never what it answers (left out of a fingerprint)
OPERATIONAL_KEYS = frozenset({"timeout", "max_retries", "num_concurrent", "verify_certificate"})
#: model_args that say how a model is reached, not what it answers: a served model comes back on another
#: port after a restart (the suite's serve-once sweep), with other concurrency or timeouts, and still plays
#: the same episodes, so a resume may change them (left out of :attr:`ModelRef.resume_args`)
TRANSPORT_ARGS = frozenset(
    {"base_url", "num_concurrent", "max_retries", "timeout", "api_key", "verify_certificate", "batch_size", "device"}
)


def parse_model_args(model_args: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """``key=val,key2=val2`` (or a dict, as lm_eval's CLI gives and its results store) -> dict, values
    typed as lm-eval types them (``simple_parse_args_string``); any other type is a ``UserError``. The only place a
    ``model_args`` string becomes a dict; :meth:`ModelRef.parse` calls it once per model, at an edge."""
    if model_args is None:
        return {}
    if isinstance(model_args, Mapping):
        return dict(model_args)
    if isinstance(model_args, str):
        from lm_eval.utils import simple_parse_args_string

        return simple_parse_args_string(model_args)
    raise UserError(f"model_args has an unexpected type {type(model_args).__name__}")


@dataclass(frozen=True)
class ModelRef:
    """A model: lm-eval registry name (None with no args: the embedded SmolLM2) and its parsed model_args.

    ``given``: the model_args exactly as the edge received them (a string or a mapping), kept for
    :meth:`fingerprint` and :attr:`embedded` only, so a suite written before ModelRef keeps its cells' fingerprints."""

    model: str | None
    args: Mapping[str, Any]
    given: str | Mapping[str, Any] | None = None

    @classmethod
    def parse(cls, model: str | None, model_args: str | Mapping[str, Any] | None) -> ModelRef:
        """The one parse of a model's ``model_args`` (at an edge)."""
        given = dict(model_args) if isinstance(model_args, Mapping) else model_args
        return cls(model, MappingProxyType(parse_model_args(model_args)), given)

    @classmethod
    def stored(cls, config: Mapping[str, Any]) -> ModelRef:
        """The model a stored results ``config`` scored (that file's edge; never the folder's name): its ``model_args``
        parsed once, its ``model_name`` (else its registry name) the name when those args name no model. A config
        that names no model at all is a one-line ``UserError``."""
        ref = cls.parse(config.get("model_name") or config.get("model") or None, config.get("model_args"))
        if ref.model is None:
            short_id(ref.args, None)  # the UserError when the args name no model either
        return ref

    def with_args(self, model: str, args: Mapping[str, Any]) -> ModelRef:
        """This model as another registry name and (already parsed) args reach it: its backend's form
        (:func:`models.loading.resolve_model`); ``given`` is kept."""
        return ModelRef(model, MappingProxyType(dict(args)), self.given)

    @property
    def embedded(self) -> bool:
        return is_embedded(self.model, self.given if self.given is not None else dict(self.args) or None)

    def args_dict(self) -> dict[str, Any]:
        """A mutable copy of the parsed model_args."""
        return dict(self.args)

    @property
    def config(self) -> dict[str, Any]:
        """The ``config`` a results file stores for this model (what :mod:`models.naming` reads)."""
        return {"model": self.model or "hf", "model_args": dict(self.args)}

    @functools.cached_property
    def name(self) -> str:
        return model_name(self.model, None if self.embedded else self.args)

    @functools.cached_property
    def folder(self) -> str:
        return model_folder_name(self.model, None if self.embedded else self.args)

    @functools.cached_property
    def report_id(self) -> str:
        return short_id(self.args, self.model or "hf")

    @functools.cached_property
    def key(self) -> str:
        return identity_key(self.args, self.model or "hf")

    @functools.cached_property
    def label(self) -> str:
        """A suite's default label (and folder) for this model entry."""
        return EMBEDDED_LABEL if self.embedded else label_of(short_id(self.args, self.model))

    @functools.cached_property
    def redacted(self) -> dict[str, Any]:
        return redact_model_args(self.args)

    @functools.cached_property
    def args_string(self) -> str:
        return model_args_string(self.args)

    @functools.cached_property
    def resume_args(self) -> str:
        """The model_args a resume compares: :data:`TRANSPORT_ARGS` left out, in lm-eval's string form."""
        return model_args_string({k: v for k, v in self.args.items() if k not in TRANSPORT_ARGS})

    def fingerprint(self) -> str | dict[str, Any] | None:
        """The model_args as given, less credentials and :data:`OPERATIONAL_KEYS` (unchanged when it has none)."""
        drop = {k for k in self.args if SECRET_KEY_PATTERN.search(str(k)) or k in OPERATIONAL_KEYS}
        urls = {k for k, v in self.args.items() if isinstance(v, str) and redact_url(v) != v}
        if not drop and not urls:
            return self.given
        return {k: redact_url(v) if k in urls else v for k, v in self.args.items() if k not in drop}
