"""The one secret scrubber: every line any `triangulate` command writes goes through :func:`scrub`.

It knows credentials three ways:

- **values** registered by the commands (:func:`register_secret_values`: the model_args of every model a
  process loads or a suite names) and those of secret-named environment variables (``OPENAI_API_KEY``,
  ``HF_TOKEN``, ...), replaced wherever they occur;
- **secret-bearing keys** in ``key=value`` (model_args strings), ``"key": "value"`` (JSON) and
  ``'key': 'value'`` (a Python dict's repr, as lm-eval prints model_args): the value is replaced;
- **URL userinfo**: ``scheme://user:password@host`` keeps the user, the password is replaced (a ``'`` in it, legal
  in a URL, included); and ``Bearer <token>`` in headers.

:func:`scrub_tree` scrubs every string of a JSON-like value (what a command writes to JSON: episode records,
plans, results), :func:`redact_secret_keys` a mapping's secret-named values (``--gen_kwargs auth_token=...``).
A process handing credentials to a child never puts them in its argv (``ps`` shows every user's argv):
:func:`hide_argv_secrets` swaps each for a placeholder and gives the values as environment variables (readable by
the user only), :func:`reveal_argv_secrets` puts them back in the child.

:class:`ScrubbingStream` puts it on ``sys.stdout``/``sys.stderr`` (what lm-eval prints, tracebacks,
progress lines), :class:`LogScrubber` on log handlers; the suite pipes each cell's output through it.
"""

from __future__ import annotations

import base64
import logging
import os
import re
import sys
import traceback
from collections.abc import Iterable
from typing import Any, TextIO
from urllib.parse import unquote, urlsplit

REDACTED = "<redacted>"
#: what a ``*_token`` key holding a credential is named for (``hf_token``, ``api_token``, ``auth_token``, ...);
#: ``token`` alone is one too (Hugging Face's ``token=``). Other ``*_token`` keys name a vocabulary token, a
#: model setting (lm-eval's ``add_bos_token``, ``think_end_token``): never secrets (issue 39 item 2)
_AUTH_TOKEN = r"(?:hf|hub|api|access|auth|bearer|session|refresh|oauth|id|github|gh|gitlab|openai|private|personal|secret|user|bot|jwt|csrf|xsrf)_token"
#: keys whose values are credentials: never written to results, logs or folder names.
SECRET_KEY_PATTERN = re.compile(
    rf"(api[_-]?key|secret|password|passwd|credential|bearer|auth(?!or)|(^|_){_AUTH_TOKEN}$|^token$)", re.IGNORECASE
)
#: environment variables: any ``*_TOKEN`` there is a credential (``HF_TOKEN``, ``CI_JOB_TOKEN``, ``SLACK_BOT_TOKEN``)
ENV_SECRET_PATTERN = re.compile(r"(api[_-]?key|secret|password|passwd|credential|bearer|auth(?!or)|(^|_)token$)", re.IGNORECASE)
_KEY = rf"[\w.-]*(?:api[_-]?key|secret|password|passwd|credential|auth(?!or)[\w-]*)[\w.-]*|[\w.-]*{_AUTH_TOKEN}|token"
#: values that hold no credential though a secret-named key carries them (``api_key=EMPTY`` for a local server):
#: replacing them wherever they occur would rewrite ordinary text and lm-eval's own keys (``"filter": "none"``);
#: they are still redacted as the value of a secret-named key (issue 39 item 3)
PLACEHOLDERS = frozenset(
    "none null nil empty dummy test testing fake false true unused placeholder example default changeme anything "
    "no-key nokey no_key not-needed not_needed sk-no-key-required sk-dummy sk-fake sk-test token key secret password "
    "local localhost vllm ollama lm-studio lmstudio openai".split()
)
#: ``key=value`` (model_args, command lines); the value runs to a comma, space, quote or bracket
_KEY_EQ = re.compile(rf"(?<![\w.-])({_KEY})(\s*=\s*)(?!{REDACTED})([^,\s'\"}}\])]+)", re.IGNORECASE)
#: ``"key": "value"`` (JSON) and ``'key': 'value'`` (a Python dict's repr)
_KEY_QUOTED = re.compile(rf"(['\"])({_KEY})\1(\s*:\s*)(['\"])(?!{REDACTED})((?:\\.|(?!\4).)*)\4", re.IGNORECASE)
#: ``scheme://user:password@``: the password
_USERINFO = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://[^\s/@:'\"]*:)(?!" + REDACTED + r")([^\s/@\"]+)(@)")
_BEARER = re.compile(r"(\bBearer\s+)(?!" + REDACTED + r")([A-Za-z0-9._~+/=-]{4,})")

