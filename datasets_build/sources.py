"""Where a builder's upstream files come from: ``$TRIANGULATE_UPSTREAM/<name>/`` or a pinned, verified download.

Without ``$TRIANGULATE_UPSTREAM`` the upstream repository is fetched as a GitHub archive at the pinned
commit (``<base>/<owner>/<repo>/tar.gz/<commit>``, base ``https://codeload.github.com`` or
``$TRIANGULATE_SOURCE_URL``), its SHA-256 is checked against the value recorded here, and it is
unpacked into a cache folder (``$TRIANGULATE_CACHE`` or ``~/.cache/triangulate/sources``).

The checksums of the real archives could not be computed when this was written (GitHub was not
reachable), so they are recorded as ``None`` and such archives are refused unless the user passes
``--allow-unverified`` (the computed SHA-256 is then printed so it can be recorded).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from datasets_build.hub import atomic_dir
from plumbing.errors import UserError
from plumbing.paths import cache_root as plumbing_cache_root
from plumbing.paths import upstream_dir, upstream_root

DEFAULT_BASE_URL = "https://codeload.github.com"
DEFAULT_RAW_URL = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class PinnedSource:
    """An upstream repository at one commit, with the SHA-256 of its GitHub tar.gz archive (None: unknown)."""

    owner: str
    repo: str
    commit: str
    sha256: str | None
    note: str = ""

    def url(self, base_url: str) -> str:
        return f"{base_url.rstrip('/')}/{self.owner}/{self.repo}/tar.gz/{self.commit}"


_UNKNOWN = "archive checksum not recorded: GitHub was unreachable when the pin was written; verify once and record it here"

PINNED: dict[str, PinnedSource] = {
    "globalgroup": PinnedSource("cgsol", "globalgroup", "1fb1f4ff5dea64afe26e52bc61119bfa53b94f03", None, _UNKNOWN),
    "connections": PinnedSource("mustafamariam", "LLM-Connections-Solver", "ebde95d6a8ac2bca288f77dde49c74e9ed4cbea9", None, _UNKNOWN),
    "splat": PinnedSource("chenqi008", "LateralThinking", "723b01bb0c4f1600c851b40267e0f3a528c12275", None, _UNKNOWN),
    "lm_pragmatics": PinnedSource("jennhu", "lm-pragmatics", "9fd4be5c0e43162c9d6e09b6024cc000e40b3398", None, _UNKNOWN),
}


@dataclass(frozen=True)
class PinnedFile:
    """One file of an upstream repository at one commit, verified by its git blob id (``git hash-object``)
    and/or its SHA-256; used for files too large for the archive snapshot (e.g. NATURAL PLAN's JSONs)."""

    owner: str
    repo: str
    commit: str
    path: str
    git_blob: str | None
    sha256: str | None = None

    def url(self, base_url: str) -> str:
        return f"{base_url.rstrip('/')}/{self.owner}/{self.repo}/{self.commit}/{self.path}"


@dataclass
class SourceSettings:
    """Process-wide options of the download path (set by ``triangulate data build`` flags)."""

    allow_unverified: bool = False
    base_url: str | None = None
    cache_dir: Path | None = None


SETTINGS = SourceSettings()


def configure(allow_unverified: bool | None = None, base_url: str | None = None, cache_dir: Path | None = None) -> None:
    if allow_unverified is not None:
        SETTINGS.allow_unverified = allow_unverified
    if base_url is not None:
        SETTINGS.base_url = base_url
    if cache_dir is not None:
        SETTINGS.cache_dir = Path(cache_dir)


def cache_root() -> Path:
    if SETTINGS.cache_dir is not None:
        return SETTINGS.cache_dir
    return plumbing_cache_root() / "sources"


def base_url() -> str:
    return SETTINGS.base_url or os.environ.get("TRIANGULATE_SOURCE_URL") or DEFAULT_BASE_URL


def raw_base_url() -> str:
    """Base of single-file downloads: ``--source-url`` / ``$TRIANGULATE_SOURCE_URL`` or raw.githubusercontent.com."""
    return SETTINGS.base_url or os.environ.get("TRIANGULATE_SOURCE_URL") or DEFAULT_RAW_URL


def source_dir(name: str) -> Path:
    """The folder holding upstream ``name``'s files (repository layout): local if configured, else downloaded."""
    if upstream_root() is not None:
        return upstream_dir(name)
    if name not in PINNED:
        raise UserError(f"no pinned download for upstream '{name}': set TRIANGULATE_UPSTREAM to a folder holding '{name}/'")
    return fetch(PINNED[name], cache_root() / f"{name}-{PINNED[name].commit[:12]}")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(url: str, target: Path) -> None:
    """Copy ``url`` (http(s) or file://) to ``target``; network problems become one UserError."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response, target.open("wb") as out:
            shutil.copyfileobj(response, out)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise UserError(
            f"cannot download {url} ({exc}); set TRIANGULATE_UPSTREAM to a local copy or TRIANGULATE_SOURCE_URL to a mirror"
        ) from exc


def extract_archive(archive: Path, dest: Path) -> None:
    """Unpack a GitHub tar.gz into ``dest``, dropping its single top-level folder; unsafe members are refused."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()
            tops = {m.name.split("/", 1)[0] for m in members}
            if len(tops) != 1:
                raise UserError(f"{archive}: expected one top-level folder in the archive, found {sorted(tops)[:5]}")
            top = tops.pop()
            for member in members:
                if member.name == top:
                    continue
                member.name = member.name.split("/", 1)[1]
                if member.issym() or member.islnk() or member.name.startswith("/") or ".." in Path(member.name).parts:
                    raise UserError(f"{archive}: unsafe archive member {member.name!r}")
                if member.isdir() or member.isfile():
                    tar.extract(member, dest, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise UserError(f"{archive}: not a readable tar.gz archive ({exc})") from exc


def fetch(pin: PinnedSource, dest: Path, url: str | None = None) -> Path:
    """Download, verify and unpack ``pin`` into ``dest`` (cached: an existing complete ``dest`` is reused)."""
    marker = dest / ".triangulate-source"
    if marker.is_file():
        return dest
    url = url or pin.url(base_url())
    dest.parent.mkdir(parents=True, exist_ok=True)
    archive = dest.parent / f".{dest.name}.tar.gz.part"
    try:
        download(url, archive)
        actual = sha256_file(archive)
        if pin.sha256 is None:
            if not SETTINGS.allow_unverified:
                raise UserError(
                    f"refusing unverified archive {url}: no SHA-256 is recorded for {pin.owner}/{pin.repo}@{pin.commit[:12]} "
                    f"(its SHA-256 is {actual}); pass --allow-unverified to use it, or set TRIANGULATE_UPSTREAM"
                )
            print(f"warning: using unverified archive {url} (sha256 {actual})", file=sys.stderr)
        elif actual != pin.sha256:
            raise UserError(f"checksum mismatch for {url}: expected sha256 {pin.sha256}, got {actual}")
        with atomic_dir(dest) as tmp:
            extract_archive(archive, tmp)
            (tmp / ".triangulate-source").write_text(f"{url}\nsha256 {actual}\n", encoding="utf-8")
    finally:
        archive.unlink(missing_ok=True)
    return dest


def git_blob_id(path: Path) -> str:
    """The id ``git hash-object`` gives the file: SHA-1 of ``b"blob <size>\\0"`` followed by the bytes."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_file(pin: PinnedFile, dest: Path, url: str | None = None) -> Path:
    """Download ``pin`` to ``dest`` once (``<base>/<owner>/<repo>/<commit>/<path>``), verified by git blob id
    and/or SHA-256 before it is moved into place; a cached ``dest`` is reused without downloading."""
    if dest.is_file():
        return dest
    if pin.git_blob is None and pin.sha256 is None:
        raise UserError(f"no checksum recorded for {pin.owner}/{pin.repo}/{pin.path}: refusing an unverifiable download")
    url = url or pin.url(raw_base_url())
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.parent / f".{dest.name}.part-{os.getpid()}"
    try:
        download(url, part)
        if pin.git_blob is not None and (actual := git_blob_id(part)) != pin.git_blob:
            raise UserError(f"checksum mismatch for {url}: expected git blob {pin.git_blob}, got {actual}")
        if pin.sha256 is not None and (actual := sha256_file(part)) != pin.sha256:
            raise UserError(f"checksum mismatch for {url}: expected sha256 {pin.sha256}, got {actual}")
        part.replace(dest)
    finally:
        part.unlink(missing_ok=True)
    return dest
