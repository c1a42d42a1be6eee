"""Seed 002 (clembench2024) Tables 1 and 3, the printed values, against the published ``results.csv`` files.

Table 1 prints each release's clemscore ("sc"), Table 3 also "%pl" (the percentage of games played formally
correctly) and "qs" (the quality of the play of those games). The paper names models in lower case without
the ``meta-`` prefix and (in its v1.6 columns) without the ``-hf`` suffix of clembench-runs' row keys:
:func:`paper_key` puts both sides in that form. :func:`compare_printed` rounds the CSV's values to the two
decimals printed and says, row by row, whether they match.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from triangulation.report.external import clembench_table

#: the printed columns and the clembench-runs benchmark each is read from
COLUMNS = {"sc": "clemscore", "pl": "played", "qs": "quality"}


def paper_key(model: str) -> str:
    """``Meta-Llama-3-70B-Instruct-hf`` and ``llama-3-70b-instruct`` -> ``llama-3-70b-instruct``."""
    key = str(model).strip().lower()
    key = key.removeprefix("meta-")
    return key.removesuffix("-hf")


def release_table(results_csv: Path) -> pd.DataFrame:
    """A clembench-runs ``results.csv`` as paper_key x (sc, pl, qs)."""
    table = clembench_table(pd.read_csv(results_csv))
    out = pd.DataFrame({col: table[bench] for col, bench in COLUMNS.items()})
    out.index = pd.Index([paper_key(m) for m in table.index], name="model")
    return out


def compare_printed(printed: pd.DataFrame, release: pd.DataFrame) -> pd.DataFrame:
    """One row per printed model: its printed values, the CSV's rounded to two decimals, and ``status``:
    ``same``, ``differs`` or ``missing`` (the model is not in the CSV)."""
    rows = []
    for model, values in printed.iterrows():
        key = paper_key(str(model))
        row = {"model": model, **{f"printed_{c}": values[c] for c in printed.columns}}
        if key not in release.index:
            rows.append({**row, "status": "missing"})
            continue
        got = {c: round(float(release.at[key, c]), 2) for c in printed.columns}
        same = all(abs(got[c] - float(values[c])) < 0.005 for c in printed.columns)
        rows.append({**row, **{f"csv_{c}": got[c] for c in printed.columns}, "status": "same" if same else "differs"})
    return pd.DataFrame(rows).set_index("model")
