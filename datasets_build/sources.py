"""Where a builder's upstream files come from: ``$TRIANGULATE_UPSTREAM/<name>/`` or pinned, verified downloads.

Without ``$TRIANGULATE_UPSTREAM`` every file of the source's manifest (:mod:`datasets_build.manifest`)
is fetched on its own in the raw-file layout ``<base>/<owner>/<repo>/<commit>/<path>`` (base
``https://raw.githubusercontent.com``, or ``--source-url`` / ``$TRIANGULATE_SOURCE_URL`` for a mirror),
checked against the size and SHA-256 recorded there, and kept in a cache folder
(``$TRIANGULATE_CACHE/sources/<name>-<manifest digest>/``, same layout as the local copy) that the next
build reuses after re-hashing every file.

- Downloads run in a small thread pool with one byte-level progress bar; each file goes to ``<file>.part``
  (a killed download resumes it with an HTTP Range request) and is renamed only after it verified.
- Network faults are retried a bounded number of times with a socket timeout; a 404, a 500 after the
  retries, or a hang is one ``UserError`` naming the URL. A file whose bytes differ from the manifest is
  one ``UserError`` naming the file, the expected and the actual hash; the bad file is removed.
- :func:`fetch_file` fetches one :class:`PinnedFile` (pinned by git blob id, for files no verified copy
  exists for, e.g. NATURAL PLAN's data) the same way, at task time.
- ``--source-commit NAME=COMMIT`` fetches the manifest's paths at a commit of the user's choice; no
  hashes exist for it, so it needs ``--allow-unverified``.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from datasets_build.manifest import Manifest, ManifestEntry, load_manifest
from datasets_build.manifest_tool import sha256_file
from plumbing import atomic
from plumbing.errors import UserError
from plumbing.paths import cache_root as plumbing_cache_root
from plumbing.paths import upstream_dir, upstream_root

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
CHUNK = 1 << 16


@dataclass
class SourceSettings:
    """Process-wide options of the download path (set by ``triangulate data build`` flags)."""

    allow_unverified: bool = False
    base_url: str | None = None
    cache_dir: Path | None = None
    timeout: float = 30.0  # seconds of socket silence before a try counts as failed
    retries: int = 3  # tries per file
    workers: int = 8
    commits: dict[str, str] = field(default_factory=dict)  # user-supplied commits (unverified)


SETTINGS = SourceSettings()


def configure(
    allow_unverified: bool | None = None,
    base_url: str | None = None,
    cache_dir: Path | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    commits: dict[str, str] | None = None,
) -> None:
    if allow_unverified is not None:
        SETTINGS.allow_unverified = allow_unverified
    if base_url is not None:
        SETTINGS.base_url = base_url
    if cache_dir is not None:
        SETTINGS.cache_dir = Path(cache_dir)
    if timeout is not None:
        SETTINGS.timeout = timeout
    if retries is not None:
        SETTINGS.retries = max(1, retries)
    if commits is not None:
        SETTINGS.commits = dict(commits)


def reset() -> None:
    """Back to the defaults, forgetting what was verified (tests)."""
    _VERIFIED.clear()
    SETTINGS.__dict__.update(SourceSettings().__dict__)


def cache_root() -> Path:
    if SETTINGS.cache_dir is not None:
        return SETTINGS.cache_dir
    return plumbing_cache_root() / "sources"


def base_url() -> str:
    return SETTINGS.base_url or os.environ.get("TRIANGULATE_SOURCE_URL") or DEFAULT_BASE_URL


def source_dir(name: str) -> Path:
    """The folder holding upstream ``name``'s files (local copy layout): local if configured, else downloaded."""
    REQUESTED.add(name)
    if upstream_root() is not None:
        return upstream_dir(name)
    manifest = load_manifest(name)
    key = (manifest.digest, str(cache_root()), base_url(), SETTINGS.commits.get(name))
    if _VERIFIED.get(name, (None,))[0] != key or not _VERIFIED[name][1].is_dir():
        _VERIFIED[name] = (key, fetch_source(manifest))
    return _VERIFIED[name][1]


#: sources asked for since the caller last cleared it (a build's inputs: :mod:`datasets_build.stamps`)
REQUESTED: set[str] = set()
#: source -> (settings key, folder): what this process already verified (builders call source_dir often)
_VERIFIED: dict[str, tuple[tuple, Path]] = {}


