"""Matched fresh sets: ``triangulate data generate --matched TASK`` (issue 33, a contamination check).

A *fresh twin* of a published task holds newly sampled items whose difficulty distribution matches the
published items', one fresh item per published item in the same order (so ``--limit K`` on both sides
compares the first K published items with their K twins). The twin of task ``T`` is task ``T_fresh``.

GlobalGroup (``globalgroup_<subset>`` and ``globalgroup_<subset>_<g>x<w>``): games sampled by the paper's
procedure (seed 000 §3.2, :mod:`datasets_build.generate`) from the subset's grouping spreadsheet, matched per
subset and setting on the difficulty measures we can compute here:

* the game size, groups x words per group (seed 000 §4.2 "Game Size"): equal by construction;
* the number of culturally related groups in the game (seed 000 §5, Tables 3 and 10: culturally related
  groups score lower): equal per game, from the spreadsheets' ``Tag 1`` (NYT subsets: unlabelled);
* the ARI (seed 000 §4.2 / §6) when fastText vectors of the language are present
  (``cc.<lang>.300.bin`` in ``$TRIANGULATE_FASTTEXT_DIR``): computed with the same vectors on both sides and
  matched by nearest neighbour among :data:`ARI_CANDIDATES` candidates per published game.
  Without vectors the ARI is not matched (the word-overlap measure needs a candidate-proposal model run
  and is never matched). The dataset card says which measures a folder was matched on.

Unseen groups (issue 42): each fresh group keeps at most 2 of its topic's published words and takes the rest from an
open thesaurus (:mod:`datasets_build.fresh_words`), so no fresh group equals a published group; topics the thesaurus
cannot extend are left out. Subsets without such a resource, or whose culturally related counts cannot be matched
from the topics it extends, have no twin (:data:`UNTWINNED_SUBSETS`). No fresh game repeats another's groups.

clembench Taboo (seed 002): new target words matched on Zipf frequency and part of speech, with thesaurus related
words (:mod:`datasets_build.matched_clembench`). Wordle has no twin: :data:`NOT_TWINNED` says why.

Seeds (issue 42): a twin made from public code, public data and a public seed is public as soon as the code is.
The registered ``*_fresh`` tasks play :func:`fresh_folder`: the lab's private twin when ``data generate --matched
TASK --seed S --private`` wrote one (its card, rows and the report name "a private seed", never its value), else
the twin of :data:`DEFAULT_SEED`, generated on first use (reproducible: the tests use it).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from custom_metrics.topics import Embedder
from datasets_build import fresh_words, generate
from datasets_build import globalgroup as gg
from datasets_build.fresh_names import twin  # noqa: F401  (suite/spec.py reads it here)
from datasets_build.hub import CardInfo, atomic_dir, write_hub_folder
from plumbing.checks import first_n
from plumbing.errors import UserError
from plumbing.paths import data_root

#: candidate games drawn per published game when the ARI is matched (the nearest ARI is kept)
ARI_CANDIDATES = 6
#: draws allowed per published game before giving up
MAX_TRIES = 5000
#: the seed of the fresh twins the registered ``*_fresh`` tasks play
DEFAULT_SEED = 0
CLEM_GAMES = ("taboo",)
#: published tasks that have no fresh twin, and why (a one-line error for ``--matched`` and ``contamination:``)
NOT_TWINNED: dict[str, str] = {
    "wordle": (
        "plain Wordle has no fresh twin: every published episode sends the same prompt (nothing of the instance "
        "reaches the model before it plays), so contamination cannot help a model and a delta would measure only "
        "the targets' difficulty"
    )
}
PRIVATE = "private"
#: GlobalGroup subsets with a fresh twin: their groups take new words from an open thesaurus
#: (:mod:`datasets_build.fresh_words`; issue 42) and every game setting matches the published culturally related counts
FRESH_SUBSETS: tuple[str, ...] = ("en", "zh", "nyt_shuf")
_NO_THESAURUS = "no open lexical resource installed here gives new words in {lang}, so its groups could only be published ones"
_FEW_CULTURAL = (
    "WordNet gives new words for too few of its culturally related topics (names, local terms) to match the published "
    "count of culturally related groups per game in every setting"
)
#: the other subsets, and why they have no twin (issue 42: a twin of published groups catches no memorised group)
UNTWINNED_SUBSETS: dict[str, str] = {
    "es": _NO_THESAURUS.format(lang="Spanish"),
    "hi": _NO_THESAURUS.format(lang="Hindi"),
    "ar": _NO_THESAURUS.format(lang="Arabic"),
    **{s: _FEW_CULTURAL for s in ("es_en", "zh_en", "hi_en", "ar_en")},
    "nyt_seq": (
        "its test games are the NYT's own consecutive puzzles, whose groups cannot be recombined into new games with "
        "the published culturally related counts"
    ),
}
#: published task -> runner of the headline tasks that have a fresh twin (a suite's ``contamination:`` list)
TWINNED: dict[str, str] = {**{f"globalgroup_{s}": "eval" for s in FRESH_SUBSETS}, **{g: "play" for g in CLEM_GAMES}}


#: the built dataset each twinned task's source is (``data build`` writes the default twins once it built it)
SOURCE_DATASET: dict[str, str] = {**{f"globalgroup_{s}": gg.NAME for s in FRESH_SUBSETS}, **{g: "clembench" for g in CLEM_GAMES}}


def globalgroup_setting(task: str) -> tuple[str, int, int]:
    """(subset, groups, words) of ``globalgroup_<subset>`` (4x4) or ``globalgroup_<subset>_<g>x<w>``."""
    rest = task.removeprefix("globalgroup_")
    if rest in gg.SUBSETS:
        return rest, 4, 4
    subset, _, setting = rest.rpartition("_")
    g, _, w = setting.partition("x")
    if subset in gg.SUBSETS and g.isdigit() and w.isdigit() and (int(g), int(w)) in gg.settings_of(subset):
        return subset, int(g), int(w)
    raise UserError(f"--matched {task}: not a GlobalGroup task (globalgroup_<subset> or globalgroup_<subset>_<g>x<w>)")


# ------------------------------------------------------------------------------------ GlobalGroup


@dataclass
class Matched:
    """A fresh set and what it was matched on: ``published``/``fresh`` difficulty values per item."""

    rows: list[dict]
    matched_on: list[str]
    topics: tuple[int, int] = (0, 0)  # (topics with enough new words, topics of the sheet)
    published: dict[str, list] = field(default_factory=dict)
    fresh: dict[str, list] = field(default_factory=dict)


def cultural_count(groups: list[dict]) -> tuple[int, int]:
    """(culturally related groups, unlabelled groups) of a game: the exact-match key besides its size."""
    flags = [g["culturally_related"] for g in groups]
    return sum(f is True for f in flags), sum(f is None for f in flags)


def _as_groups(game: list[tuple[gg.Grouping, list[str]]]) -> list[dict]:
    return [{"topic": g.topic, "words": words, "culturally_related": g.culturally_related} for g, words in game]


def _published_splits(root: Path, subset: str, g: int, w: int) -> dict[str, list[dict]]:
    info = gg.SUBSETS[subset]
    flags = gg.cultural_flags(gg.read_groupings(root / "Grouping Datasets" / info.groupings))
    return {split: gg.read_setting(root, info, split, g, w, flags) for split in gg.SPLITS}


def published_games(root: Path, subset: str, g: int, w: int) -> tuple[list[dict], set]:
    """The published test games of a setting, and the group keys of every published game (dev and test)."""
    games = _published_splits(root, subset, g, w)
    return games["test"], {gg.groups_key(r["groups"]) for rows in games.values() for r in rows}


def topic_tags(games: dict[str, list[dict]]) -> dict[str, list[str]]:
    """topic -> the category tags its groups carry in the published games (the first non-empty; NYT: none), so a
    fresh game's groups keep them and the per-tag tables can be computed on the fresh side (issue 42)."""
    out: dict[str, list[str]] = {}
    for rows in games.values():
        for row in rows:
            for group in row["groups"]:
                if group.get("tags") and group["topic"] not in out:
                    out[group["topic"]] = list(group["tags"])
    return out


