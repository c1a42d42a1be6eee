"""Machine paths: the only environment variables triangulate reads.

- ``$TRIANGULATE_DATA/<dataset>/``: built Hub-ready dataset folders (default ``~/.cache/triangulate/data``).
- ``$TRIANGULATE_CACHE``: downloads (default ``~/.cache/triangulate``).
- ``$TRIANGULATE_UPSTREAM/<name>/``: a local copy of the upstream repositories' files (read by the
  dataset builders only; the tasks and the runner read built datasets).
- ``$TRIANGULATE_FASTTEXT_DIR``: the official ``cc.<lang>.300.bin`` fastText models.
"""

from __future__ import annotations

import os
from pathlib import Path

from plumbing.errors import UserError

BUILD_HINT = "run `triangulate data build` first"


def cache_root() -> Path:
    """``$TRIANGULATE_CACHE`` or ``$XDG_CACHE_HOME/triangulate`` (``~/.cache/triangulate``)."""
    value = os.environ.get("TRIANGULATE_CACHE")
    if value:
        return Path(value).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "triangulate"


def data_root() -> Path:
    """``$TRIANGULATE_DATA`` or ``$XDG_CACHE_HOME/triangulate/data`` (``~/.cache/triangulate/data``)."""
    value = os.environ.get("TRIANGULATE_DATA")
    if value:
        return Path(value).expanduser().resolve()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "triangulate" / "data"


def dataset_dir(name: str, must_exist: bool = True) -> Path:
    """The built folder of dataset ``name``; with ``must_exist`` a missing build names the build command."""
    path = data_root() / name
    if must_exist and not (path / "README.md").is_file():
        raise UserError(f"dataset '{name}' is not built in {data_root()}: {BUILD_HINT} (or set TRIANGULATE_DATA)")
    return path


def upstream_root() -> Path | None:
    """The folder named by ``$TRIANGULATE_UPSTREAM``, or None when the variable is unset."""
    value = os.environ.get("TRIANGULATE_UPSTREAM")
    if not value:
        return None
    root = Path(value).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"TRIANGULATE_UPSTREAM={value} is not a folder; point it at the upstream data (e.g. ../shared/upstream)")
    return root


def fasttext_dir() -> Path | None:
    """``$TRIANGULATE_FASTTEXT_DIR`` (the folder of ``cc.<lang>.300.bin``), or None when unset."""
    value = os.environ.get("TRIANGULATE_FASTTEXT_DIR")
    return Path(value).expanduser() if value else None


def upstream_dir(name: str) -> Path:
    """``$TRIANGULATE_UPSTREAM/<name>`` for the dataset builders; a clear error when it is missing."""
    root = upstream_root()
    if root is None:
        raise UserError(f"set TRIANGULATE_UPSTREAM to the folder that holds upstream '{name}/' (e.g. ../shared/upstream)")
    path = root / name
    if not path.is_dir():
        raise UserError(f"upstream folder {path} does not exist; check TRIANGULATE_UPSTREAM")
    return path
