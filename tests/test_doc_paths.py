"""Every repository path a README or ``docs/`` page names in backticks exists, so the maps stay true.

Checked, in the top ``README.md``, every ``README.md`` of the project's folders (test data aside) and ``docs/*.md``:

- a backticked path whose first component is a top-level entry of the repository (``multiturn/...``,
  ``tests/...``) or a folder beside the README (``engine/record.py`` in ``multiturn/README.md``);
- every backticked file or folder in the first column of a table (the module tables), read from the
  README's folder;
- a backticked dotted module of the project (``models.chance``, ``plumbing.run_folder.latest_results``):
  the module must exist, and a trailing name must occur in it.

``{a,b}`` is expanded, ``*`` and ``<placeholder>`` match any name (at least one file must match). Other
backticked names (upstream files, output files such as ``scores.csv``) are not repository paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("plumbing", "custom_metrics", "datasets_build", "models", "lm_eval_tasks", "multiturn", "triangulation")
TOP_LEVEL = {*PACKAGES, "tests", "suites", "benchmarks", "docs", ".ci"}  # what a root-relative path starts with
SUFFIXES = (".py", ".md", ".yaml", ".yml", ".toml", ".json", ".txt")  # not outputs such as .csv, .png
BACKTICKED = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(rf"^(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+")


def doc_files() -> list[Path]:
    """The top README, every README of the project's folders (not those of test data) and the docs pages."""
    folders = [REPO / name for name in (*PACKAGES, "suites", "benchmarks")]
    readmes = [p for folder in folders for p in folder.rglob("README.md")]
    return sorted([REPO / "README.md", *readmes, *(REPO / "docs").glob("*.md")])


def expand_braces(text: str) -> list[str]:
    """``a/{b,c}.py`` -> ``a/b.py``, ``a/c.py`` (nested braces are not used in the docs)."""
    match = re.search(r"\{([^{}]*)\}", text)
    if not match:
        return [text]
    head, tail = text[: match.start()], text[match.end() :]
    return [out for alt in match.group(1).split(",") for out in expand_braces(head + alt + tail)]


def exists(base: Path, rel: str) -> bool:
    """Whether ``rel`` (placeholders and ``*`` allowed) names at least one file or folder under ``base``."""
    pattern = re.sub(r"<[^<>]*>", "*", rel).rstrip("/")
    if "*" in pattern:
        return any(base.glob(pattern))
    return (base / pattern).exists()


def is_path(token: str) -> bool:
    outside = token.startswith(("../", "/", "~", "$"))  # the shared folder, machine paths
    return not outside and " " not in token and "://" not in token and token.endswith(("/", *SUFFIXES))


def first_cells(text: str) -> set[str]:
    """Backticked tokens of the first column of every Markdown table (header and rule rows aside)."""
    cells = set()
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|\s*:?-", line):
            cells.update(BACKTICKED.findall(line.split("|")[1]))
    return cells


def path_problems(doc: Path) -> Iterator[str]:
    """One line per backticked repository path of ``doc`` that does not exist."""
    text = doc.read_text(encoding="utf-8")
    here = doc.parent
    in_table = first_cells(text)
    for token in sorted(set(BACKTICKED.findall(text))):
        if not is_path(token):
            continue
        for rel in expand_braces(token):
            head = rel.split("/", 1)[0]
            if "/" in rel and head in TOP_LEVEL and not exists(REPO, rel):
                yield f"{token}: no {rel} in the repository"
            elif "/" in rel and head not in TOP_LEVEL and (here / head).is_dir() and not exists(here, rel):
                yield f"{token}: no {rel} beside the README"
            elif token in in_table and head not in TOP_LEVEL and not exists(here, rel):
                yield f"{token} (table row): no {rel} beside the README"


def module_problems(doc: Path) -> Iterator[str]:
    """One line per backticked dotted module (or module attribute) of the project that does not exist."""
    for token in sorted(set(BACKTICKED.findall(doc.read_text(encoding="utf-8")))):
        match = DOTTED.match(token)
        if not match:
            continue
        parts = match.group(0).split(".")
        for size in range(len(parts), 0, -1):
            file = REPO.joinpath(*parts[:size])
            source = file / "__init__.py" if file.is_dir() else file.with_suffix(".py")
            if source.exists():
                break
        else:
            yield f"{token}: no module {parts[0]}"
            continue
        rest = parts[size:]
        if len(rest) > 2:
            yield f"{token}: no module {'.'.join(parts[: size + 1])}"
        elif rest and not re.search(rf"\b{re.escape(rest[0])}\b", source.read_text(encoding="utf-8")):
            yield f"{token}: {source.relative_to(REPO)} has no {rest[0]}"


DOCS = doc_files()


def test_the_docs_are_found():
    names = {str(p.relative_to(REPO)) for p in DOCS}
    assert {"README.md", "docs/ARCHITECTURE.md", "multiturn/README.md", "triangulation/README.md"} <= names


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_named_path_exists(doc: Path):
    problems = [*path_problems(doc), *module_problems(doc)]
    assert not problems, f"{doc.relative_to(REPO)} names what is not there:\n" + "\n".join(problems)


def test_a_stale_name_is_caught(tmp_path: Path):
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "record.py").write_text("x = 1\n")
    doc = tmp_path / "README.md"
    doc.write_text(
        "| module | what |\n|---|---|\n| `engine.py` | gone |\n| `engine/record.py` | here |\n"
        "See `engine/scheduler.py`, `plumbing/nowhere.py`, `multiturn.nowhere` and `plumbing.errors.UserError`.\n",
        encoding="utf-8",
    )
    found = [*path_problems(doc), *module_problems(doc)]
    assert len(found) == 4, found
    assert any("engine.py (table row)" in f for f in found)
    assert any("engine/scheduler.py" in f for f in found)
    assert any("plumbing/nowhere.py" in f for f in found)
    assert any("multiturn.nowhere" in f for f in found)
