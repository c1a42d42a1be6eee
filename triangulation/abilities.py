"""The abilities taxonomy of seed 003 (Sec. 4.1, Tables 1-2) as a YAML mapping, and the
static-versus-interactive correlation of each ability (Sec. 4.2, Figure 3).

Figure 3 correlates each ability's cognitive tests with the static (large QA) and interactive (games)
assessments by Kendall's tau, * marking p < 0.05. Where a side or an ability has several benchmarks
we average each model's min-max normalised scores over them (our choice; the paper does not say how
it pooled them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import pandas as pd
import yaml

from plumbing.errors import UserError
from triangulation.kendall import kendall_pair


@dataclass
class Taxonomy:
    abilities: dict[str, dict[str, str]]
    benchmarks: dict[str, str]  # pattern -> ability key
    assessments: dict[str, list[str]]  # "interactive" / "static" -> patterns
    controls: list[str] = field(default_factory=list)
    main_metrics: dict[str, Any] = field(default_factory=dict)

    def ability_of(self, benchmark: str) -> str | None:
        """The ability a benchmark measures (first matching pattern), or None."""
        for pattern, ability in self.benchmarks.items():
            if fnmatchcase(benchmark, pattern):
                return ability
        return None

    def assessment_of(self, benchmark: str) -> str | None:
        """``"interactive"``, ``"static"`` or None; interactive patterns win."""
        if any(fnmatchcase(benchmark, p) for p in self.controls):
            return None
        for side in ("interactive", "static"):
            if any(fnmatchcase(benchmark, p) for p in self.assessments.get(side, [])):
                return side
        return None

    def ability_name(self, key: str) -> str:
        return self.abilities.get(key, {}).get("name", key)


def load_taxonomy(path: Path | str | None = None) -> Taxonomy:
    """Read ``abilities.yaml`` (the shipped default when ``path`` is None); bad files -> UserError."""
    try:
        text = Path(path).read_text(encoding="utf-8") if path else resources.files("triangulation").joinpath("abilities.yaml").read_text(encoding="utf-8")
        data = yaml.safe_load(text) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise UserError(f"cannot read abilities file {path}: {exc.__class__.__name__}") from None
    if not isinstance(data, Mapping):
        raise UserError(f"abilities file {path} must hold a mapping with keys abilities, benchmarks, assessments")
    abilities = dict(data.get("abilities") or {})
    benchmarks = {str(k): str(v) for k, v in (data.get("benchmarks") or {}).items()}
    unknown = sorted({a for a in benchmarks.values() if a not in abilities})
    if unknown:
        raise UserError(f"abilities file {path or 'default'}: benchmarks map to undefined abilities: {', '.join(unknown)}")
    assessments = {str(k): [str(p) for p in (v or [])] for k, v in (data.get("assessments") or {}).items()}
    return Taxonomy(
        abilities={str(k): dict(v or {}) for k, v in abilities.items()},
        benchmarks=benchmarks,
        assessments=assessments,
        controls=[str(p) for p in data.get("controls") or []],
        main_metrics=dict(data.get("main_metrics") or {}),
    )


def minmax(column: pd.Series) -> pd.Series:
    """Scale to [0, 1] over the models (a constant column -> 0.5; NaN stays NaN)."""
    lo, hi = column.min(), column.max()
    if pd.isna(lo) or hi == lo:
        return column.where(column.isna(), 0.5)
    return (column - lo) / (hi - lo)


def pooled(scores: pd.DataFrame, benchmarks: list[str]) -> pd.Series:
    """Per model: mean of min-max normalised scores over ``benchmarks`` (models with none -> NaN)."""
    if not benchmarks:
        return pd.Series(float("nan"), index=scores.index)
    return pd.concat([minmax(scores[b]) for b in benchmarks], axis=1).mean(axis=1, skipna=True)


def static_vs_interactive(scores: pd.DataFrame, taxonomy: Taxonomy) -> pd.DataFrame:
    """One row per ability measured in ``scores``: tau, p and n against the static and interactive sides.

    Columns: ability, name, family, benchmarks, tau_static, p_static, n_static, tau_interactive,
    p_interactive, n_interactive (seed 003 Figure 3).
    """
    sides = {s: [b for b in scores.columns if taxonomy.assessment_of(b) == s] for s in ("static", "interactive")}
    by_ability: dict[str, list[str]] = {}
    for b in scores.columns:
        ability = taxonomy.ability_of(b)
        if ability:
            by_ability.setdefault(ability, []).append(b)
    rows = []
    for ability in taxonomy.abilities:
        if ability not in by_ability:
            continue
        a_score = pooled(scores, by_ability[ability])
        row: dict[str, Any] = {
            "ability": ability,
            "name": taxonomy.ability_name(ability),
            "family": taxonomy.abilities[ability].get("family", ""),
            "benchmarks": ", ".join(by_ability[ability]),
        }
        for side, members in sides.items():
            r = kendall_pair(a_score, pooled(scores, members)) if members else kendall_pair(a_score.iloc[:0], a_score.iloc[:0])
            row.update({f"tau_{side}": r.tau, f"p_{side}": r.p, f"n_{side}": r.n})
        rows.append(row)
    cols = ["ability", "name", "family", "benchmarks", "tau_static", "p_static", "n_static", "tau_interactive", "p_interactive", "n_interactive"]
    return pd.DataFrame(rows, columns=cols)


def assessment_members(scores: pd.DataFrame, taxonomy: Taxonomy) -> dict[str, list[str]]:
    return {s: [b for b in scores.columns if taxonomy.assessment_of(b) == s] for s in ("static", "interactive")}