def freshen(grouping: gg.Grouping, size: int, pool: list[str], rng: random.Random) -> gg.Grouping:
    """``grouping`` with ``size`` words: :func:`fresh_words.kept_words` of its published words and new words from
    ``pool`` (its topic's candidates), so the group equals no published group and shares at most 2 words with one."""
    kept = fresh_words.kept_words(size)
    words = rng.sample(grouping.words, kept) + rng.sample(pool, size - kept)
    return gg.Grouping(grouping.topic, tuple(words), grouping.culturally_related, grouping.row)


def _draw(groupings: list[gg.Grouping], g: int, w: int, rng: random.Random, pools: dict[str, list[str]]):
    return generate.sample_game([freshen(x, w, pools[x.topic], rng) for x in groupings], g, w, rng)


def _candidates(groupings, pools, subset, g, w, rng, want: tuple[int, int], taken: set, how_many: int) -> list:
    """Up to ``how_many`` new games with the culturally related count ``want`` whose groups no published
    or earlier fresh game has; a one-line error when none is found in :data:`MAX_TRIES` draws."""
    found = []
    for _ in range(MAX_TRIES):
        game = _draw(groupings, g, w, rng, pools)
        if game is None:
            raise UserError(
                f"cannot form {g} groups of {w} words without repeated words or topics from the {subset} groupings with new words"
            )
        groups = _as_groups(game)
        key = gg.groups_key(groups)
        if cultural_count(groups) == want and key not in taken:
            found.append(game)
            taken.add(key)
            if len(found) == how_many:
                break
    if not found:
        raise UserError(f"no new {subset} {g}x{w} game with {want[0]} culturally related groups in {MAX_TRIES} draws")
    return found


