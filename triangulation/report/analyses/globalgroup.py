"""GlobalGroup analyses from ``--log_samples`` files (seed 000).

- Table 2: mean group F1 and topic-achieved per model and subset.
- Native versus English translation: F1(<lang>) - F1(<lang>_en) per model (Sec. 5).
- Culturally versus non-culturally related groups (Tables 3 and 10): per subset, the mean F1 of
  non-culturally-related minus culturally-related groups in 4x4 games, and their mean over subsets.
  Tag types (App. I.1, Tables 7-8): per-group F1, each true group matched to the predicted group with
  the largest intersection (missing -> 0).
- Difficulty (Table 4): game F1 by group size (4-group games), group count (4-word games), ARI and
  CanProp word overlap (4-word games) in the paper's fixed ranges, nyt-seq excluded.
- NYT colour strata (App. I.2, Table 9): per-group F1 of nyt_shuf groups by Connections colour.
- PCA of the model x subset mean 4x4 F1 matrix with K-means clusters, k = 2 (Figure 2).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from custom_metrics.matching import greedy_match, group_f1, key_set
from custom_metrics.parsing import parse_groups
from plumbing.csvio import write_csv
from triangulation.html import Image, Section, Table, Text
from triangulation.report import plots
from triangulation.runs.results_io import Run
from triangulation.runs.samples import response_text, sample_records

LANGS = ("es", "zh", "hi", "ar")
#: GlobalGroup tasks that are not the static grouping task (other prompts and metrics)
NOT_STATIC = ("globalgroup_interactive", "globalgroup_overlap")
#: the tasks decoded as seed 000 App. B ran its open models (lm_eval_tasks/globalgroup/_generate.py PAPER_SAMPLING)
SAMPLED_SUFFIX = "_sampled"
COLOURS = ("yellow", "green", "blue", "purple")
#: Table 4's ranges (seed 000 Sec. 6): ARI [-0.5, 0.0], (0.0, 0.5], (0.5, 1.0]; overlap [0, 0.75] ... (2.25, 3.0]
ARI_EDGES = (-0.5, 0.0, 0.5, 1.0)
OVERLAP_EDGES = (0.0, 0.75, 1.5, 2.25, 3.0)
#: Table 4 is "averaged across all dataset backgrounds, excluding nyt-seq"
TABLE4_EXCLUDED = ("nyt_seq",)
#: Tables 3 and 10: "4x4 games ... across all dataset subsets (excluding nyt-seq and nyt-shuf)"
CULTURE_EXCLUDED = ("nyt_seq", "nyt_shuf")


def decoding_label(model: str, task: str) -> str:
    """The row label of a model's games: ``<model> (sampled)`` for the ``globalgroup_*_sampled`` tasks (seed 000
    App. B's decoding), so a model run greedy and sampled shows two rows instead of pooling both."""
    return f"{model} (sampled)" if task.endswith(SAMPLED_SUFFIX) else model


def gold_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The doc's gold groups (malformed entries dropped)."""
    groups = doc.get("groups") if isinstance(doc, dict) else None
    return [g for g in groups or [] if isinstance(g, dict) and isinstance(g.get("words"), list)]


def predicted_sets(response: str, doc: dict[str, Any]) -> list[frozenset]:
    """The answer's groups as matching-key sets (the first ``n_groups`` count, as in scoring)."""
    gold = gold_of(doc)
    n = int(doc.get("n_groups") or len(gold))
    pool = list(doc.get("words") or []) or None
    return [key_set(g.words) for g in parse_groups(response, pool, n_groups=n)[:n]]


def group_f1s(response: str, doc: dict[str, Any]) -> list[float]:
    """F1 of each gold group against its greedily matched prediction (seed 000 Sec. 4.1; missing -> 0)."""
    true_sets = [key_set(map(str, g["words"])) for g in gold_of(doc)]
    preds = predicted_sets(response, doc)
    matched = greedy_match(true_sets, preds)
    return [group_f1(t, preds[j] if j is not None else None) for t, j in zip(true_sets, matched)]


def first_tag(tags: Any) -> str:
    """The group's type tag (the first of ``tags``: Everyday / Pop culture / Linguistic), "(none)" if absent."""
    if isinstance(tags, str):
        return tags or "(none)"
    if isinstance(tags, list) and tags and tags[0]:
        return str(tags[0])
    return "(none)"


