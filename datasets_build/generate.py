"""``triangulate data generate``: sample fresh games (a replacement for a contaminated test set).

Generators register with ``@register_generator(name, add_arguments=...)``; the CLI defines the
common flags (``--benchmark``, ``--seed``, ``--count``, ``--out``) and each generator's
``add_arguments(group)`` adds its own (``--subset``/``--groups``/``--size`` here; e.g. ``--game`` for
clembench). A generator is ``fn(args) -> {"configs": n, "rows": n, "out": Path}``.

GlobalGroup (seed 000 §3.2, Appendix C): a game samples ``m`` groupings from the subset's grouping
spreadsheet and ``n`` words from each, with no repeated word or topic within a game. ``nyt_seq``
games take the 4 groupings of one original Connections game (the spreadsheet's rows come in blocks
of 4 per game; all 511 published nyt_seq games are such blocks), ``nyt_shuf`` samples freely.

Difficulty: each fresh game's ``ari`` (seed 000 §4.2 / §6, the published "Average Adjusted Rand
Index" column) is computed here with :func:`custom_metrics.difficulty.kmeans_ari` when the
fastText vectors of the game's language (``cc.<lang>.300.bin`` in ``$TRIANGULATE_FASTTEXT_DIR``) are
present, and null otherwise; the word-overlap columns stay null (they need a candidate-proposal
model run: the ``globalgroup_overlap_*`` tasks).
"""

from __future__ import annotations

import argparse
import math
import random
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from custom_metrics.difficulty import kmeans_ari
from custom_metrics.topics import Embedder, fasttext_path, get_embedder
from datasets_build import globalgroup as gg
from datasets_build.hub import CardInfo, atomic_dir, write_hub_folder
from plumbing.checks import number_arg
from plumbing.errors import UserError
from plumbing.paths import data_root
from plumbing.registry import Registry

GENERATOR_MODULES: tuple[str, ...] = ("datasets_build.generate", "datasets_build.clembench_fresh")


@dataclass(frozen=True)
class Generator:
    name: str
    run: Callable[[argparse.Namespace], dict]
    add_arguments: Callable[[argparse._ArgumentGroup], None] | None = None
    help: str = ""


GENERATORS: Registry[Generator] = Registry("generator", GENERATOR_MODULES)


#: ``--count`` of ``--benchmark``: the paper's test size
DEFAULT_COUNT = 300


def register_generator(name: str, add_arguments: Callable | None = None, help: str = ""):
    """Register ``fn(args) -> summary`` as ``--benchmark name``; ``add_arguments(group)`` adds its flags."""

    def wrap(fn: Callable[[argparse.Namespace], dict]):
        GENERATORS.add(name, Generator(name, fn, add_arguments, help))
        return fn

    return wrap


def generators() -> dict[str, Generator]:
    return GENERATORS.items()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The common flags plus every registered generator's own flags (one argument group each)."""
    gens = generators()
    parser.add_argument("--benchmark", choices=sorted(gens), help="which benchmark to sample")
    parser.add_argument(
        "--matched",
        metavar="TASK",
        help="write the fresh twin of a published task, matched on its difficulty (globalgroup_<subset>[_<g>x<w>], wordle, taboo)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed and flags -> same games)")
    parser.add_argument(
        "--private",
        action="store_true",
        help="with --matched: the seed is the lab's secret; the twin goes to $TRIANGULATE_DATA/fresh/<task>_private, which "
        "the *_fresh tasks then play, and nothing written names the seed's value",
    )
    parser.add_argument(
        "--count",
        type=number_arg(integer=True, minimum=1),
        default=None,
        help=f"number of games (default {DEFAULT_COUNT}, the paper's test size; --matched: the first N published, default all)",
    )
    parser.add_argument("--out", type=Path, help="output folder (default: under $TRIANGULATE_DATA/generated/)")
    for gen in gens.values():
        if gen.add_arguments is not None:
            gen.add_arguments(parser.add_argument_group(f"{gen.name} options", gen.help or None))


def run_generator(args: argparse.Namespace) -> dict:
    """Fresh games of ``--benchmark`` (``--matched`` twins: :func:`datasets_build.matched.write_matched`, dispatched by the CLI)."""
    if not args.benchmark:
        raise UserError("give --benchmark NAME (fresh games) or --matched TASK (a fresh twin of a published task)")
    gens = generators()
    if args.benchmark not in gens:
        raise UserError(f"unknown benchmark {args.benchmark!r}; available: {', '.join(sorted(gens))}")
    if args.count is None:
        args.count = DEFAULT_COUNT
    return gens[args.benchmark].run(args)


