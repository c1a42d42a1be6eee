"""GlobalGroup analyses follow seed 000's rules (Sec. 5-6, Tables 3, 4, 10, Figure 2).

Table 4: "The averaged F1 score ... across each 4-word game (4-group for group size analysis) whose group
size, group count, ARI, and Word Overlap score fell within the specified ranges ... excluding nyt-seq",
ARI ranges [-0.5, 0.0], (0.0, 0.5], (0.5, 1.0]; overlap [0.0, 0.75], (0.75, 1.5], (1.5, 2.25], (2.25, 3.0].
Tables 3/10: "the average difference in performance in groups labeled as non-culturally-related versus
culturally-related in 4x4 games per dataset subset", then "averaged across all dataset subsets".
Figure 2: "a vector of their mean 4x4 game results by dataset subset ... K-means clustering with k=2".
"""

from __future__ import annotations

import pandas as pd
import pytest

from triangulation.report.analyses.globalgroup import (
    cultural_differences,
    difficulty_combinations,
    difficulty_table,
    four_by_four,
    game_counts,
    game_frame,
    group_frame,
    nyt_colour_table,
    pca_kmeans,
    tag_table,
)

# Seed 000 Table 10, GPT-3.5-Turbo row (es es-en zh zh-en hi hi-en ar ar-en en) and its Mean (Table 3)
TABLE10_GPT35 = [0.128, 0.130, 0.054, 0.041, 0.026, 0.024, 0.054, 0.036, -0.047]
TABLE3_GPT35 = 0.050


def _game(subset, g, w, f1, ari=None, overlap=None):
    return {
        "model": "m",
        "subset": subset,
        "setting": subset if (g, w) == (4, 4) else f"{subset}_{g}x{w}",
        "n_groups": g,
        "group_size": w,
        "ari": ari,
        "canprop_overlap": overlap,
        "group_f1": f1,
    }


def _games() -> pd.DataFrame:
    return pd.DataFrame(
        [
            _game("en", 4, 4, 0.9, ari=0.0, overlap=0.75),  # ARI [-0.5, 0.0] (closed left range), overlap [0.0, 0.75]
            _game("en", 4, 3, 0.5, ari=-0.2, overlap=0.2),  # 3-word: only in the group-size row
            _game("en", 2, 4, 0.7, ari=0.6, overlap=0.8),  # 2-group, 4-word: group count 2, ARI (0.5, 1.0], overlap (0.75, 1.5]
            _game("es", 4, 4, 0.3, ari=0.4, overlap=2.5),  # ARI (0.0, 0.5], overlap (2.25, 3.0]
            _game("es", 3, 4, 0.6, ari=0.55, overlap=3.4),  # overlap above 3.0: in no range
            _game("nyt_seq", 4, 4, 0.0, ari=0.9, overlap=0.1),  # nyt-seq: excluded everywhere
            _game("nyt_shuf", 4, 4, 0.8, ari=0.3, overlap=1.6),  # nyt-shuf stays
        ]
    )


def test_table4_group_size_on_4_group_games_only():
    """Group size rows use 4-group games: size 3 -> 0.5; size 4 -> mean(0.9, 0.3, 0.8) = 2.0 / 3 (nyt-seq out)."""
    table = difficulty_table(_games(), "group_size")
    assert table["m"].to_dict() == pytest.approx({3: 0.5, 4: 2.0 / 3})


def test_table4_group_count_on_4_word_games_only():
    """Group count rows use 4-word games: 2 -> 0.7, 3 -> 0.6, 4 -> mean(0.9, 0.3, 0.8); the 4x3 game is out."""
    table = difficulty_table(_games(), "n_groups")
    assert table["m"].to_dict() == pytest.approx({2: 0.7, 3: 0.6, 4: 2.0 / 3})


