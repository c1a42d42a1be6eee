"""Model arguments: the one parser (lm-eval's ``key=val,...`` or a dict) and everything that keeps their secrets out.

(:func:`models.ref.parse_model_args`, beside :class:`models.ref.ModelRef`, is the only place a ``model_args`` string becomes
a dict.) :func:`redact_model_args` and :func:`model_args_string` are the forms results and logs store; :func:`scrub_secrets` and
:func:`register_secrets` hand the credentials of model_args to the one scrubber (:mod:`plumbing.secrets`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from plumbing.errors import UserError
from plumbing.secrets import SECRET_KEY_PATTERN, register_secret_values, scrub, secret_values_of

#: lm-eval registry names of vLLM whose model_args get ``enable_prefix_caching=True``
VLLM_MODEL_NAMES: tuple[str, ...] = ("vllm",)
#: lm-eval registry names of HFLM that the runner upgrades to ``models.prefix_cache.PrefixCacheHFLM``
HF_MODEL_NAMES: tuple[str, ...] = ("hf", "hf-auto", "huggingface")
#: registry names the runner serves with its own API class (``models.api.API_LM_CLASSES``)
API_MODEL_NAMES: tuple[str, ...] = ("local-chat-completions",)


def prefix_cache_enabled(flag: bool | None = None) -> bool:
    """The runner's prefix-cache switch: on unless ``--no_prefix_cache`` passed ``False``."""
    return True if flag is None else bool(flag)


def redact_url(value: str) -> str:
    """Drop ``user:password@`` from a URL; other strings unchanged."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if parts.username or parts.password:
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return value


def secret_values(model_args: Mapping[str, Any] | None) -> list[str]:
    """The credential values in (parsed) model_args (secret-looking keys, URL passwords), longest first."""
    return secret_values_of((model_args or {}).items())


def scrub_secrets(text: str, model_args: Mapping[str, Any] | None = None) -> str:
    """``text`` with every credential replaced by ``<redacted>``: :func:`plumbing.secrets.scrub` (the one
    scrubber: registered values, secret-named keys, URL passwords, secret-named environment variables)
    plus the values of ``model_args``."""
    return scrub(text, secret_values(model_args))


def register_secrets(model_args: Mapping[str, Any] | None) -> None:
    """Remember the credentials of ``model_args`` for every later scrub in this process (:func:`load_lm` calls it)."""
    register_secret_values(secret_values(model_args))


def redact_model_args(model_args: Mapping[str, Any] | None) -> dict[str, Any]:
    """(Parsed) model_args without credentials: secret-looking keys are replaced by ``"<redacted>"``, URL logins dropped."""
    out: dict[str, Any] = {}
    for key, value in (model_args or {}).items():
        if SECRET_KEY_PATTERN.search(str(key)):
            out[key] = "<redacted>"
        elif isinstance(value, str):
            out[key] = redact_url(value)
        else:
            out[key] = value
    return out


def model_args_string(model_args: Mapping[str, Any]) -> str:
    """A redacted dict back to lm-eval's ``key=val,...`` form (as results JSONs store it), through the one scrubber
    too: lm-eval's ``--model_args`` parser reads a ``'`` as a quote, so a URL password holding one swallows the
    ``api_key=...`` after it into the URL's value, where only :func:`plumbing.secrets.scrub` still finds it."""
    return scrub(",".join(f"{k}={v}" for k, v in redact_model_args(model_args).items()))


#: a Hugging Face Hub repository id: ``name`` or ``org/name`` (no leading dot or slash, at most one slash)
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")


def check_local_model(model_args: Mapping[str, Any]) -> None:
    """``UserError`` when ``pretrained=`` names a local folder that does not exist (instead of the Hub's "Repo id
    must be in the form ..." or a page of traceback): a value that is not a Hub id (``org/name``) is a path."""
    value = model_args.get("pretrained")
    if not isinstance(value, str) or not value or Path(value).expanduser().exists():
        return
    if HUB_ID.match(value) and not value.startswith((".", "~")):
        return
    raise UserError(
        f"--model_args pretrained={value}: the folder {value} does not exist (a local model is a folder; a Hub model is 'org/name')"
    )
