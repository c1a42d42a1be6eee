"""``triangulate data fasttext en zh ...``: the official fastText Common Crawl vectors ``cc.<lang>.300.bin``.

Each language is downloaded as ``cc.<lang>.300.bin.gz`` from the fastText site (or ``--base-url``) into
the target folder (``--out``, else ``$TRIANGULATE_FASTTEXT_DIR``, else ``$TRIANGULATE_CACHE/fasttext``)
with a progress bar; an interrupted download resumes from its ``.part`` file, then the archive is
unpacked to ``cc.<lang>.300.bin`` (atomically) and removed. A language whose ``.bin`` exists is skipped.
Each model takes about 7 GB of disk (plus 4.5 GB for the archive while unpacking) and about 7 GB of
memory when the topic metrics load it.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

from datasets_build.sources import fetch_url
from plumbing import atomic
from plumbing.errors import UserError
from plumbing.paths import cache_root, fasttext_dir

DEFAULT_BASE_URL = "https://dl.fbaipublicfiles.com/fasttext/vectors-crawl"
_LANG = re.compile(r"^[a-z]{2,3}$")


def target_dir(out: Path | None = None) -> Path:
    return (out or fasttext_dir() or cache_root() / "fasttext").expanduser().resolve()


def download_vectors(lang: str, folder: Path, base_url: str = DEFAULT_BASE_URL) -> Path:
    """``folder/cc.<lang>.300.bin``, downloaded and unpacked unless already there."""
    if not _LANG.match(lang):
        raise UserError(f"'{lang}' is not a fastText language code (two or three lower-case letters, e.g. en, zh)")
    final = folder / f"cc.{lang}.300.bin"
    if final.is_file():
        return final
    archive = fetch_url(f"{base_url.rstrip('/')}/cc.{lang}.300.bin.gz", folder / f"cc.{lang}.300.bin.gz")
    part = atomic.part_path(final)
    try:
        with gzip.open(archive, "rb") as src, part.open("wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    except (OSError, EOFError) as exc:
        part.unlink(missing_ok=True)
        archive.unlink(missing_ok=True)
        raise UserError(f"{archive}: not a complete gzip archive ({exc}); removed it, run the command again") from exc
    atomic.promote(part, final)
    archive.unlink()
    return final