def test_table4_ari_fixed_ranges():
    """ARI: 0.0 -> [-0.5, 0.0] (0.9); 0.4, 0.3 -> (0.0, 0.5] (mean(0.3, 0.8) = 0.55); 0.6, 0.55 -> (0.5, 1.0]
    (mean(0.7, 0.6) = 0.65). The 4x3 game (ARI -0.2) and nyt-seq (0.9) are not counted."""
    table = difficulty_table(_games(), "ari")
    assert list(table.index) == ["[-0.5, 0.0]", "(0.0, 0.5]", "(0.5, 1.0]"]
    assert table["m"].tolist() == pytest.approx([0.9, 0.55, 0.65])


def test_table4_overlap_fixed_ranges():
    """Overlap: 0.75 -> [0.0, 0.75] (0.9); 0.8 -> (0.75, 1.5] (0.7); 1.6 -> (1.5, 2.25] (0.8); 2.5 -> (2.25, 3.0]
    (0.3); 3.4 is in no range; nyt-seq's 0.1 and the 4x3 game's 0.2 are not counted."""
    table = difficulty_table(_games(), "canprop_overlap")
    assert list(table.index) == ["[0.0, 0.75]", "(0.75, 1.5]", "(1.5, 2.25]", "(2.25, 3.0]"]
    assert table["m"].tolist() == pytest.approx([0.9, 0.7, 0.8, 0.3])


def _group(model, subset, setting, cultural, f1):
    return {"model": model, "subset": subset, "setting": setting, "culturally_related": cultural, "f1": f1}


def test_tables_3_and_10_per_subset_difference_then_mean():
    """Per subset (4x4 only): mean non-cultural F1 - mean cultural F1; Mean = unweighted mean over subsets.

    en: non-cultural (1.0, 0.8) -> 0.9, cultural 0.5 -> 0.4; es: non-cultural 0.6, cultural (0.9, 0.7, 0.8)
    -> 0.8 -> -0.2. Mean = (0.4 - 0.2) / 2 = 0.1 (pooling every group instead would give
    mean(1.0, 0.8, 0.6) - mean(0.5, 0.9, 0.7, 0.8) = 0.8 - 0.725 = 0.075). The 2x4 game, nyt_shuf
    and nyt_seq groups do not count.
    """
    rows = [
        _group("m", "en", "en", False, 1.0),
        _group("m", "en", "en", False, 0.8),
        _group("m", "en", "en", True, 0.5),
        _group("m", "es", "es", False, 0.6),
        _group("m", "es", "es", True, 0.9),
        _group("m", "es", "es", True, 0.7),
        _group("m", "es", "es", True, 0.8),
        _group("m", "en", "en_2x4", True, 0.0),  # not 4x4
        _group("m", "nyt_shuf", "nyt_shuf", True, 0.0),
    ]
    table = cultural_differences(pd.DataFrame(rows))
    assert list(table.columns) == ["es", "en", "Mean"]
    assert table.loc["m"].tolist() == pytest.approx([-0.2, 0.4, 0.1])


def test_table3_mean_is_the_mean_of_table10_subsets():
    """Seed 000 publishes both: Table 3's GPT-3.5-Turbo Mean (0.050) is the mean of its Table 10 row (0.0496)."""
    groups = []
    for subset, diff in zip(("es", "es_en", "zh", "zh_en", "hi", "hi_en", "ar", "ar_en", "en"), TABLE10_GPT35):
        groups += [_group("gpt-3.5-turbo", subset, subset, False, 0.5 + diff), _group("gpt-3.5-turbo", subset, subset, True, 0.5)]
    table = cultural_differences(pd.DataFrame(groups))
    assert table.loc["gpt-3.5-turbo", "Mean"] == pytest.approx(TABLE3_GPT35, abs=5e-4)
    assert table.loc["gpt-3.5-turbo", "zh"] == pytest.approx(0.054)


