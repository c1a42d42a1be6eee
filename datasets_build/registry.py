"""Dataset builders by name; ``triangulate data build`` runs them all (or those named).

A builder is ``fn(out_dir: Path) -> dict`` that writes one Hub-ready folder into ``out_dir`` (a
temporary folder the caller renames into place) and returns a summary ``{"configs": n, "rows": n}``.
Builders register from their modules, listed in ``BUILDER_MODULES``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

Builder = Callable[[Path], dict]

BUILDER_MODULES: tuple[str, ...] = (
    "datasets_build.globalgroup",
    "datasets_build.connections",
    "datasets_build.clembench",
    "datasets_build.splat",
    "datasets_build.nback",
)

_BUILDERS: dict[str, Builder] = {}


def register_builder(name: str):
    def wrap(fn: Builder) -> Builder:
        _BUILDERS[name] = fn
        return fn

    return wrap


def import_present(module_names: tuple[str, ...]) -> None:
    """Import each module so it registers itself; a module not written yet is skipped, other errors raise."""
    for module_name in module_names:
        try:
            importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise


def builders() -> dict[str, Builder]:
    import_present(BUILDER_MODULES)
    return dict(_BUILDERS)
