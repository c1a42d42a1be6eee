"""Strict readers for upstream CSV / XLSX / JSON files: every problem becomes one UserError naming file and row."""

from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from pathlib import Path

from plumbing.errors import UserError


def source_error(path: Path, row: int | str | None, problem: str) -> UserError:
    """One-line error ``<file>: row <n>: <problem>`` (row counted from 1 = header for CSVs)."""
    where = f"{path}" if row is None else f"{path}: row {row}"
    return UserError(f"bad source {where}: {problem}")


def require_file(path: Path) -> Path:
    if not path.is_file():
        raise source_error(path, None, "file is missing (check TRIANGULATE_UPSTREAM or re-download the sources)")
    return path


def read_csv_rows(
    path: Path, expected_header: Sequence[str] | None = None, required: Sequence[str] = ()
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(row_number, {column: value})`` for each data row (header = row 1, first data row = row 2).

    ``expected_header`` demands that exact header; ``required`` demands those columns among others.
    Rows with a different number of fields than the header are errors.
    """
    require_file(path)
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None:
                raise source_error(path, 1, "empty file (no header)")
            if expected_header is not None and list(header) != list(expected_header):
                raise source_error(path, 1, f"wrong columns {header!r}; expected {list(expected_header)!r}")
            missing = [c for c in required if c not in header]
            if missing:
                raise source_error(path, 1, f"missing columns {missing!r} (found {header!r})")
            for number, fields in enumerate(reader, start=2):
                if len(fields) != len(header):
                    raise source_error(path, number, f"{len(fields)} fields, header has {len(header)}")
                yield number, dict(zip(header, fields))
    except UnicodeDecodeError as exc:
        raise source_error(path, None, f"not UTF-8 text ({exc.reason})") from exc
    except csv.Error as exc:
        raise source_error(path, None, f"malformed CSV ({exc})") from exc


def read_xlsx_rows(path: Path, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """Rows of the first sheet as ``(row_number, {column: text})`` (header = row 1); empty cells -> ""."""
    import openpyxl

    require_file(path)
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for corrupt files
        raise source_error(path, None, f"cannot read spreadsheet ({type(exc).__name__}: {exc})") from exc
    try:
        rows = list(book.worksheets[0].iter_rows(values_only=True))
    finally:
        book.close()
    if not rows:
        raise source_error(path, 1, "empty sheet (no header)")
    header = [("" if c is None else str(c)).strip() for c in rows[0]]
    missing = [c for c in required if c not in header]
    if missing:
        raise source_error(path, 1, f"missing columns {missing!r} (found {header!r})")
    out = []
    for number, values in enumerate(rows[1:], start=2):
        if all(v is None or str(v).strip() == "" for v in values):
            continue
        record = {}
        for name, value in zip(header, values):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            record[name] = "" if value is None else str(value)
        out.append((number, record))
    return out


def parse_int(path: Path, row: int, column: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise source_error(path, row, f"column {column!r} is {text!r}, expected an integer") from None


def parse_float(path: Path, row: int, column: str, text: str) -> float | None:
    """A float, or None for an empty cell / NaN."""
    text = text.strip()
    if text == "" or text.lower() == "nan":
        return None
    try:
        return float(text)
    except ValueError:
        raise source_error(path, row, f"column {column!r} is {text!r}, expected a number") from None
