"""Pinned upstream files: one manifest per source in ``datasets_build/manifests/<name>.toml``.

A manifest lists, for every upstream file the builders read, the repository and commit it comes from,
its path there, its size and the SHA-256 of its bytes. Content hashes do not depend on how a code host
packs an archive, so the download path (:mod:`datasets_build.sources`) fetches single files in the
raw-file layout ``<base>/<owner>/<repo>/<commit>/<path>`` and checks each one against its entry.

Layout of a manifest (written by ``python -m datasets_build.manifest_tool``, never by hand)::

    name = "nback"
    absent = []                        # files of the pinned commit with no verified copy (not fetched)
    [[groups]]
    repo = "Daniel-Gong/ChatGPT-WM"    # owner/name on the code host
    commit = "1c1467b9..."
    local = "ChatGPT-WM/"              # folder of these files in the source folder (TRIANGULATE_UPSTREAM layout)
    remote = ""                        # the same folder in the repository
    files = [ { path = "datasets/letters/1back/0.txt", size = 50, sha256 = "..." }, ... ]
"""

from __future__ import annotations

import hashlib
import urllib.parse
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import tomllib

from plumbing.errors import UserError

MANIFEST_DIR = Path(__file__).resolve().parent / "manifests"
#: files of a local upstream folder that describe the copy (written by whoever made it), not upstream data
METADATA_FILES = ("SOURCE", "MISSING.txt")


@dataclass(frozen=True)
class ManifestEntry:
    """One upstream file: where it sits locally, where it lives upstream, and what its bytes hash to."""

    source: str
    path: str  # relative to the source folder
    repo: str  # owner/name
    commit: str
    remote_path: str  # relative to the repository root
    size: int
    sha256: str

    def url(self, base_url: str, commit: str | None = None) -> str:
        """The raw-file URL ``<base>/<owner>/<repo>/<commit>/<path>`` (path percent-encoded)."""
        quoted = urllib.parse.quote(self.remote_path, safe="/")
        return f"{base_url.rstrip('/')}/{self.repo}/{commit or self.commit}/{quoted}"


@dataclass(frozen=True)
class Manifest:
    name: str
    files: tuple[ManifestEntry, ...]
    absent: tuple[str, ...]
    digest: str  # SHA-256 of the manifest text: names the cache folder of this exact pin set

    @property
    def repos(self) -> list[tuple[str, str]]:
        """(repo, commit) pairs in manifest order, without repeats."""
        return list(dict.fromkeys((f.repo, f.commit) for f in self.files))

    def by_path(self) -> dict[str, ManifestEntry]:
        return {f.path: f for f in self.files}


def manifest_names() -> list[str]:
    return sorted(p.stem for p in MANIFEST_DIR.glob("*.toml"))


def manifest_path(name: str) -> Path:
    return MANIFEST_DIR / f"{name}.toml"


@cache
def load_manifest(name: str) -> Manifest:
    """The manifest of upstream source ``name``; an unknown name is one line listing the known ones."""
    path = manifest_path(name)
    if not path.is_file():
        raise UserError(
            f"no manifest for upstream source '{name}' (known: {', '.join(manifest_names())}); set TRIANGULATE_UPSTREAM to a folder holding '{name}/'"
        )
    text = path.read_text(encoding="utf-8")
    return parse_manifest(text, str(path))


def parse_manifest(text: str, where: str = "manifest") -> Manifest:
    try:
        data = tomllib.loads(text)
        files = tuple(
            ManifestEntry(
                source=data["name"],
                path=group["local"] + entry["path"],
                repo=group["repo"],
                commit=group["commit"],
                remote_path=group["remote"] + entry["path"],
                size=int(entry["size"]),
                sha256=entry["sha256"],
            )
            for group in data["groups"]
            for entry in group["files"]
        )
        return Manifest(data["name"], files, tuple(data.get("absent", ())), hashlib.sha256(text.encode("utf-8")).hexdigest())
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{where}: not a valid source manifest ({exc})") from exc


def pinned_repo(name: str) -> tuple[str, str]:
    """(owner/name, commit) of the first repository of source ``name`` (for dataset cards)."""
    return load_manifest(name).repos[0]


def pinned_source_line(name: str) -> str:
    repo, commit = pinned_repo(name)
    return f"https://github.com/{repo} at commit `{commit}`."
