"""Build stamps: ``triangulate data build`` skips a dataset whose inputs did not change since its last build.

A dataset's inputs are the upstream sources its builder read (recorded while it ran: every builder reads
through :func:`datasets_build.sources.source_dir`), the builder code (every file of ``datasets_build/``
and ``plumbing/``) and the versions of the libraries that write its parquet files. After a build the
stamp ``<out>/.triangulate-build/<dataset>.json`` records their fingerprint and the built folder's file list;
the next build skips the dataset when all three and the folder are as recorded (builds are deterministic:
the same inputs give byte-identical files). A source is fingerprinted without reading its bytes: a local
``$TRIANGULATE_UPSTREAM`` copy by each file's path, size and modification time, a verified download by its
manifest's digest (the manifest pins every file's SHA-256); a ``--source-commit`` (unverified) always
rebuilds. ``--rebuild`` ignores the stamps.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from datasets_build.manifest import load_manifest
from plumbing import atomic
from plumbing.paths import upstream_root

STAMP_DIR = ".triangulate-build"
#: libraries whose version changes the bytes written
LIBRARIES = ("datasets", "pyarrow", "pandas")
PACKAGES = ("datasets_build", "plumbing")


def _digest(items: Iterable[str]) -> str:
    h = hashlib.sha256()
    for item in items:
        h.update(item.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()


def tree_listing(folder: Path, contents: bool = False) -> list[str]:
    """``relpath size mtime`` of every file under ``folder`` (or its bytes' SHA-256 with ``contents``)."""
    out = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        if contents:
            out.append(f"{path.relative_to(folder)} {hashlib.sha256(path.read_bytes()).hexdigest()}")
        else:
            st = path.stat()
            out.append(f"{path.relative_to(folder)} {st.st_size} {st.st_mtime_ns}")
    return out


def code_fingerprint() -> str:
    """The builder code's bytes and the writing libraries' versions."""
    root = Path(__file__).resolve().parent.parent
    items = [f"{pkg}/{line}" for pkg in PACKAGES for line in tree_listing(root / pkg, contents=True)]
    for lib in LIBRARIES:
        try:
            items.append(f"{lib}=={version(lib)}")
        except PackageNotFoundError:
            items.append(f"{lib} absent")
    return _digest(items)


def source_fingerprint(name: str) -> str | None:
    """What identifies source ``name``'s files now (None: cannot tell, rebuild)."""
    from datasets_build import sources

    root = upstream_root()
    if root is not None:
        folder = root / name
        return _digest(["local", *tree_listing(folder)]) if folder.is_dir() else None
    if sources.SETTINGS.commits.get(name):
        return None
    return _digest(["manifest", load_manifest(name).digest])


def stamp_path(out_root: Path, name: str) -> Path:
    return out_root / STAMP_DIR / f"{name}.json"


def write_stamp(out_root: Path, name: str, source_names: Iterable[str], code: str) -> None:
    """Record what dataset ``name`` was just built from (called after its folder is in place); a builder that read
    no source through ``source_dir`` gets no stamp (nothing to compare: it is always built)."""
    if not set(source_names):
        return
    stamp = {
        "sources": {s: source_fingerprint(s) for s in sorted(set(source_names))},
        "code": code,
        "output": _digest(tree_listing(out_root / name)),
    }
    atomic.write_text(stamp_path(out_root, name), json.dumps(stamp, indent=1))


def unchanged(out_root: Path, name: str, code: str) -> bool:
    """True when dataset ``name`` is built and its stamp matches its inputs and its folder now."""
    path, folder = stamp_path(out_root, name), out_root / name
    if not path.is_file() or not folder.is_dir():
        return False
    try:
        stamp = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(stamp, dict) or stamp.get("code") != code or stamp.get("output") != _digest(tree_listing(folder)):
        return False
    recorded = stamp.get("sources")
    if not isinstance(recorded, dict) or not recorded:
        return False
    return all(fp is not None and source_fingerprint(s) == fp for s, fp in recorded.items())