def test_figure2_pca_on_4x4_subsets_with_two_kmeans_clusters():
    """Two clear model families (high vs low F1 on every 4x4 subset) -> K-means with k = 2 splits them;
    non-4x4 settings (``en_2x4``) are not part of the vectors."""
    f1 = pd.DataFrame(
        {"en": [0.9, 0.92, 0.3, 0.32], "zh": [0.8, 0.82, 0.2, 0.25], "hi": [0.7, 0.69, 0.1, 0.12], "en_2x4": [0.0, 1.0, 0.0, 1.0]},
        index=["closed-a", "closed-b", "open-a", "open-b"],
    )
    assert list(four_by_four(f1).columns) == ["en", "zh", "hi"]
    coords = pca_kmeans(four_by_four(f1))
    assert coords["cluster"].nunique() == 2
    assert (
        coords.loc["closed-a", "cluster"]
        == coords.loc["closed-b", "cluster"]
        != coords.loc["open-a", "cluster"]
        == coords.loc["open-b", "cluster"]
    )


def _tagged_group(subset, g, w, f1, tag=None, colour=None):
    return {
        "model": "m",
        "subset": subset,
        "setting": subset if (g, w) == (4, 4) else f"{subset}_{g}x{w}",
        "f1": f1,
        "tag": tag,
        "colour": colour,
        "culturally_related": None,
    }


def test_tables_7_to_9_count_only_4_group_4_word_games():
    """Seed 000 Tables 7-8: "across each non-NYT 4-group, 4-word game"; Table 9: "across each 4-group,
    4-word nyt shuf. game". Groups of a 2x4 en game (F1 1.0) and a 4x3 nyt_shuf game (F1 1.0) are left out.

    Everyday: 4x4 en groups 0.5 and 0.25 -> 0.375 (pooling the 2x4 group 1.0 in would give 0.583);
    Linguistic: 0.6 (nyt_shuf groups are not in Tables 7-8); Table 9 yellow: 4x4 nyt_shuf 0.2 and 0.4 ->
    0.3 (with the 4x3 game's 1.0: 0.533)."""
    groups = pd.DataFrame(
        [
            _tagged_group("en", 4, 4, 0.5, tag="Everyday"),
            _tagged_group("es", 4, 4, 0.25, tag="Everyday"),
            _tagged_group("en", 2, 4, 1.0, tag="Everyday"),
            _tagged_group("en", 4, 4, 0.6, tag="Linguistic"),
            _tagged_group("nyt_shuf", 4, 4, 0.2, tag="Everyday", colour="yellow"),
            _tagged_group("nyt_shuf", 4, 4, 0.4, tag="Everyday", colour="yellow"),
            _tagged_group("nyt_shuf", 4, 3, 1.0, tag="Everyday", colour="yellow"),
            _tagged_group("nyt_shuf", 4, 4, 0.8, tag="Linguistic", colour="purple"),
        ]
    )
    tags = tag_table(groups)
    assert tags.loc["Everyday", "m"] == pytest.approx(0.375)
    assert tags.loc["Linguistic", "m"] == pytest.approx(0.6)
    colours = nyt_colour_table(groups)
    assert list(colours.index) == ["yellow", "purple"]
    assert colours.loc["yellow", "m"] == pytest.approx(0.3) and colours.loc["purple", "m"] == pytest.approx(0.8)


# Seed 000 Table 12 "Game Count" rows (C1-C5) per dataset background, 4x4 test games
TABLE12_COUNTS = {
    "en": [32, 0, 217, 24, 12],
    "es": [31, 0, 231, 21, 4],
    "es-en": [10, 5, 215, 27, 14],
    "zh": [1, 0, 295, 4, 50],
    "zh-en": [13, 2, 231, 26, 14],
    "hi-en": [7, 3, 259, 10, 56],
    "ar": [27, 0, 270, 2, 12],
    "ar-en": [38, 4, 226, 15, 10],
    "nyt-shuf": [37, 5, 181, 44, 4],
}