def seed_label(seed: int, private: bool) -> str:
    """How a twin's seed is named in its rows, card and the report: ``private`` (never the value) or ``seed<N>``."""
    return PRIVATE if private else f"seed{seed}"


def matched_globalgroup(
    root: Path,
    task: str,
    seed: int = DEFAULT_SEED,
    count: int | None = None,
    embedder: Embedder | None = None,
    private: bool = False,
) -> Matched:
    """The fresh twin of GlobalGroup task ``task``: one game per published test game (the first ``count``)."""
    subset, g, w = globalgroup_setting(task)
    if subset in UNTWINNED_SUBSETS:
        raise UserError(f"--matched {task}: no fresh twin for GlobalGroup {subset}: {UNTWINNED_SUBSETS[subset]}")
    splits = _published_splits(root, subset, g, w)
    taken = {gg.groups_key(r["groups"]) for rows in splits.values() for r in rows}
    tags = topic_tags(splits)
    published = first_n(splits["test"], count, "--count", f"published {subset} {g}x{w} games")
    sheet = gg.read_groupings(root / "Grouping Datasets" / gg.SUBSETS[subset].groupings)
    pools = fresh_words.topic_pools(sheet, gg.SUBSETS[subset].language)
    usable = fresh_words.eligible(pools, w)
    groupings = [x for x in sheet if x.topic in usable]
    rng = random.Random(f"{seed}:{subset}_{g}x{w}")  # a str seed is hashed (SHA-512): the same on every run
    out = Matched([], ["groups x words", "culturally related groups per game"], topics=(len(usable), len(pools)))
    if embedder is not None:
        out.matched_on.append(f"ARI (fastText cc.{embedder.lang}.300.bin, nearest of {ARI_CANDIDATES} candidates)")
    config = f"{subset}_{g}x{w}"
    for index, pub in enumerate(tqdm(published, desc=f"matching {config}", unit="game", disable=len(published) < 50)):
        want = cultural_count(pub["groups"])
        out.published.setdefault("culturally_related", []).append(want[0])
        games = _candidates(groupings, pools, subset, g, w, rng, want, taken, ARI_CANDIDATES if embedder else 1)
        game = games[0]
        if embedder is not None:
            target = generate.game_ari(pub["groups"], embedder)
            aris = [generate.game_ari(_as_groups(c), embedder) for c in games]
            best = min(range(len(games)), key=lambda i: abs((aris[i] or 0.0) - (target or 0.0)))
            game = games[best]
            out.published.setdefault("ari", []).append(target)
        row = generate.game_row(
            subset, f"{config}_fresh{PRIVATE if private else seed}_{index:03d}", pub["game_number"], game, embedder, tags
        )
        out.fresh.setdefault("culturally_related", []).append(cultural_count(row["groups"])[0])
        if embedder is not None:
            out.fresh.setdefault("ari", []).append(row["ari"])
        out.rows.append(row)
    return out


