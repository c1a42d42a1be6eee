"""Where upstream sources and built datasets live.

- ``$TRIANGULATE_UPSTREAM/<name>/``: the upstream repositories' files, laid out as ``../shared/upstream``.
  Without the variable, :mod:`datasets_build.sources` downloads them at pinned commits.
- ``$TRIANGULATE_DATA/<dataset>/``: the built Hub-ready folders (default: a user cache folder).
"""

from __future__ import annotations

import os
from pathlib import Path

from triangulation.errors import UserError

BUILD_HINT = "run `triangulate data build` first"


def upstream_root() -> Path | None:
    """The folder named by ``$TRIANGULATE_UPSTREAM``, or None when the variable is unset."""
    value = os.environ.get("TRIANGULATE_UPSTREAM")
    if not value:
        return None
    root = Path(value).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"TRIANGULATE_UPSTREAM={value} is not a folder; point it at the upstream data (e.g. ../shared/upstream)")
    return root


def upstream_dir(name: str) -> Path:
    """``$TRIANGULATE_UPSTREAM/<name>``; a clear error when it is missing."""
    root = upstream_root()
    if root is None:
        raise UserError(f"set TRIANGULATE_UPSTREAM to the folder that holds upstream '{name}/' (e.g. ../shared/upstream)")
    path = root / name
    if not path.is_dir():
        raise UserError(f"upstream folder {path} does not exist; check TRIANGULATE_UPSTREAM")
    return path


def data_root() -> Path:
    """``$TRIANGULATE_DATA`` or ``$XDG_CACHE_HOME/triangulate/data`` (``~/.cache/triangulate/data``)."""
    value = os.environ.get("TRIANGULATE_DATA")
    if value:
        return Path(value).expanduser().resolve()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "triangulate" / "data"


def dataset_dir(name: str, must_exist: bool = True) -> Path:
    """The built folder of dataset ``name``; with ``must_exist`` a missing build names the build command."""
    path = data_root() / name
    if must_exist and not (path / "README.md").is_file():
        raise UserError(f"dataset '{name}' is not built in {data_root()}: {BUILD_HINT} (or set TRIANGULATE_DATA)")
    return path