# ------------------------------------------------------------------------------------ GlobalGroup


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()


def _pick_words(rng: random.Random, grouping: gg.Grouping, size: int, used_words: set[str]) -> list[str] | None:
    available = [w for w in grouping.words if _norm(w) not in used_words]
    return rng.sample(available, size) if len(available) >= size else None


def sample_game(groupings: list[gg.Grouping], n_groups: int, size: int, rng: random.Random) -> list[tuple[gg.Grouping, list[str]]] | None:
    """``n_groups`` groupings in random order with ``size`` words each; no repeated word or topic. None if impossible."""
    chosen: list[tuple[gg.Grouping, list[str]]] = []
    used_words: set[str] = set()
    used_topics: set[str] = set()
    for grouping in rng.sample(groupings, len(groupings)):
        if _norm(grouping.topic) in used_topics:
            continue
        words = _pick_words(rng, grouping, size, used_words)
        if words is None:
            continue
        chosen.append((grouping, words))
        used_topics.add(_norm(grouping.topic))
        used_words.update(_norm(w) for w in words)
        if len(chosen) == n_groups:
            return chosen
    return None


def sample_sequential_game(
    groupings: list[gg.Grouping], size: int, rng: random.Random, tries: int = 100
) -> list[tuple[gg.Grouping, list[str]]]:
    """The 4 groupings of one random original Connections game (spreadsheet rows 4k..4k+3), ``size`` words each."""
    games = len(groupings) // 4
    for _ in range(tries):
        k = rng.randrange(games)
        chosen, used = [], set()
        for grouping in groupings[4 * k : 4 * k + 4]:
            words = _pick_words(rng, grouping, size, used)
            if words is None:
                break
            chosen.append((grouping, words))
            used.update(_norm(w) for w in words)
        topics = {_norm(g.topic) for g, _ in chosen}
        if len(chosen) == 4 and len(topics) == 4:
            return chosen
    raise UserError(f"no Connections game with 4 distinct topics and {size} distinct words per group found in {tries} tries")


def vectors_for(language: str) -> Embedder | None:
    """The fastText embedder of a language when ``cc.<lang>.300.bin`` is present, else None (no warning)."""
    path = fasttext_path(language)
    return get_embedder(language) if path is not None and path.is_file() else None


def game_ari(groups: list[dict], embedder: Embedder | None) -> float | None:
    """The game's ARI (seed 000 §6 "Adjusted Rand Index": "We represent words in each ground-truth group
    using FastText embeddings and apply K-means clustering, setting k to the number of groups in a
    game"), None without vectors or when undefined (NaN: fewer than 2 groups)."""
    if embedder is None:
        return None
    value = kmeans_ari([g["words"] for g in groups], embedder)
    return None if math.isnan(value) else value


def game_row(
    subset: str,
    gid: str,
    number: int,
    game: list[tuple[gg.Grouping, list[str]]],
    embedder: Embedder | None,
    tags: dict[str, list[str]] | None = None,
) -> dict:
    """One fresh game as a dataset row (the builder's schema, split ``test``): ``ari`` from ``embedder``
    (:func:`game_ari`, null without one), the word-overlap columns null, each group's ``tags`` from ``tags``
    (topic -> the published groups' tags; empty without)."""
    info = gg.SUBSETS[subset]
    groups = [
        {"topic": g.topic, "words": words, "tags": list((tags or {}).get(g.topic, [])), "culturally_related": g.culturally_related}
        for g, words in game
    ]
    return {
        "id": gid,
        "subset": subset,
        "language": info.language,
        "culture": info.culture,
        "split": "test",
        "game_number": number,
        "n_groups": len(groups),
        "group_size": len(groups[0]["words"]),
        "words": gg.shuffled_pool(groups, gid),
        "groups": groups,
        "repeat_of": None,
        **{k: None for k in gg.DIFFICULTY_COLUMNS},
        "ari": game_ari(groups, embedder),
        "canprop_response": None,
        "canprop_prompt": None,
    }