def _published_4x4_games(upstream) -> pd.DataFrame:
    """One row per 4x4 test game from the published ``Scored Games Datasets`` (ARI and overlap are the same on
    the four group rows of a game)."""
    import csv

    rows = []
    for folder in TABLE12_COUNTS:
        path = upstream / "globalgroup" / "Scored Games Datasets" / folder / "test" / f"scored_#{folder}#_#4#_#4#_#300#_#test#.csv"
        with open(path, newline="", encoding="utf-8") as fh:
            records = list(csv.DictReader(fh))
        for first in records[::4]:
            ari, overlap = float(first["Average Adjusted Rand Index"]), float(first["Average CanProp Group Overlap"])
            rows.append({"subset": folder.replace("-", "_"), "n_groups": 4, "group_size": 4, "ari": ari, "canprop_overlap": overlap})
    return pd.DataFrame(rows)


def test_table12_game_counts_from_the_published_scored_games(upstream):
    """Seed 000 Table 12: "Results are divided by 2 ranges for the ARI and word overlap scores, creating 4
    combinations (C1-4 ...) ... The number of games for each dataset background for each combination is
    provided as Game Count. C5 is a more refined difficulty metric combination": every published count
    (hi needs three scored files MISSING.txt lists) is reproduced from the published ARI and overlap columns."""
    counts = game_counts(difficulty_combinations(_published_4x4_games(upstream)))
    for folder, expected in TABLE12_COUNTS.items():
        assert counts[folder.replace("-", "_")].tolist() == expected, folder


def test_integrated_difficulty_app_k3(upstream):
    """Seed 000 App. K.3: project group count from [2, 4], ARI from [-1, 1], overlap from [0, 3] onto [0, 1];
    weight by 1.000, -0.900, 0.800; the sum lies in [-0.9, 1.8] and is projected onto [0, 1].

    By hand: a 4-group game with ARI 0 and overlap 1.5 -> 1.0 x 1 - 0.9 x 0.5 + 0.8 x 0.5 = 0.95 ->
    (0.95 + 0.9) / 2.7 = 0.6852; easiest (2 groups, ARI 1, overlap 0) -> -0.9 -> 0; hardest (4, -1, 3) -> 1.8 -> 1."""
    from custom_metrics.difficulty import integrated_difficulty

    assert integrated_difficulty(4, 0.0, 1.5) == pytest.approx(1.85 / 2.7)
    assert integrated_difficulty(2, 1.0, 0.0) == pytest.approx(0.0) and integrated_difficulty(4, -1.0, 3.0) == pytest.approx(1.0)
    combos = difficulty_combinations(_published_4x4_games(upstream))
    by_subset = combos.groupby("subset")["integrated_difficulty"].mean()
    # the paper assumes overlap <= 3: its games are within [0, 1]; 187 of the 2,700 published 4x4 games have a
    # larger overlap (not clipped: 79 of them score above 1)
    inside = combos["canprop_overlap"] <= 3
    assert combos.loc[inside, "integrated_difficulty"].between(0, 1).all() and (~inside).sum() == 187
    assert (combos["integrated_difficulty"] > 1).sum() == 79
    # nyt-shuf (the most word overlap: Table 12's largest C4 count) is the hardest background on average
    assert by_subset.idxmax() == "nyt_shuf"


def test_sampled_tasks_are_their_own_rows():
    """Issue 41 item 4: a model run greedy and with App. B's sampling gets two rows, never one pooled row."""
    from triangulation.report.analyses.globalgroup import decoding_label

    assert decoding_label("m", "globalgroup_zh") == "m"
    assert decoding_label("m", "globalgroup_zh_sampled") == "m (sampled)"
    assert decoding_label("m", "globalgroup_zh_4x2") == "m"


def test_games_without_a_doc_give_empty_tables_not_a_crash():
    """Logged samples whose ``doc`` is empty (a run that logged no document) have no gold groups: the group tables are
    empty (the report leaves them out) instead of failing on a missing column."""
    records = [("m", "globalgroup_en", {"doc": {}, "resps": [["x"]], "group_f1": 0.0})]
    groups = group_frame(records)
    assert groups.empty and {"setting", "subset"} <= set(groups.columns)
    assert cultural_differences(groups).empty and tag_table(groups).empty and nyt_colour_table(groups).empty
    assert not game_frame(records).empty