def globalgroup_card(task: str, seed: int, matched: Matched, private: bool = False) -> CardInfo:
    subset, g, w = globalgroup_setting(task)
    made = "a private seed" if private else f"seed {seed}"
    body = (
        f"# Fresh twin of `{task}` ({made})\n\n"
        f"{len(matched.rows)} GlobalGroup games of {g} groups x {w} words, one per published `{subset}_{g}x{w}` test game "
        f"in the published order, sampled from the `{subset}` grouping spreadsheet by the paper's procedure (seed 000 "
        "§3.2, Appendix C: groupings without replacement, no repeated word or topic within a game"
        + f"). Each group keeps {fresh_words.kept_words(w)} of its topic's published words and takes the rest from "
        f"{fresh_words.SOURCE_NAMES.get(gg.SUBSETS[subset].language, 'an open thesaurus')} (words in no published "
        f"group of the subset), so no group equals a published group and none shares more than "
        f"{fresh_words.MAX_SHARED} words with a published group of its topic. {matched.topics[0]} of the "
        f"{matched.topics[1]} topics have enough new words; the others are left out. "
        f"Generated with `triangulate data generate --matched {task} --seed {'<private>' if private else seed}`"
        + (f" --count {len(matched.rows)}" if matched.rows else "")
        + ".\n\n"
        f"Matched per game on: {'; '.join(matched.matched_on)}. "
        + (
            ""
            if any(m.startswith("ARI") for m in matched.matched_on)
            else "The ARI was NOT matched (no fastText vectors were present: `ari` is null); "
        )
        + "the word-overlap measure (a candidate-proposal model run) is never matched.\n\n"
        "What this set is not: its topics are the published ones, and a thesaurus gives words of like meaning, so a "
        "word-play topic (a rule on the characters, a list of places) can take a word that does not follow its rule; "
        "a model that memorised the topics themselves, or the published pairs of words kept, is not caught. Use the "
        "task `globalgroup_<subset>_fresh`, or in lm-eval `dataset_kwargs: {path: <this folder>}` with "
        f"config `{subset}_{g}x{w}` (split `test`)."
    )
    return CardInfo(
        pretty_name=f"GlobalGroup fresh twin of {task} ({made})",
        license="apache-2.0",
        citation=(gg.CARD_DIR / "globalgroup_citation.txt").read_text(encoding="utf-8"),
        body=body,
        tags=("word-grouping", "abstract-reasoning", "synthetic", "contamination"),
    )


# ------------------------------------------------------------------------------------ CLI and the tasks' folders


def default_folder(task: str, seed: int = DEFAULT_SEED, private: bool = False) -> Path:
    """Where ``--matched TASK`` writes by default, and where the ``*_fresh`` tasks read: ``$TRIANGULATE_DATA/fresh/``
    (``<task>_private`` for a private seed: its name holds no seed)."""
    return data_root() / "fresh" / f"{task}_{seed_label(seed, private)}"


