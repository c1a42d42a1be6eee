"""Score tables from elsewhere (one model per row), read as ``LABEL/<benchmark>`` columns.

Three shapes are recognised:

- clembench-runs ``results.csv``: columns ``"<game>, <metric>"`` (``"-, clemscore"``, ``"all, Average %
  Played"``, ``"taboo, Quality Score"`` ...); a row key ``<model>-t0.0--<model>-t0.0`` is the model
  ``<model>``. Benchmarks: ``clemscore``, ``played``, ``quality``, ``<game>/played``, ``<game>/quality``
  (standard deviations are dropped).
- an Open LLM Leaderboard export (the ``open-llm-leaderboard/contents`` table as CSV or parquet): the
  model is ``fullname`` (else ``eval_name``), benchmarks are its score columns; the same shape written by
  ``triangulate report`` (``leaderboard.csv``/``.parquet``) adds ``<benchmark>`` (normalised) and ``<benchmark>/raw``.
- a plain wide CSV: first column the model, every numeric column a benchmark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from plumbing.csvio import unescape_frame
from plumbing.errors import UserError

CLEM_ROW = re.compile(r"^(?P<a>.+?)-t[\d.]+--(?P<b>.+?)-t[\d.]+$")
#: Open LLM Leaderboard score columns (v2 and v1) -> benchmark names.
LEADERBOARD_SCORES = {
    "Average ⬆️": "average",
    "IFEval": "ifeval",
    "BBH": "bbh",
    "MATH Lvl 5": "math_lvl5",
    "GPQA": "gpqa",
    "MUSR": "musr",
    "MMLU-PRO": "mmlu_pro",
    "ARC": "arc",
    "HellaSwag": "hellaswag",
    "MMLU": "mmlu",
    "TruthfulQA": "truthfulqa",
    "Winogrande": "winogrande",
    "GSM8K": "gsm8k",
}
GENERIC_STEMS = {"results", "scores", "export", "data", "table", "contents", "leaderboard"}


@dataclass
class External:
    label: str
    kind: str  # "clembench" | "leaderboard" | "wide"
    table: pd.DataFrame  # model x "<label>/<benchmark>"
    path: Path


def parse_spec(spec: str) -> tuple[str | None, Path]:
    """``[LABEL=]FILE`` -> (label or None, path)."""
    label, sep, rest = spec.partition("=")
    if sep and label and "/" not in label and not Path(spec).exists():
        return label, Path(rest)
    return None, Path(spec)


def default_label(path: Path) -> str:
    """The file stem, or its folder's name for generic stems (``v1.6/results.csv`` -> ``v1.6``)."""
    return path.parent.name if path.stem.lower() in GENERIC_STEMS and path.parent.name else path.stem


def clem_model(row_key: str) -> str:
    """``<model>-t0.0--<model>-t0.0`` -> ``<model>``; a pairing of two models keeps ``a--b``."""
    m = CLEM_ROW.match(str(row_key).strip())
    if not m:
        return str(row_key).strip()
    return m["a"] if m["a"] == m["b"] else f"{m['a']}--{m['b']}"


