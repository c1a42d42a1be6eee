"""lm-eval's index of its own task folder (~14,000 YAML files, ~30 s idle), read once per test process.

lm-eval re-reads every YAML file for each ``TaskManager`` it builds: ``triangulate eval`` run in-process, the
suite's plan and serve checks, the re-scorer and the tests' own managers each pay it again. Within one pytest
process lm-eval's installed task folder does not change, so :func:`share_builtin_index` makes
``TaskIndex.build`` read that folder once and hand each later manager copies of its entries (lm-eval's
factory deep-copies an entry's config before it changes it; nothing changes an entry after the build); every other
folder (ours, a test's temporary one) is indexed afresh each time, and later folders override earlier ones as
lm-eval merges them. Nothing outside the tests is patched: subprocesses build their own index as users' do.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_BUILTIN: dict[bool, dict[str, Any]] = {}


def share_builtin_index() -> None:
    """Patch lm-eval's ``TaskIndex.build`` in this process (once; a no-op when already patched)."""
    from lm_eval.tasks import _index

    original = _index.TaskIndex.build
    if getattr(original, "shares_builtin_index", False):
        return
    builtin = Path(_index.__file__).resolve().parent
    log = logging.getLogger(_index.__name__)

    def build(paths: Iterable[Path], *, resolve_includes: bool = True) -> dict[str, Any]:
        index: dict[str, Any] = {}
        for root in paths:
            if Path(root).resolve() == builtin:
                if resolve_includes not in _BUILTIN:
                    _BUILTIN[resolve_includes] = original([root], resolve_includes=resolve_includes)
                part = {name: _copy(entry) for name, entry in _BUILTIN[resolve_includes].items()}
            else:
                part = original([root], resolve_includes=resolve_includes)
            for name, entry in part.items():
                if name in index:  # lm-eval's own warning for a later folder's task of the same name
                    log.warning("Task '%s' from %s overrides existing task from %s", name, entry.yaml_path, index[name].yaml_path)
                index[name] = entry
        return index

    build.shares_builtin_index = True  # type: ignore[attr-defined]
    _index.TaskIndex.build = staticmethod(build)


def _copy(entry: Any) -> Any:
    """An index entry of its own: its tag set and the top level of its config copied."""
    return dataclasses.replace(entry, tags=set(entry.tags), cfg=dict(entry.cfg) if entry.cfg is not None else None)