def fetch_source(manifest: Manifest) -> Path:
    """Every file of ``manifest`` in the cache, verified (downloading what is missing); returns the folder."""
    user_commit = SETTINGS.commits.get(manifest.name)
    if user_commit:
        return _fetch_user_commit(manifest, user_commit)
    dest = cache_root() / f"{manifest.name}-{manifest.digest[:12]}"
    missing = []
    for pinned in manifest.files:
        target = dest / pinned.path
        if target.is_file():
            check_file(target, pinned, where="cached file")
        else:
            missing.append(pinned)
    download_all([(p, p.url(base_url()), dest / p.path) for p in missing], manifest.name, verify=True)
    if manifest.absent:  # the builders read the copy's list of files no verified copy exists for
        atomic.write_text(dest / "MISSING.txt", "".join(f"absent from snapshot: {p}\n" for p in manifest.absent))
    return dest


def _fetch_user_commit(manifest: Manifest, commit: str) -> Path:
    repos = {f.repo for f in manifest.files}
    if len(repos) != 1:
        raise UserError(
            f"--source-commit {manifest.name}=...: the source spans {len(repos)} repositories; pick one pinned source with one repository"
        )
    if not SETTINGS.allow_unverified:
        raise UserError(
            f"--source-commit {manifest.name}={commit}: no SHA-256 is recorded for files at a user-supplied commit; add --allow-unverified to use them unchecked"
        )
    print(f"warning: {manifest.name} files at user-supplied commit {commit} are not verified", file=sys.stderr)
    dest = cache_root() / f"{manifest.name}-user-{commit[:12]}"
    jobs = [(p, p.url(base_url(), commit), dest / p.path) for p in manifest.files if not (dest / p.path).is_file()]
    download_all(jobs, manifest.name, verify=False)
    return dest


def check_file(path: Path, pinned: ManifestEntry, where: str) -> None:
    """Size and SHA-256 of ``path`` against its manifest entry; a mismatch removes the file and is one line."""
    size = path.stat().st_size
    actual = sha256_file(path) if size == pinned.size else f"(size {size}, expected {pinned.size})"
    if actual != pinned.sha256:
        path.unlink(missing_ok=True)
        raise UserError(
            f"{where} {pinned.source}/{pinned.path} does not match its manifest: expected sha256 {pinned.sha256}, got {actual} "
            f"({pinned.repo}@{pinned.commit[:12]}); removed it, the next build downloads it again"
        )


def download_all(jobs: list[tuple[ManifestEntry, str, Path]], name: str, verify: bool) -> None:
    """Download ``(entry, url, target)`` jobs in a thread pool with one progress bar; the first error stops the rest."""
    if not jobs:
        return
    total = sum(p.size for p, _, _ in jobs)
    lock = threading.Lock()
    cancelled = threading.Event()
    with tqdm(total=total, unit="B", unit_scale=True, desc=f"downloading {name} ({len(jobs)} files)", disable=None) as bar:

        def progress(n: int) -> None:
            with lock:
                bar.update(n)

        with ThreadPoolExecutor(max_workers=min(SETTINGS.workers, len(jobs))) as pool:
            futures = [pool.submit(download_file, p, url, target, verify, progress, cancelled) for p, url, target in jobs]
            try:
                for future in as_completed(futures):
                    future.result()
            except BaseException:
                cancelled.set()
                for future in futures:
                    future.cancel()
                raise


def _retryable(exc: Exception) -> bool:
    return not isinstance(exc, urllib.error.HTTPError) or exc.code >= 500 or exc.code in (408, 429)