def _read_frame(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise UserError(f"external table {path} does not exist")
    try:
        if path.suffix.lower() == ".parquet":
            return pd.read_parquet(path)
        if path.suffix.lower() in (".xlsx", ".xls"):
            return pd.read_excel(path)
        frame = pd.read_csv(path, sep=None, engine="python") if path.suffix.lower() == ".tsv" else pd.read_csv(path)
        return unescape_frame(frame)  # a CSV we wrote quotes formula-like cells (plumbing.csvio)
    except Exception as exc:  # pandas raises many types for malformed input
        raise UserError(
            f"cannot read external table {path}: {exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ) from None


def detect_kind(frame: pd.DataFrame) -> str:
    cols = [str(c) for c in frame.columns]
    if any(c.strip() == "-, clemscore" for c in cols):
        return "clembench"
    if "fullname" in cols or "eval_name" in cols or "Average ⬆️" in cols:
        return "leaderboard"
    return "wide"


def clembench_table(frame: pd.DataFrame) -> pd.DataFrame:
    """clembench-runs results.csv -> model x {clemscore, played, quality, <game>/played, <game>/quality}."""
    key_col = frame.columns[0]
    out = pd.DataFrame(index=[clem_model(k) for k in frame[key_col]])
    for col in frame.columns[1:]:
        game, _, metric = str(col).partition(",")
        game, metric = game.strip(), metric.strip().lower()
        if "std" in metric:
            continue
        kind = "played" if "played" in metric else "quality" if "quality" in metric else metric
        name = kind if game in ("-", "all") else f"{game}/{kind}"
        out[name] = pd.to_numeric(frame[col], errors="coerce").to_numpy()
    return out


def leaderboard_table(frame: pd.DataFrame) -> pd.DataFrame:
    key = "fullname" if "fullname" in frame.columns else "eval_name" if "eval_name" in frame.columns else None
    if key is None:
        raise UserError("Open LLM Leaderboard export has no 'fullname' or 'eval_name' column")
    cols = {c: LEADERBOARD_SCORES[c] for c in frame.columns if c in LEADERBOARD_SCORES}
    cols.update(own_leaderboard_columns(frame))
    cols = {c: cols[c] for c in frame.columns if c in cols}  # the file's column order
    if not cols:
        raise UserError("Open LLM Leaderboard export has none of the score columns " + ", ".join(LEADERBOARD_SCORES))
    out = frame[[key, *cols]].rename(columns=cols).drop_duplicates()  # a row repeated as is says nothing new
    clash = out[key][out[key].duplicated()]
    if len(clash):
        names = list(dict.fromkeys(map(str, clash)))
        raise UserError(
            f"Open LLM Leaderboard export: {len(names)} {key} value(s) on several rows with different scores "
            f"({', '.join(repr(n) for n in names[:3])}{', ...' if len(names) > 3 else ''}); keep one row per model "
            "(e.g. one precision or revision) so that no row is dropped silently"
        )
    return out.set_index(key).apply(pd.to_numeric, errors="coerce")


def own_leaderboard_columns(frame: pd.DataFrame) -> dict[str, str]:
    """Benchmarks of a ``leaderboard.csv`` that ``triangulate report`` wrote (:mod:`triangulation.report.leaderboard_file`):
    every ``X Raw`` column with its normalised ``X`` beside it that is not a leaderboard benchmark -> ``X`` (the
    normalised score, as the leaderboard's own columns are read) and ``X/raw``."""
    from triangulation.report.leaderboard_file import RAW_SUFFIX

    out = {}
    for col in map(str, frame.columns):
        base = col.removesuffix(RAW_SUFFIX)
        if col.endswith(RAW_SUFFIX) and base not in LEADERBOARD_SCORES:
            out[col] = f"{base}/raw"
            if base in frame.columns:
                out[base] = base
    return out


def wide_table(frame: pd.DataFrame) -> pd.DataFrame:
    key = frame.columns[0]
    table = frame.set_index(key)
    table.index = [str(i).strip() for i in table.index]
    numeric = table.apply(pd.to_numeric, errors="coerce")
    numeric = numeric.loc[:, numeric.notna().any()]
    if numeric.empty:
        raise UserError("external table has no numeric score column (expected: model column, then one column per benchmark)")
    return numeric


def read_external(spec: str) -> External:
    """Read one ``--external [LABEL=]FILE``; its columns become ``LABEL/<benchmark>``."""
    label, path = parse_spec(spec)
    label = label or default_label(path)
    frame = _read_frame(path)
    if frame.shape[1] < 2 or frame.empty:
        raise UserError(f"external table {path} needs a model column and at least one score column")
    kind = detect_kind(frame)
    table = {"clembench": clembench_table, "leaderboard": leaderboard_table, "wide": wide_table}[kind](frame)
    if table.index.duplicated().any():
        dups = sorted(set(table.index[table.index.duplicated()]))
        raise UserError(f"external table {path} lists models more than once: {', '.join(map(str, dups[:5]))}")
    table.columns = [f"{label}/{c}" for c in table.columns]
    table.index.name = "model"
    return External(label=label, kind=kind, table=table, path=path)


def read_externals(specs: list[str]) -> list[External]:
    out = [read_external(s) for s in specs]
    labels = [e.label for e in out]
    clash = sorted({lab for lab in labels if labels.count(lab) > 1})
    if clash:
        raise UserError(f"two --external tables share the label {clash[0]!r}; name them with LABEL=FILE")
    return out