def setting(doc: dict[str, Any]) -> str:
    """``<subset>`` for 4x4 games, else ``<subset>_<g>x<w>``."""
    subset = str(doc.get("subset", "?"))
    g, w = doc.get("n_groups"), doc.get("group_size")
    return subset if (g, w) in ((4, 4), (None, None)) else f"{subset}_{g}x{w}"


def game_frame(records: Iterable[tuple[str, str, dict[str, Any]]]) -> pd.DataFrame:
    """One row per (model, game): setting, subset, difficulty fields and the logged game metrics."""
    rows = []
    for model, task, rec in records:
        doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
        rows.append(
            {
                "model": model,
                "task": task,
                "setting": setting(doc),
                "subset": doc.get("subset"),
                "n_groups": doc.get("n_groups"),
                "group_size": doc.get("group_size"),
                "ari": doc.get("ari"),
                "canprop_overlap": doc.get("canprop_overlap"),
                "group_f1": _num(rec.get("group_f1")),
                "topic_achieved": _num(rec.get("topic_achieved")),
            }
        )
    return pd.DataFrame(rows)


#: the columns of :func:`group_frame` (there even when no record has a gold group: an empty ``doc``)
GROUP_COLUMNS = ("model", "subset", "setting", "topic", "f1", "tag", "culturally_related", "colour")


