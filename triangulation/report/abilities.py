"""The abilities taxonomy of seed 003 (Sec. 4.1, Tables 1-2) as a YAML mapping, and the
static-versus-interactive correlation of each ability (Sec. 4.2, Figure 3).

Figure 3 correlates each ability's cognitive tests with the static (large QA) and interactive (games)
assessments by Kendall's tau, * marking p < 0.05. Where a side or an ability has several benchmarks
we average each model's min-max normalised scores over them (our choice; the paper does not say how
it pooled them).

The default view is the paper's sides exactly (Sec. 3.1: "We take MMLU and BBH as representative of
large QA benchmarks"; the clembench games; App. F: working memory "only ... the Verbal (Base) N-3
subtask"). :meth:`Taxonomy.extended` gives a second, labelled view that adds our other tasks. A group
and its own members are never pooled together (the group stands for them: :func:`pooled`, the report's one
pooling rule). BBH: App. E.2.1 says the leaderboard "excludes ... dyck languages, navigate and word
sorting", but the leaderboard's code (lm-eval 0.4.13 ``leaderboard_bbh``, 24 subtasks) leaves out
dyck_languages, multistep_arithmetic_two and word_sorting and keeps navigate. ``leaderboard_bbh`` is taken
as lm-eval scores it (nothing dropped); plain ``bbh`` / ``bbh_*shot`` drop what the leaderboard leaves out
(``exclude_subtasks`` in ``abilities.yaml``, :func:`apply_subtask_exclusions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from plumbing.errors import UserError
from triangulation.report.kendall import kendall_pair, model_set
from triangulation.runs.results_io import NO_SCORE, Run

PAPER_VIEW, EXTENDED_VIEW = "paper", "extended"


@dataclass
class Taxonomy:
    abilities: dict[str, dict[str, str]]
    benchmarks: dict[str, str]  # pattern -> ability key
    assessments: dict[str, list[str]]  # "interactive" / "static" -> patterns
    controls: list[str] = field(default_factory=list)
    main_metrics: dict[str, Any] = field(default_factory=dict)
    exclude_subtasks: dict[str, list[str]] = field(default_factory=dict)  # group pattern -> subtask patterns
    extension: dict[str, Any] = field(default_factory=dict)  # the YAML's ``extended`` mapping
    view: str = PAPER_VIEW

    def extended(self) -> Taxonomy:
        """The labelled "extended" view: the YAML's ``extended.benchmarks`` tried after the paper's
        patterns, ``extended.assessments`` added to the paper's sides (our variant, not Figure 3)."""
        ext = self.extension or {}
        benchmarks = dict(self.benchmarks)
        for pattern, ability in (ext.get("benchmarks") or {}).items():
            benchmarks.setdefault(str(pattern), str(ability))
        assessments = {side: list(patterns) for side, patterns in self.assessments.items()}
        for side, patterns in (ext.get("assessments") or {}).items():
            assessments.setdefault(str(side), []).extend(str(p) for p in patterns or [])
        return Taxonomy(
            abilities=self.abilities,
            benchmarks=benchmarks,
            assessments=assessments,
            controls=self.controls,
            main_metrics=self.main_metrics,
            exclude_subtasks=self.exclude_subtasks,
            extension={},
            view=EXTENDED_VIEW,
        )

    def excluded_patterns(self, group: str) -> list[str]:
        """The subtask patterns the paper leaves out of ``group``'s score ([] if none)."""
        return [p for key, pats in self.exclude_subtasks.items() if fnmatchcase(group, key) for p in pats]

    def is_excluded_subtask(self, benchmark: str, groups: Mapping[str, list[str]] | None = None) -> bool:
        """Is ``benchmark`` a subtask left out of its group by ``exclude_subtasks`` (plain BBH: what the
        leaderboard leaves out, dyck languages, multistep arithmetic two, word sorting; NATURAL PLAN's
        meeting)? Membership comes from ``groups`` (group -> subtasks), else
        from the name: ``<group>_<subtask>`` for a literal group key, a match of a wildcard key."""
        for key, patterns in self.exclude_subtasks.items():
            owners = [g for g, subs in (groups or {}).items() if fnmatchcase(g, key) and benchmark in subs]
            literal = not any(c in key for c in "*?[")
            if not owners and (benchmark.startswith(f"{key}_") if literal else fnmatchcase(benchmark, key)):
                owners = [key]
            if owners and any(fnmatchcase(benchmark, p) for p in patterns):
                return True
        return False

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
        text = (
            Path(path).read_text(encoding="utf-8")
            if path
            else resources.files("triangulation.report").joinpath("abilities.yaml").read_text(encoding="utf-8")
        )
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
    extension = dict(data.get("extended") or {})
    unknown = sorted({str(a) for a in (extension.get("benchmarks") or {}).values() if a not in abilities})
    if unknown:
        raise UserError(f"abilities file {path or 'default'}: extended benchmarks map to undefined abilities: {', '.join(unknown)}")
    return Taxonomy(
        abilities={str(k): dict(v or {}) for k, v in abilities.items()},
        benchmarks=benchmarks,
        assessments=assessments,
        controls=[str(p) for p in data.get("controls") or []],
        main_metrics=dict(data.get("main_metrics") or {}),
        exclude_subtasks={str(k): [str(p) for p in (v or [])] for k, v in (data.get("exclude_subtasks") or {}).items()},
        extension=extension,
    )