_KNOWN: set[str] = set()


def is_secret_key(key: Any) -> bool:
    """A model_args, JSON or kwargs key whose value is a credential (:data:`SECRET_KEY_PATTERN`)."""
    return bool(SECRET_KEY_PATTERN.search(str(key)))


def is_credential_value(value: Any) -> bool:
    """A value worth replacing wherever it occurs: 4+ characters, not one repeated character, not a
    :data:`PLACEHOLDERS` word (``none``, ``EMPTY``, ``dummy``, ...)."""
    text = str(value)
    return len(text) >= 4 and len(set(text)) > 1 and text.strip().lower() not in PLACEHOLDERS


def url_password(value: str) -> str | None:
    """The password of a ``scheme://user:password@host`` URL, else None."""
    match = _USERINFO.search(value)
    return match.group(2) if match else None


def _basic_auth(url: str) -> list[str]:
    """``base64(user:password)`` of a URL login, as HTTP Basic authentication sends it (URL-decoded, as clients do)."""
    try:
        parts = urlsplit(url.strip())
        if parts.password is None:
            return []
    except ValueError:
        return []
    login = f"{unquote(parts.username or '')}:{unquote(parts.password)}"
    return [base64.b64encode(login.encode("utf-8")).decode("ascii")]


def secret_values_of(pairs: Iterable[tuple[Any, Any]]) -> list[str]:
    """The credential values among ``(key, value)`` pairs: secret-named keys and URL passwords (4+ characters), with
    the ``Authorization: Basic`` form a client sends for a URL login (a server may echo it)."""
    values: set[str] = set()
    for key, value in pairs:
        if value in (None, ""):
            continue
        if is_secret_key(key):
            values.add(str(value))
        elif isinstance(value, str) and (password := url_password(value)):
            values.add(password)
            values.update(_basic_auth(value))
    return sorted((v for v in values if is_credential_value(v)), key=len, reverse=True)


def args_pairs(model_args: Any) -> list[tuple[Any, Any]]:
    """``(key, value)`` pairs of model_args given as a mapping or a ``k=v,k2=v2`` string (values as text)."""
    if isinstance(model_args, dict):
        return list(model_args.items())
    if isinstance(model_args, str):
        return [tuple(part.split("=", 1)) for part in model_args.split(",") if "=" in part]
    return []


def register_model_args(*model_args: Any) -> None:
    """Remember the credential values of each model_args (mapping or string) for every later :func:`scrub`."""
    for args in model_args:
        register_secret_values(secret_values_of(args_pairs(args)))


def register_secret_values(values: Iterable[str]) -> None:
    """Remember credential values for every later :func:`scrub` in this process."""
    _KNOWN.update(v for v in values if v and is_credential_value(v))


def env_secret_values(min_length: int = 8) -> list[str]:
    """Values of environment variables whose names look like credentials (short values are ignored)."""
    return [v for k, v in os.environ.items() if ENV_SECRET_PATTERN.search(k) and len(v) >= min_length and is_credential_value(v)]


def scrub(text: str, values: Iterable[str] = ()) -> str:
    """``text`` with every credential replaced by ``<redacted>`` (see the module docstring); ``values``: more
    credential values to replace besides the registered ones and the environment's."""
    if not text:
        return text
    return _scrub_known(text, _known_values(values))


def _known_values(values: Iterable[str] = ()) -> list[str]:
    """Registered, environment and given credential values, longest first (a value inside another goes after it)."""
    given = {v for v in values if v and is_credential_value(v)}
    return sorted(given | _KNOWN | set(env_secret_values()), key=len, reverse=True)


def _scrub_known(text: str, known: Iterable[str]) -> str:
    for value in known:
        if value in text:
            text = text.replace(value, REDACTED)
    if "://" in text:  # each pattern only where it can match (most strings of a record hold none of these)
        text = _USERINFO.sub(rf"\1{REDACTED}\3", text)
    if "'" in text or '"' in text:
        text = _KEY_QUOTED.sub(rf"\1\2\1\3\4{REDACTED}\4", text)
    if "=" in text:
        text = _KEY_EQ.sub(rf"\1\2{REDACTED}", text)
    return _BEARER.sub(rf"\1{REDACTED}", text) if "Bearer" in text else text


def scrub_tree(value: Any, values: Iterable[str] = ()) -> Any:
    """``value`` (dicts, lists and strings, as JSON holds them) with every string scrubbed by :func:`scrub`; a
    string is scrubbed as a whole, never its JSON text (an escaped quote would end a scrubbed value early)."""
    known = _known_values(values)

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return _scrub_known(item, known) if item else item
        if isinstance(item, dict):  # keys are names (lm-eval's "acc,none"), never scrubbed; a secret-named key's value is
            return {key: REDACTED if is_secret_key(key) and isinstance(v, str) and v else walk(v) for key, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(v) for v in item]
        return item

    return walk(value)