def refuse_untwinned(task: str) -> None:
    if task in NOT_TWINNED:
        raise UserError(f"--matched {task}: {NOT_TWINNED[task]}")


def write_matched(
    task: str,
    seed: int = DEFAULT_SEED,
    count: int | None = None,
    out: Path | None = None,
    related: dict | None = None,
    private: bool = False,
) -> dict:
    """Write the fresh twin of ``task`` as a Hub-ready folder; returns the summary with ``out`` and ``matched_on``.
    ``private``: the seed is the lab's secret: rows, card and folder name say "private", never the value."""
    from datasets_build import matched_clembench
    from datasets_build.sources import source_dir

    refuse_untwinned(task)
    out = (out or default_folder(task, seed, private)).expanduser().resolve()
    if task in CLEM_GAMES:
        kind = "a private seed" if private else f"seed {seed}"
        rows, card, features, config = matched_clembench.matched_rows(task, seed, count, related, kind, seed_label(seed, private))
        matched_on = ["Zipf frequency (within 0.1, band kept)", "parts of speech"]
    elif task.startswith("globalgroup_"):
        subset, g, w = globalgroup_setting(task)
        vectors = generate.vectors_for(gg.SUBSETS[subset].language)
        found = matched_globalgroup(source_dir(gg.NAME), task, seed, count, vectors, private)
        rows, card, features, config = found.rows, globalgroup_card(task, seed, found, private), gg.FEATURES, f"{subset}_{g}x{w}"
        matched_on = found.matched_on
    else:
        known = ", ".join([*(f"globalgroup_{s}[_<g>x<w>]" for s in gg.SUBSET_NAMES), *CLEM_GAMES])
        raise UserError(f"--matched {task}: no matched fresh set for this task; available: {known}")
    with atomic_dir(out) as tmp:
        summary = write_hub_folder(tmp, {config: {"test": rows}}, features, card)
    return {**summary, "out": out, "matched_on": matched_on}


def fresh_folder(task: str) -> Path:
    """The folder the registered twin of ``task`` reads: the private twin when one was written
    (``--matched TASK --seed S --private``), else the :data:`DEFAULT_SEED` twin, generated on first use."""
    private = default_folder(task, private=True)
    if (private / "README.md").is_file():
        return private
    folder = default_folder(task)
    if not (folder / "README.md").is_file():
        print(f"triangulate: generating the matched fresh set of {task} (seed {DEFAULT_SEED}) into {folder}", file=sys.stderr)
        write_matched(task, DEFAULT_SEED, None, folder)
    return folder


def write_default_twins(built: Iterable[str], rebuilt: Iterable[str] = ()) -> list[Path]:
    """The default-seed twins (:data:`DEFAULT_SEED`) of the tasks made from the datasets ``built`` (those ``data
    build`` just built or found unchanged): each written where the registered ``*_fresh`` task reads it, when it
    is missing or its source dataset was ``rebuilt``. So the ``*_fresh`` tasks read built data only, and need no
    upstream sources at run time (as every other task; issue 43 item 3). Returns the folders written."""
    have, fresh = set(built), set(rebuilt)
    todo = [t for t, src in SOURCE_DATASET.items() if src in have and (src in fresh or not (default_folder(t) / "README.md").is_file())]
    for task in tqdm(todo, desc="writing fresh twins", unit="twin", disable=not todo):
        write_matched(task, DEFAULT_SEED, None, default_folder(task))
    return [default_folder(t) for t in todo]


def load_globalgroup_fresh(config: str = "zh_4x4", **kwargs):
    """The ``globalgroup_<subset>_fresh`` tasks' data: the matched twin of config ``<subset>_<g>x<w>`` (generated on
    first use into :func:`default_folder`), with the built folder's ``dev`` split for few-shot examples."""
    from datasets_build.load import load_globalgroup

    subset, _, setting = config.rpartition("_")
    task = f"globalgroup_{subset}" if setting == "4x4" else f"globalgroup_{config}"
    return load_globalgroup(config, path=fresh_folder(task))