def group_members(runs: list[Run]) -> dict[str, list[str]]:
    """Group -> its subtasks, over all runs (lm-eval's ``group_subtasks``, play's groups)."""
    out: dict[str, list[str]] = {}
    for run in runs:
        for group, subs in run.group_subtasks.items():
            known = out.setdefault(group, [])
            known += [s for s in subs if s not in known]
    return out


def without_members(benchmarks: list[str], groups: Mapping[str, list[str]] | None) -> list[str]:
    """``benchmarks`` less every benchmark whose group is also listed: a group and its own members are
    never pooled together (the group stands for them; groups nested in a listed group go too)."""
    chosen = set(benchmarks)

    def members(group: str, seen: set[str]) -> set[str]:
        out: set[str] = set()
        for sub in (groups or {}).get(group, []):
            if sub not in seen:
                out |= {sub} | members(sub, seen | {sub})
        return out

    covered = set().union(*(members(b, {b}) for b in chosen)) if chosen else set()
    return [b for b in benchmarks if b not in covered]


def apply_subtask_exclusions(table: pd.DataFrame, runs: list[Run], taxonomy: Taxonomy) -> tuple[pd.DataFrame, dict[str, str]]:
    """Recompute each group ``exclude_subtasks`` trims (plain BBH: the three subtasks lm-eval's
    ``leaderboard_bbh`` leaves out, dyck_languages, multistep_arithmetic_two and word_sorting, where seed 003
    App. E.2.1 names "dyck languages, navigate and word sorting"; "we computed the micro-average over the
    results achieved on each subtask") from the run's own subtask results: the mean of the group's main
    metric over the subtasks left, weighted by each subtask's sample count (``n-samples``, effective;
    equal weights when a file lacks them). Later runs win, as in the score table. Returns the table and
    group -> a note of what was left out (groups whose subtasks are absent stay as lm-eval wrote them)."""
    table = table.copy()
    notes: dict[str, str] = {}
    latest: dict[tuple[str, str], Run] = {}  # (model, group) -> the run whose group value the table shows
    for run in sorted(runs, key=lambda r: r.date):
        for group in run.group_subtasks:
            if group in run.results and taxonomy.excluded_patterns(group):
                latest[(run.model, group)] = run
    for (_model, group), run in latest.items():
        subs, patterns = run.group_subtasks[group], taxonomy.excluded_patterns(group)
        metric = _group_metric(group, run, taxonomy)
        kept = [s for s in subs if not any(fnmatchcase(s, p) for p in patterns)]
        dropped = [s for s in subs if s not in kept]
        pairs = [(run.values.get(s, {}).get(metric), run.n_samples.get(s, 1)) for s in kept]
        pairs = [(v, w) for v, w in pairs if v is not None]
        if not pairs or len(pairs) < len(kept):
            continue  # subtasks not in the file: the group's own value stays
        value = sum(v * w for v, w in pairs) / sum(w for _, w in pairs)
        if run.model in table.index and group in table.columns:
            table.loc[run.model, group] = value
            notes[group] = f"{metric}, micro-average over {len(kept)} subtasks without {', '.join(dropped) or 'none present'}"
    return table, notes


