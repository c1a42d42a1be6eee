"""lm-eval's task index kept between processes: lm-eval parses every task YAML of its tree (14,683 in 0.4.13)
each time a ``TaskManager`` is made, 6.7-9.5 s on a 2-core machine, paid by every eval cell of a suite and every
requeued SLURM leg. :func:`install_index_cache` makes every ``TaskManager`` of the process keep the index it
builds and read it back (about 0.8 s; ``benchmarks/README.md``, "lm-eval's task index") while nothing it was
built from changed."""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import lm_eval
from lm_eval.tasks import _index as lm_index
from lm_eval.tasks import manager as lm_manager

from plumbing import atomic
from plumbing.paths import cache_root


class CachedTaskIndex(lm_index.TaskIndex):
    """lm-eval's ``TaskIndex``, its built index kept in ``$TRIANGULATE_CACHE/lm_eval_index/``. lm-eval itself
    rebuilds it whenever its key changes: lm-eval's and Python's versions, the folders indexed, and the path,
    size and modification time of every YAML file under them (a task added, removed or edited in place)."""

    @staticmethod
    def build(paths: Iterable[Path], *, resolve_includes: bool = True) -> dict[str, Any]:
        roots = [Path(p) for p in paths]
        file = _index_file(roots, resolve_includes)
        with contextlib.suppress(OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
            # our own cache file (written below, atomically); a broken or foreign one is rebuilt
            return pickle.loads(file.read_bytes())
        index = lm_index.TaskIndex.build(roots, resolve_includes=resolve_includes)
        with contextlib.suppress(OSError):  # a read-only cache folder: the index is simply not kept
            for old in file.parent.glob(file.name.split("-")[0] + "-*.pickle"):
                old.unlink(missing_ok=True)
            atomic.write_bytes(file, pickle.dumps(index, protocol=pickle.HIGHEST_PROTOCOL))
        return index


def install_index_cache() -> None:
    """Every lm-eval ``TaskManager`` made in this process keeps its index with :class:`CachedTaskIndex`."""
    lm_manager.TaskIndex = CachedTaskIndex  # type: ignore[misc]


def _index_file(roots: list[Path], resolve_includes: bool) -> Path:
    """``<cache>/lm_eval_index/<folders>-<their files>.pickle``: one kept index per list of folders."""
    where = hashlib.sha256(repr((lm_eval.__version__, sys.version, [str(r.resolve()) for r in roots], resolve_includes)).encode())
    files = hashlib.sha256()
    for root in roots:
        for stat in sorted(_yaml_stats(root)):
            files.update(repr(stat).encode())
    return cache_root() / "lm_eval_index" / f"{where.hexdigest()[:16]}-{files.hexdigest()[:16]}.pickle"


def _yaml_stats(folder: Path) -> Iterator[tuple[str, int, int]]:
    """(path, size, mtime in ns) of every YAML file lm-eval's index reads under ``folder``."""
    with contextlib.suppress(OSError):
        for item in os.scandir(folder):
            if item.is_dir() and item.name not in lm_index._IGNORE_DIRS:
                yield from _yaml_stats(Path(item.path))
            elif item.name.endswith(".yaml") and item.is_file():
                stat = item.stat()
                yield item.path, stat.st_size, stat.st_mtime_ns