def download_file(
    pinned: ManifestEntry, url: str, target: Path, verify: bool = True, progress=None, cancelled: threading.Event | None = None
) -> None:
    """One file to ``target`` via ``target.part`` (resumed with a Range request); verified, then renamed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    part = atomic.part_path(target)
    try:
        if not _retrying(url, part, progress, cancelled, max_bytes=pinned.size if verify else None):
            return
    except urllib.error.HTTPError as exc:  # 404: retrying does not help
        raise UserError(f"{pinned.source}: {pinned.repo}@{pinned.commit} has no file {pinned.remote_path} (HTTP 404 from {url})") from exc
    if verify:
        check_file(part, pinned, where="downloaded file")
    atomic.promote(part, target)


def _retrying(
    url: str,
    part: Path,
    progress,
    cancelled: threading.Event | None = None,
    hint: str = "; check --source-url / TRIANGULATE_SOURCE_URL",
    max_bytes: int | None = None,
) -> bool:
    """``_transfer`` with bounded tries; False when cancelled, a 404 re-raised, anything else one UserError."""
    last: Exception | None = None
    for attempt in range(SETTINGS.retries):
        if cancelled is not None and cancelled.is_set():
            return False
        try:
            _transfer(url, part, progress, max_bytes)
            return True
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise
            if exc.code == 416:  # the .part is complete or longer than the file: start over
                part.unlink(missing_ok=True)
            last = exc
            if not _retryable(exc):
                break
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last = exc
        if attempt + 1 < SETTINGS.retries:
            time.sleep(min(0.2 * 2**attempt, 2.0))
    raise UserError(f"cannot download {url} after {SETTINGS.retries} tries ({_reason(last)}){hint}")


def _reason(exc: Exception | None) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"{exc.reason}"
    return f"{type(exc).__name__}: {exc}" if exc else "no answer"


def _transfer(url: str, part: Path, progress, max_bytes: int | None = None) -> None:
    """Append the rest of ``url`` to ``part`` (Range from its current size; a 200 answer restarts it); a file that
    grows past ``max_bytes`` (the manifest's size) is deleted and one ``UserError`` says so (no retry)."""
    have = part.stat().st_size if part.is_file() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    with urllib.request.urlopen(request, timeout=SETTINGS.timeout) as response:
        resumed = bool(have) and response.status == 206
        with part.open("ab" if resumed else "wb") as out:
            if resumed and progress:
                progress(have)
            written = have if resumed else 0
            while chunk := response.read(CHUNK):
                written += len(chunk)
                if max_bytes is not None and written > max_bytes:
                    out.close()
                    part.unlink(missing_ok=True)
                    raise UserError(
                        f"{url} sends more than the {max_bytes} bytes recorded for it in the manifest; stopped "
                        "(a wrong or broken mirror? check --source-url / TRIANGULATE_SOURCE_URL)"
                    )
                out.write(chunk)
                if progress:
                    progress(len(chunk))


def fetch_url(url: str, target: Path) -> Path:
    """Download one unpinned file (e.g. fastText vectors) to ``target`` via a resumable ``.part``; kept if present."""
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    part = atomic.part_path(target)
    with tqdm(unit="B", unit_scale=True, desc=f"downloading {target.name}", disable=None) as bar:
        try:
            _retrying(url, part, bar.update, hint=f"; run the command again to resume {part.name}")
        except urllib.error.HTTPError as exc:
            raise UserError(f"cannot download {url} (HTTP 404 Not Found)") from exc
    atomic.promote(part, target)
    return target


@dataclass(frozen=True)
class PinnedFile:
    """One file of an upstream repository at one commit that no verified copy exists for here, pinned by its
    git blob id (``git hash-object``, as the code host's tree lists it) and/or its SHA-256; fetched at task
    time (e.g. NATURAL PLAN's JSONs, too large for the snapshot the manifests were computed from)."""

    owner: str
    repo: str
    commit: str
    path: str
    git_blob: str | None
    sha256: str | None = None

    def url(self, base_url: str) -> str:
        return f"{base_url.rstrip('/')}/{self.owner}/{self.repo}/{self.commit}/{self.path}"


def git_blob_id(path: Path) -> str:
    """The id ``git hash-object`` gives the file: SHA-1 of ``b"blob <size>\\0"`` followed by the bytes."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_file(pin: PinnedFile, dest: Path, url: str | None = None) -> Path:
    """Download ``pin`` to ``dest`` once (``<base>/<owner>/<repo>/<commit>/<path>``, resumable, retried), verified
    by git blob id and/or SHA-256 before it is moved into place; a cached ``dest`` is reused without downloading."""
    if dest.is_file():
        return dest
    if pin.git_blob is None and pin.sha256 is None:
        raise UserError(f"no checksum recorded for {pin.owner}/{pin.repo}/{pin.path}: refusing an unverifiable download")
    url = url or pin.url(base_url())
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = atomic.part_path(dest)
    with tqdm(unit="B", unit_scale=True, desc=f"downloading {dest.name}", disable=None) as bar:
        try:
            _retrying(url, part, bar.update)
        except urllib.error.HTTPError as exc:
            raise UserError(f"{pin.owner}/{pin.repo}@{pin.commit} has no file {pin.path} (HTTP 404 from {url})") from exc
    for kind, expected, actual in (("git blob", pin.git_blob, git_blob_id), ("sha256", pin.sha256, sha256_file)):
        if expected is not None and (found := actual(part)) != expected:
            part.unlink(missing_ok=True)
            raise UserError(f"checksum mismatch for {url}: expected {kind} {expected}, got {found}")
    atomic.promote(part, dest)
    return dest
