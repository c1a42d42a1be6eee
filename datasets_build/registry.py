"""Dataset builders by name; ``triangulate data build`` runs them all (or those named).

A builder is ``fn(out_dir: Path) -> dict`` that writes one Hub-ready folder into ``out_dir`` (a
temporary folder the caller renames into place) and returns a summary ``{"configs": n, "rows": n}``.
Builders register from their modules, listed in ``BUILDER_MODULES``; a listed module that fails
to import is an error (:class:`plumbing.registry.Registry`).

Adding a dataset::

    # datasets_build/mydata.py, then add "datasets_build.mydata" to BUILDER_MODULES
    from datasets_build.registry import register_builder
    from datasets_build.sources import source_dir

    @register_builder("mydata")
    def build(out_dir: Path) -> dict:
        rows = read_rows(source_dir("mydata"))          # upstream files, verified
        write_hub_folder(out_dir, {"default": {"test": rows}}, card=CARD)
        return {"configs": 1, "rows": len(rows)}
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from plumbing.registry import Registry

Builder = Callable[[Path], dict]

BUILDER_MODULES: tuple[str, ...] = (
    "datasets_build.globalgroup",
    "datasets_build.connections",
    "datasets_build.clembench",
    "datasets_build.nback",
    "datasets_build.splat",
    "datasets_build.lm_pragmatics",
)

BUILDERS: Registry[Builder] = Registry("dataset", BUILDER_MODULES)


def register_builder(name: str) -> Callable[[Builder], Builder]:
    return BUILDERS.register(name)


def builders() -> dict[str, Builder]:
    return BUILDERS.items()