def redact_secret_keys(mapping: Any) -> dict[str, Any]:
    """A copy of ``mapping`` whose secret-named keys (:func:`is_secret_key`) hold ``<redacted>``: what is stored of
    ``--gen_kwargs`` and the like (the values are registered for :func:`scrub` too)."""
    out = dict(mapping or {})
    register_secret_values(str(v) for k, v in out.items() if is_secret_key(k) and v not in (None, ""))
    return {k: REDACTED if is_secret_key(k) and v not in (None, "") else v for k, v in out.items()}


#: the environment variables that carry a child's credentials (:func:`hide_argv_secrets`); the names are
#: secret-named, so the child's scrubber knows their values too
ARGV_SECRET_ENV = "TRIANGULATE_SECRET_{}"
_PLACEHOLDER = "@@TRIANGULATE_SECRET_{}@@"
_PLACEHOLDER_RE = re.compile(r"@@TRIANGULATE_SECRET_(\d+)@@")


def secret_values_in(text: str) -> list[str]:
    """The credentials :func:`scrub` would replace in ``text``, longest first."""
    found = {v for v in _known_values() if v in text}
    found |= {m.group(2) for m in _USERINFO.finditer(text)}
    found |= {m.group(5) for m in _KEY_QUOTED.finditer(text)}
    found |= {m.group(3) for m in _KEY_EQ.finditer(text)}
    found |= {m.group(2) for m in _BEARER.finditer(text)}
    return sorted((v for v in found if v), key=len, reverse=True)


def hide_argv_secrets(argv: Iterable[str]) -> tuple[list[str], dict[str, str]]:
    """``argv`` with every credential replaced by a placeholder, and the environment variables that carry the
    values to the child (which calls :func:`reveal_argv_secrets`); a child's argv is visible to every user
    (``ps -ef``, ``/proc/<pid>/cmdline``), its environment to its user only."""
    argv = [str(a) for a in argv]
    values = sorted({v for a in argv for v in secret_values_in(a)}, key=len, reverse=True)
    env = {ARGV_SECRET_ENV.format(k): v for k, v in enumerate(values)}
    out = []
    for arg in argv:
        for k, value in enumerate(values):
            arg = arg.replace(value, _PLACEHOLDER.format(k))
        out.append(arg)
    return out, env


def reveal_argv_secrets(argv: Iterable[str], environ: Any = None) -> list[str]:
    """``argv`` with the placeholders of :func:`hide_argv_secrets` replaced by the values in ``environ`` (default
    ``os.environ``); each value is registered for :func:`scrub`. A placeholder without its variable stays."""
    environ = os.environ if environ is None else environ

    def value(match: re.Match) -> str:
        found = environ.get(ARGV_SECRET_ENV.format(match.group(1)))
        if found is None:
            return match.group(0)
        register_secret_values([found])
        return found

    return [_PLACEHOLDER_RE.sub(value, str(a)) for a in argv]


class ScrubbingStream:
    """A text stream that scrubs everything written to it before passing it on (``sys.stdout``/``sys.stderr``)."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(scrub(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        return getattr(self._stream, name)


def _scrubbing_excepthook(exc_type, exc, tb) -> None:
    """An uncaught exception's traceback, scrubbed (it may quote a URL or a header)."""
    sys.__stderr__.write(scrub("".join(traceback.format_exception(exc_type, exc, tb))))


def install_stream_scrubber() -> tuple[Any, Any]:
    """Wrap ``sys.stdout`` and ``sys.stderr`` in :class:`ScrubbingStream` (idempotent) and scrub uncaught
    tracebacks; returns the previous pair."""
    previous = (sys.stdout, sys.stderr)
    sys.excepthook = _scrubbing_excepthook
    if not isinstance(sys.stdout, ScrubbingStream):
        sys.stdout = ScrubbingStream(sys.stdout)
    if not isinstance(sys.stderr, ScrubbingStream):
        sys.stderr = ScrubbingStream(sys.stderr)
    return previous


class LogScrubber(logging.Filter):
    """A logging filter that renders each record and scrubs it (message and traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def install_log_scrubber() -> None:
    """Put :class:`LogScrubber` on every handler of the root and ``lm_eval`` loggers (idempotent)."""
    for logger in (logging.getLogger(), logging.getLogger("lm_eval")):
        for handler in logger.handlers:
            if not any(isinstance(f, LogScrubber) for f in handler.filters):
                handler.addFilter(LogScrubber())