def group_frame(records: Iterable[tuple[str, str, dict[str, Any]]], colours: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per (model, game, gold group): F1 plus the group's tags, cultural flag and colour (:data:`GROUP_COLUMNS`)."""
    colours = {k.casefold(): v for k, v in (colours or {}).items()}
    rows = []
    for model, _task, rec in records:
        doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
        groups = gold_of(doc)
        f1s = group_f1s(response_text(rec), doc)
        for g, f1 in zip(groups, f1s):
            topic = str(g.get("topic", ""))
            rows.append(
                {
                    "model": model,
                    "subset": doc.get("subset"),
                    "setting": setting(doc),
                    "topic": topic,
                    "f1": f1,
                    "tag": first_tag(g.get("tags")),
                    "culturally_related": g.get("culturally_related"),
                    "colour": g.get("color") or g.get("colour") or colours.get(topic.casefold()),
                }
            )
    return pd.DataFrame(rows, columns=list(GROUP_COLUMNS))


def subset_table(games: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Model x setting mean of a game metric (seed 000 Table 2)."""
    return games.pivot_table(index="model", columns="setting", values=metric, aggfunc="mean")


def native_english_deltas(f1: pd.DataFrame) -> pd.DataFrame:
    """F1(<lang>) - F1(<lang>_en) per model for each language with both subsets present."""
    cols = {f"{lang} - {lang}_en": f1[lang] - f1[f"{lang}_en"] for lang in LANGS if lang in f1 and f"{lang}_en" in f1}
    return pd.DataFrame(cols, index=f1.index)


def _interval_labels(edges: tuple[float, ...]) -> list[str]:
    """``[a, b]`` for the first range, ``(a, b]`` after it (the paper's notation in Table 4)."""

    def fmt(x: float) -> str:
        text = f"{x:g}"
        return text if "." in text else f"{text}.0"

    return [f"{'[' if i == 0 else '('}{fmt(lo)}, {fmt(hi)}]" for i, (lo, hi) in enumerate(zip(edges, edges[1:]))]


#: Table 4 rows: difficulty column -> (games kept, fixed ranges or None for the discrete values)
TABLE4 = {
    "group_size": ("n_groups", 4, None),  # "4-group for group size analysis"
    "n_groups": ("group_size", 4, None),  # "4-word games" for group count
    "ari": ("group_size", 4, ARI_EDGES),
    "canprop_overlap": ("group_size", 4, OVERLAP_EDGES),
}


def difficulty_table(games: pd.DataFrame, column: str) -> pd.DataFrame:
    """Seed 000 Table 4: "The averaged F1 score ... across each 4-word game (4-group for group size
    analysis) whose group size, group count, ARI, and Word Overlap score fell within the specified
    ranges ... excluding nyt-seq". Group size on 4-group games, group count, ARI and overlap on 4-word
    games; ARI in [-0.5, 0.0], (0.0, 0.5], (0.5, 1.0]; overlap in [0, 0.75], (0.75, 1.5], (1.5, 2.25],
    (2.25, 3.0] (values outside every range are left out). Range x model: mean game F1 (pooled over
    the games of all subsets)."""
    if column not in TABLE4 or games.empty:
        return pd.DataFrame()
    fixed, value, edges = TABLE4[column]
    data = games[~games["subset"].astype(str).isin(TABLE4_EXCLUDED)]
    data = data[pd.to_numeric(data[fixed], errors="coerce") == value].dropna(subset=[column, "group_f1"])
    if data.empty:
        return pd.DataFrame()
    if edges is None:
        key = data[column].astype(int)
    else:
        labels = _interval_labels(edges)
        key = pd.cut(data[column].astype(float), bins=list(edges), labels=labels, include_lowest=True)
        data, key = data[key.notna()], key[key.notna()].astype(str)
        if data.empty:
            return pd.DataFrame()
    table = data.assign(bin=key).pivot_table(index="bin", columns="model", values="group_f1", aggfunc="mean")
    if edges is not None:
        table = table.reindex([lab for lab in _interval_labels(edges) if lab in table.index])
    return table


#: Table 12 (App. K.2): "2 ranges for the ARI and word overlap scores, creating 4 combinations (C1-4)" and
#: "C5 ... representing the easiest cases": name -> ((ARI low, high, low closed), (overlap low, high, low closed))
TABLE12 = {
    "C1": ((-1.0, 0.0, True), (0.0, 1.5, True)),
    "C2": ((-1.0, 0.0, True), (1.5, 3.0, False)),
    "C3": ((0.0, 1.0, False), (0.0, 1.5, True)),
    "C4": ((0.0, 1.0, False), (1.5, 3.0, False)),
    "C5": ((0.5, 1.0, False), (0.0, 0.75, True)),
}


def _within(values: pd.Series, low: float, high: float, closed_low: bool) -> pd.Series:
    return ((values >= low) if closed_low else (values > low)) & (values <= high)


def difficulty_combinations(games: pd.DataFrame) -> pd.DataFrame:
    """Seed 000 Table 12 (App. K.2): over 4-group, 4-word games, excluding nyt-seq, one column per
    combination C1-C5 of ARI and word-overlap ranges (C1 ARI [-1.0, 0.0] and overlap [0.0, 1.5], C2 ARI
    [-1.0, 0.0] and (1.5, 3.0], C3 (0.0, 1.0] and [0.0, 1.5], C4 (0.0, 1.0] and (1.5, 3.0], C5 ARI
    (0.5, 1.0] and overlap [0.0, 0.75]; a game can be in C3 and C5) holding True where the game falls
    in it, plus ``integrated_difficulty`` (App. K.3). ``games``: subset, n_groups, group_size, ari,
    canprop_overlap (one row per game, or per model and game)."""
    from custom_metrics.difficulty import integrated_difficulty

    data = games[(pd.to_numeric(games["n_groups"], errors="coerce") == 4) & (pd.to_numeric(games["group_size"], errors="coerce") == 4)]
    data = data[~data["subset"].astype(str).isin(TABLE4_EXCLUDED)].dropna(subset=["ari", "canprop_overlap"])
    ari, overlap = data["ari"].astype(float), data["canprop_overlap"].astype(float)
    flags = {name: _within(ari, *a) & _within(overlap, *o) for name, (a, o) in TABLE12.items()}
    out = data.assign(**flags)
    out["integrated_difficulty"] = [integrated_difficulty(4, a, o) for a, o in zip(ari, overlap)]
    return out


def game_counts(combos: pd.DataFrame) -> pd.DataFrame:
    """Table 12's "Game Count" rows: combination x subset, number of games (of one model's games when
    several models played them)."""
    if combos.empty:
        return pd.DataFrame()
    one = combos[combos["model"] == combos["model"].iloc[0]] if "model" in combos else combos
    counts = one.groupby("subset")[list(TABLE12)].sum().T.astype(int)
    order = [s for s in (*SUBSET_ORDER, "nyt_shuf") if s in counts.columns]
    return counts[order + [c for c in counts.columns if c not in order]]


def combination_f1(combos: pd.DataFrame) -> pd.DataFrame:
    """Table 12's F1 rows: (combination, model) x subset, mean game F1 of the games in the combination."""
    parts = [combos[combos[name]].assign(combination=name) for name in TABLE12]
    data = pd.concat(parts) if parts else pd.DataFrame()
    if data.empty or "group_f1" not in data:
        return pd.DataFrame()
    return data.pivot_table(index=["combination", "model"], columns="subset", values="group_f1", aggfunc="mean")


def cultural_differences(groups: pd.DataFrame) -> pd.DataFrame:
    """Seed 000 Tables 3 and 10: "the average difference in performance in groups labeled as
    non-culturally-related versus culturally-related in 4x4 games per dataset subset" (Table 10) and
    "averaged across all dataset subsets (excluding nyt-seq and nyt-shuf)" (Table 3). Model x subset:
    mean F1 of non-culturally-related minus culturally-related groups of the subset's 4x4 games, and
    ``Mean`` = the unweighted mean over the subsets (NaN where a subset lacks either kind)."""
    data = four_by_four_groups(groups)
    data = data[~data["subset"].astype(str).isin(CULTURE_EXCLUDED)]
    data = data.dropna(subset=["culturally_related"])
    if data.empty:
        return pd.DataFrame()
    flag = data["culturally_related"].map(lambda v: str(v).strip().lower() in ("true", "1", "yes"))
    means = data.assign(cultural=flag).pivot_table(index=["model", "subset"], columns="cultural", values="f1", aggfunc="mean")
    if True not in means.columns or False not in means.columns:
        return pd.DataFrame()
    diff = (means[False] - means[True]).unstack("subset")
    order = [s for s in SUBSET_ORDER if s in diff.columns] + sorted(c for c in diff.columns if c not in SUBSET_ORDER)
    diff = diff[order]
    diff["Mean"] = diff.mean(axis=1, skipna=True)
    return diff


def four_by_four_groups(groups: pd.DataFrame) -> pd.DataFrame:
    """The rows of 4-group, 4-word games: the setting is the bare subset (``setting`` adds ``_<g>x<w>``
    otherwise), so games of the ``globalgroup_settings`` tasks (other sizes, same subset) stay out."""
    return groups[groups["setting"] == groups["subset"]]


def tag_table(groups: pd.DataFrame) -> pd.DataFrame:
    """Seed 000 Tables 7-8 (App. I.1): "The averaged performance on groups, separated by tag, by model
    across each non-NYT 4-group, 4-word game". Tag x model: mean per-group F1 over the non-NYT 4x4 games
    (smaller games score higher, Table 4, and must not be pooled in)."""
    data = four_by_four_groups(groups)
    data = data[data["subset"].astype(str).str[:3] != "nyt"].dropna(subset=["tag"])
    if data.empty:
        return pd.DataFrame()
    return data.pivot_table(index="tag", columns="model", values="f1", aggfunc="mean")


def nyt_colour_table(groups: pd.DataFrame) -> pd.DataFrame:
    """Seed 000 Table 9 (App. I.2): "The averaged results on Connections groupings ... across each 4-group,
    4-word nyt shuf. game ... divided by the Connections color difficulty". Colour x model: mean per-group
    F1 over the nyt_shuf 4x4 games, colours in the order yellow, green, blue, purple."""
    data = four_by_four_groups(groups)
    data = data[data["subset"].astype(str) == "nyt_shuf"].dropna(subset=["colour"])
    if data.empty:
        return pd.DataFrame()
    table = data.pivot_table(index="colour", columns="model", values="f1", aggfunc="mean")
    return table.reindex([c for c in COLOURS if c in table.index] + [c for c in table.index if c not in COLOURS])


#: Table 10's column order
SUBSET_ORDER = ("es", "es_en", "zh", "zh_en", "hi", "hi_en", "ar", "ar_en", "en")


def pca_kmeans(f1: pd.DataFrame, k: int = 2, seed: int = 0) -> pd.DataFrame:
    """Seed 000 Figure 2: "each model is represented by a vector of their mean 4x4 game results by
    dataset subset, plotting the first two principal components ... K-means clustering with k=2".
    ``f1`` is model x subset (4x4 columns only); missing cells get the subset's mean (our choice)."""
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA

    data = f1.dropna(axis=1, how="all")
    data = data.fillna(data.mean())
    n_comp = min(2, data.shape[0], data.shape[1])
    coords = PCA(n_components=n_comp, random_state=seed).fit_transform(data.to_numpy(float))
    if coords.shape[1] < 2:
        coords = np.column_stack([coords, np.zeros(len(coords))])
    clusters = KMeans(n_clusters=max(1, min(k, len(data))), n_init=10, random_state=seed).fit_predict(coords)
    return pd.DataFrame({"pc1": coords[:, 0], "pc2": coords[:, 1], "cluster": clusters}, index=data.index)


def four_by_four(f1: pd.DataFrame) -> pd.DataFrame:
    """The model x setting table's 4x4 columns (settings named ``<subset>``, without ``_<g>x<w>``)."""
    return f1[[c for c in f1.columns if not re.search(r"_\dx\d$", str(c))]]


def colour_lookup(runs: Iterable[Run]) -> dict[str, str]:
    """Topic -> Connections colour (nyt groups come from Connections games): from logged ``connections``
    docs, else from the built ``connections`` dataset when it exists; {} when neither is there."""
    docs = [rec.get("doc") for _m, _t, rec in sample_records(runs, "connections")]
    if not docs:
        try:
            from datasets_build.load import load_connections

            docs = list(load_connections()["test"])
        except Exception:  # no built dataset (UserError) or an unreadable one: the table is skipped
            docs = []
    out: dict[str, str] = {}
    for doc in docs:
        for g in gold_of(doc if isinstance(doc, dict) else {}):
            if g.get("topic") and g.get("color"):
                out[str(g["topic"])] = str(g["color"])
    return out


def build(runs: list[Run], outdir: Path) -> Section | None:
    """Write the GlobalGroup CSVs and PNGs into ``outdir``; the report section, or None without samples."""
    records = [(decoding_label(m, t), t, r) for m, t, r in sample_records(runs, "globalgroup", exclude=NOT_STATIC)]
    if not records:
        return None
    section = Section("GlobalGroup (seed 000)")
    games = game_frame(records)
    f1 = subset_table(games, "group_f1")
    ta = subset_table(games, "topic_achieved")
    write_csv(f1, outdir / "globalgroup_f1.csv")
    write_csv(ta, outdir / "globalgroup_topic_achieved.csv")
    section.blocks += [Table(f1, "Mean group F1 per model and subset (Table 2)"), Table(ta, "Topic achieved (Table 2)")]
    section.blocks.append(
        Image(plots.grouped_bars(f1.T, outdir / "globalgroup_f1.png", "GlobalGroup group F1 per subset", "F1"), "GlobalGroup F1")
    )
    deltas = native_english_deltas(f1)
    if not deltas.empty:
        write_csv(deltas, outdir / "globalgroup_native_vs_english.csv")
        section.blocks.append(Table(deltas, "Native minus English-translation F1"))
    for column, caption in (
        ("group_size", "group size (4-group games)"),
        ("n_groups", "group count (4-word games)"),
        ("ari", "ARI (4-word games)"),
        ("canprop_overlap", "CanProp word overlap (4-word games)"),
    ):
        table = difficulty_table(games, column)
        if not table.empty:
            write_csv(table, outdir / f"globalgroup_by_{column}.csv")
            section.blocks.append(Table(table, f"Game F1 by {caption}, nyt-seq excluded (Table 4)"))
    combos = difficulty_combinations(games)
    if not combos.empty:
        write_csv(game_counts(combos), outdir / "globalgroup_table12_counts.csv")
        table = combination_f1(combos)
        write_csv(table, outdir / "globalgroup_table12_f1.csv")
        section.blocks.append(Table(table, "Game F1 by ARI x word-overlap combination C1-C5, 4x4 games, nyt-seq excluded (Table 12)"))
    groups = group_frame(records, colour_lookup(runs))
    culture = cultural_differences(groups)
    if not culture.empty:
        write_csv(culture, outdir / "globalgroup_cultural.csv")
        section.blocks.append(
            Table(
                culture,
                "Mean F1, non-culturally minus culturally related groups, 4x4 games per subset; Mean over subsets (Tables 10 and 3)",
            )
        )
    table = tag_table(groups)
    if not table.empty:
        write_csv(table, outdir / "globalgroup_tags.csv")
        section.blocks.append(Table(table, "Per-group F1 by tag type, non-NYT 4x4 games (Tables 7-8)"))
    table = nyt_colour_table(groups)
    if not table.empty:
        write_csv(table, outdir / "globalgroup_nyt_colours.csv")
        section.blocks.append(Table(table, "nyt_shuf per-group F1 by Connections colour, 4x4 games (Table 9)"))
    if len(f1) >= 3 and not four_by_four(f1).empty:
        coords = pca_kmeans(four_by_four(f1))
        write_csv(coords, outdir / "globalgroup_pca.csv")
        section.blocks += [
            Table(coords, "PCA of per-subset mean 4x4 F1 with K-means clusters, k = 2 (Figure 2)"),
            Image(plots.pca_scatter(coords, outdir / "globalgroup_pca.png", "GlobalGroup: PCA of models, K-means (k = 2)"), "PCA"),
        ]
    else:
        section.blocks.append(Text("PCA and k-means need at least three models with GlobalGroup samples.", note=True))
    return section


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
