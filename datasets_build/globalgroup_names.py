"""The GlobalGroup subsets by name: shared by the builder (:mod:`datasets_build.globalgroup`) and the side runner's
game (:mod:`multiturn.games.globalgroup_interactive`), so that registering a game's tasks loads no data library."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Subset:
    """One GlobalGroup subset: upstream folder, language of the words, culture of origin, groupings sheet."""

    name: str  # config prefix (underscores)
    folder: str  # upstream folder (hyphens)
    language: str
    culture: str
    groupings: str  # file in "Grouping Datasets/"
    flag_in_tag1: bool  # game CSV's Tag 1 is the culturally-related flag (ar, hi) instead of a category tag


SUBSETS: dict[str, Subset] = {
    s.name: s
    for s in (
        Subset("en", "en", "en", "en", "all_english_grouping.xlsx", False),
        Subset("es", "es", "es", "es", "all_spanish_grouping.xlsx", False),
        Subset("es_en", "es-en", "en", "es", "all_translated_spanish_grouping.xlsx", False),
        Subset("zh", "zh", "zh", "zh", "all_chinese_grouping.xlsx", False),
        Subset("zh_en", "zh-en", "en", "zh", "all_translated_chinese_grouping.xlsx", False),
        Subset("hi", "hi", "hi", "hi", "all_hindi_grouping.xlsx", True),
        Subset("hi_en", "hi-en", "en", "hi", "all_translated_hindi_grouping.xlsx", True),
        Subset("ar", "ar", "ar", "ar", "all_arabic_grouping.xlsx", True),
        Subset("ar_en", "ar-en", "en", "ar", "all_translated_arabic_grouping.xlsx", True),
        Subset("nyt_shuf", "nyt-shuf", "en", "nyt", "all_nyt_grouping_game511.xlsx", False),
        Subset("nyt_seq", "nyt-seq", "en", "nyt", "all_nyt_grouping_game511.xlsx", False),
    )
}
SUBSET_NAMES: tuple[str, ...] = tuple(SUBSETS)  # the one list of GlobalGroup subsets, in table order