def _group_metric(group: str, run: Run, taxonomy: Taxonomy) -> str:
    name, _ = run.main.get(group, NO_SCORE)
    return name.split("+")[0] if name else "acc_norm"


def minmax(column: pd.Series) -> pd.Series:
    """Scale to [0, 1] over the models (a constant column -> 0.5; NaN stays NaN)."""
    lo, hi = column.min(), column.max()
    if pd.isna(lo) or hi == lo:
        return column.where(column.isna(), 0.5)
    return (column - lo) / (hi - lo)


def pooled(scores: pd.DataFrame, benchmarks: list[str], groups: Mapping[str, list[str]] | None, how: str = "minmax") -> pd.Series:
    """Per model: the mean over ``benchmarks`` of min-max normalised scores (``how="minmax"``, Figure 3) or of
    the scores as they are (``how="mean"``, Figure 1); models with none -> NaN.

    **The report's one pooling rule**: every section that pools benchmarks calls this function, and it
    drops each benchmark whose group is also among ``benchmarks`` (:func:`without_members`) before it
    averages, so a group is never pooled together with its own members (seed 003's registry scores the
    clembench games as the single ``clembench`` task; App. E.2.1 micro-averages subtasks into their
    benchmark). ``groups`` (group -> subtasks, :func:`group_members`) is required for that reason."""
    kept = without_members(list(benchmarks), groups)
    if not kept:
        return pd.Series(float("nan"), index=scores.index)
    if how not in ("minmax", "mean"):
        raise ValueError(f"pooled: how is 'minmax' or 'mean', got {how!r}")
    columns = [minmax(scores[b]) if how == "minmax" else pd.to_numeric(scores[b], errors="coerce") for b in kept]
    return pd.concat(columns, axis=1).mean(axis=1, skipna=True)


def static_vs_interactive(
    scores: pd.DataFrame, taxonomy: Taxonomy, groups: Mapping[str, list[str]] | None = None, models: str = "keep_common"
) -> pd.DataFrame:
    """One row per ability measured in ``scores``: tau, p and n against the static and interactive sides.

    Columns: ability, name, family, benchmarks, tau_static, p_static, n_static, tau_interactive,
    p_interactive, n_interactive (seed 003 Figure 3). ``groups`` (group -> subtasks) keeps a group and
    its members from being pooled together and excluded subtasks off every side. ``models``: the authors'
    ``keep_common`` (default: only the models that scored every benchmark of the figure) or our
    ``pairwise`` variant (each tau over the models that scored both of its sides), see
    :mod:`triangulation.report.kendall`.
    """
    sides = assessment_members(scores, taxonomy, groups)
    by_ability = ability_benchmarks(scores, taxonomy, groups)
    scores = model_set(scores, _figure_benchmarks(by_ability, sides.values()), models)
    rows = []
    for ability in taxonomy.abilities:
        if ability not in by_ability:
            continue
        a_score = pooled(scores, by_ability[ability], groups)
        row: dict[str, Any] = {
            "ability": ability,
            "name": taxonomy.ability_name(ability),
            "family": taxonomy.abilities[ability].get("family", ""),
            "benchmarks": ", ".join(by_ability[ability]),
        }
        for side, members in sides.items():
            r = kendall_pair(a_score, pooled(scores, members, groups)) if members else kendall_pair(a_score.iloc[:0], a_score.iloc[:0])
            row.update({f"tau_{side}": r.tau, f"p_{side}": r.p, f"n_{side}": r.n})
        rows.append(row)
    cols = [
        "ability",
        "name",
        "family",
        "benchmarks",
        "tau_static",
        "p_static",
        "n_static",
        "tau_interactive",
        "p_interactive",
        "n_interactive",
    ]
    return pd.DataFrame(rows, columns=cols)