def generate_globalgroup(
    root: Path, subset: str, n_groups: int, size: int, count: int, seed: int, embedder: Embedder | None = None
) -> list[dict]:
    """``count`` fresh games as dataset rows (the builder's schema, split ``test``).

    ``ari`` is filled from ``embedder`` (:func:`game_ari`; pass :func:`vectors_for` of the subset's
    language) and null without one; the word-overlap columns are null."""
    if subset not in gg.SUBSETS:
        raise UserError(f"unknown GlobalGroup subset {subset!r}; choose from {', '.join(gg.SUBSETS)}")
    info = gg.SUBSETS[subset]
    groupings = gg.read_groupings(root / "Grouping Datasets" / info.groupings)
    if size < 1 or n_groups < 1:
        raise UserError("--groups and --size must be at least 1")
    too_small = [g for g in groupings if len(g.words) < size]
    if len(too_small) == len(groupings):
        raise UserError(f"no {subset} grouping has {size} words (groupings have at most {max(len(g.words) for g in groupings)})")
    if subset == "nyt_seq" and n_groups != 4:
        raise UserError("nyt_seq games keep the 4 groups of one Connections game: use --groups 4")
    rng = random.Random(seed)
    config = f"{subset}_{n_groups}x{size}"
    rows = []
    for index in range(count):
        if subset == "nyt_seq":
            game = sample_sequential_game(groupings, size, rng)
        else:
            game = sample_game(groupings, n_groups, size, rng)
            if game is None:
                raise UserError(
                    f"cannot form {n_groups} groups of {size} words without repeated words or topics from the "
                    f"{len(groupings)} {subset} groupings"
                )
        rows.append(game_row(subset, f"{config}_gen{seed}_{index:03d}", index, game, embedder))
    return rows


def _globalgroup_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--subset", choices=list(gg.SUBSETS), help="GlobalGroup subset (grouping spreadsheet) to sample from")
    group.add_argument("--groups", type=int, default=4, help="groups per game (default 4)")
    group.add_argument("--size", type=int, default=4, help="words per group (default 4)")


@register_generator("globalgroup", add_arguments=_globalgroup_arguments, help="sample GlobalGroup games (seed 000 §3.2)")
def run_globalgroup(args: argparse.Namespace) -> dict:
    from datasets_build.sources import source_dir

    if not getattr(args, "subset", None):
        raise UserError("--benchmark globalgroup needs --subset (one of " + ", ".join(gg.SUBSETS) + ")")
    root = source_dir(gg.NAME)
    embedder = vectors_for(gg.SUBSETS[args.subset].language)
    rows = generate_globalgroup(root, args.subset, args.groups, args.size, args.count, args.seed, embedder)
    config = f"{args.subset}_{args.groups}x{args.size}"
    out = (args.out or data_root() / "generated" / f"globalgroup_{config}_seed{args.seed}").expanduser().resolve()
    body = (
        f"Freshly sampled GlobalGroup games: {args.count} games of {args.groups} groups x {args.size} words from the "
        f"`{args.subset}` grouping spreadsheet, seed {args.seed}, by the procedure of the paper (§3.2, Appendix C: "
        "groupings sampled without replacement, no repeated word or topic within a game"
        + ("; nyt_seq: the 4 groups of one original Connections game" if args.subset == "nyt_seq" else "")
        + "). Generated with `triangulate data generate --benchmark globalgroup "
        f"--subset {args.subset} --groups {args.groups} --size {args.size} --count {args.count} --seed {args.seed}`.\n\n"
        "Same schema as the `globalgroup` dataset; `tags` are empty (the grouping spreadsheets carry only the "
        "culturally related flag). "
        + (
            f"`ari` was computed with the fastText vectors `cc.{gg.SUBSETS[args.subset].language}.300.bin` "
            "(K-means with k = the number of groups on the words' fastText vectors, adjusted Rand index "
            "against the gold groups, mean over 10 K-means seeds; paper §6)"
            if embedder is not None
            else "`ari` is null (no fastText vectors were present when the games were generated)"
        )
        + "; the word-overlap columns are null. Use it in lm-eval with "
        f"`dataset_kwargs: {{path: <this folder>}}` and config `{config}` (split `test`)."
    )
    card = CardInfo(
        pretty_name=f"GlobalGroup generated games ({config}, seed {args.seed})",
        license="apache-2.0",
        citation=(gg.CARD_DIR / "globalgroup_citation.txt").read_text(encoding="utf-8"),
        body=body,
        tags=("word-grouping", "abstract-reasoning", "synthetic"),
    )
    with atomic_dir(out) as tmp:
        summary = write_hub_folder(tmp, {config: {"test": rows}}, gg.FEATURES, card)
    return {**summary, "out": out}