def _figure_benchmarks(by_ability: Mapping[str, list[str]], others: Any) -> list[str]:
    """Every benchmark a figure correlates: the abilities' tests, then ``others`` (lists of benchmarks), once each."""
    out: list[str] = []
    for names in [*by_ability.values(), *others]:
        out += [b for b in names if b not in out]
    return out


def ability_benchmarks(scores: pd.DataFrame, taxonomy: Taxonomy, groups: Mapping[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Ability -> its cognitive tests in ``scores`` (excluded subtasks left out, a group standing for its members)."""
    by_ability: dict[str, list[str]] = {}
    for b in scores.columns:
        ability = taxonomy.ability_of(b)
        if ability and not taxonomy.is_excluded_subtask(b, groups):
            by_ability.setdefault(ability, []).append(b)
    return {a: without_members(bs, groups) for a, bs in by_ability.items()}


#: seed 003 App. I, Figure 7: "The correlation matrix does not include results on Wordle and Image Game as
#: model performances' were too low" (the caption names standard Wordle; its two variants stay in)
FIGURE7_EXCLUDED: tuple[str, ...] = ("wordle", "imagegame", "*/wordle/*", "*/imagegame/*")


def ability_matrix(
    scores: pd.DataFrame,
    taxonomy: Taxonomy,
    groups: Mapping[str, list[str]] | None = None,
    exclude: tuple[str, ...] = FIGURE7_EXCLUDED,
    models: str = "keep_common",
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Seed 003 Figure 7 (App. I, "an extended version of Figure 3"): "Correlation of cognitive abilities with
    Large QA benchmarks and Interactive Games" -> (tau, p), ability x benchmark: Kendall tau-b of each
    ability's pooled score (as in Figure 3) with each static benchmark and each game on its own (a group
    whose members are in the scores gives way to them), leaving out ``exclude`` (Wordle and Image Game).
    Returns (tau, p, n); ``models`` as in :func:`static_vs_interactive` (the authors' ``keep_common`` by default)."""
    sides = {side: [b for b in scores.columns if taxonomy.assessment_of(b) == side] for side in ("static", "interactive")}
    present = set(scores.columns)
    columns = [
        b
        for side in ("static", "interactive")
        for b in sides[side]
        if not taxonomy.is_excluded_subtask(b, groups)
        and not any(fnmatchcase(b, pat) for pat in exclude)
        and not set((groups or {}).get(b, ())) & present
    ]
    by_ability = ability_benchmarks(scores, taxonomy, groups)
    scores = model_set(scores, _figure_benchmarks(by_ability, [columns]), models)
    names = [taxonomy.ability_name(a) for a in taxonomy.abilities if a in by_ability]
    tau = pd.DataFrame(float("nan"), index=names, columns=columns)
    p, n = tau.copy(), tau.copy()
    for ability in (a for a in taxonomy.abilities if a in by_ability):
        a_score = pooled(scores, by_ability[ability], groups)
        name = taxonomy.ability_name(ability)
        for b in columns:
            r = kendall_pair(a_score, scores[b])
            tau.at[name, b], p.at[name, b], n.at[name, b] = r.tau, r.p, r.n
    return tau, p, n


def assessment_members(scores: pd.DataFrame, taxonomy: Taxonomy, groups: Mapping[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Side -> its benchmarks in ``scores``: excluded subtasks left out, a group's members dropped when the group is there."""
    out = {}
    for side in ("static", "interactive"):
        members = [b for b in scores.columns if taxonomy.assessment_of(b) == side and not taxonomy.is_excluded_subtask(b, groups)]
        out[side] = without_members(members, groups)
    return out
