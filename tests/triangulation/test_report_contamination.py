"""Published vs fresh (issue 33): scripted players scored by the real GlobalGroup and clembench scoring on the
published items and on their matched fresh twins; the delta, its bootstrap interval and the flag."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from custom_metrics.globalgroup import process_results
from datasets_build import matched, matched_clembench
from datasets_build.clembench import playable
from datasets_build.clembench_upstream import load_instances
from datasets_build.prompts import globalgroup_doc_to_target
from multiturn.games.clem.catalog import GAMES
from multiturn.games.clem.common import PLAYER_A, PLAYER_B
from multiturn.games.clem.replay import play_game
from plumbing.stats import bootstrap_difference
from triangulation.report.abilities import load_taxonomy
from triangulation.report.analyses import contamination
from triangulation.runs.results_io import Run

N = 200  # items per side for GlobalGroup (the issue: the chance player on 200 seeded items)


# ------------------------------------------------------------------ scripted players, real scoring


def gold_reply(doc) -> str:
    return globalgroup_doc_to_target(doc)


def chance_reply(doc, rng: random.Random) -> str:
    """The chance player's GlobalGroup answer: a random partition of the pool into the game's group shape."""
    words = list(doc["words"])
    rng.shuffle(words)
    size = doc["group_size"]
    return globalgroup_doc_to_target(
        {"groups": [{"topic": f"group {i}", "words": words[i : i + size]} for i in range(0, len(words), size)]}
    )


def gg_scores(docs, reply) -> list[dict]:
    return [process_results(doc, [reply(doc)]) for doc in docs]


def scripted_player(game: str, role: str, target: str, knows_target: bool, rng: random.Random):
    """The memoriser's reply when ``knows_target`` (Wordle: guess the target; Taboo: a clue that cannot hit a taboo
    word, and the target as the guess), else the game's own random reply of the right form (the chance player)."""
    factory = GAMES[game]
    cls = getattr(factory, "func", factory)

    def respond(messages):
        if knows_target and game == "wordle":
            return f"guess: {target}\nexplanation: I remember it"
        if knows_target:
            return f"GUESS: {target}" if role == PLAYER_B else "CLUE: zyxw qvkj"
        return cls.chance_reply(SimpleNamespace(role=role, messages=messages), rng)

    return respond


def clem_scores(game: str, episodes: list[dict], knows_target: bool, seed: int, repeat: int = 1) -> list[dict]:
    """Each episode played ``repeat`` times (seeded) by the game master with :func:`scripted_player` in both roles."""
    out = []
    for r in range(repeat):
        rng = random.Random(seed * 1000 + r)
        for episode in episodes:
            players = {role: scripted_player(game, role, episode["target_word"], knows_target, rng) for role in (PLAYER_A, PLAYER_B)}
            out.append(play_game(GAMES[game](episode), players).scores())
    return out


# ------------------------------------------------------------------ fake runs on disk


def write_run(folder: Path, model: str, items: dict[str, list[dict]], metric: dict[str, str]) -> Run:
    """A run of ``model`` with lm-eval-style samples (GlobalGroup) or play episodes (clembench) per task."""
    folder.mkdir(parents=True, exist_ok=True)
    results, samples = {}, {}
    for task, rows in items.items():
        path = folder / f"{model}_{task}.jsonl"
        if task.startswith("globalgroup"):
            lines = [{"doc_id": i, "filter": "none", **r} for i, r in enumerate(rows)]
            values = {m: sum(r[m] for r in rows) / len(rows) for m in ("group_f1",)}
        else:
            lines = [{"id": str(i), "task": task, "failed": False, "scores": r} for i, r in enumerate(rows)]
            values = {"clemscore": sum(contamination.episode_value(r, "clemscore") for r in rows) / len(rows)}
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        results[task] = {f"{k},none": v for k, v in values.items()}
        samples[task] = path
    return Run(model=model, path=folder / "results.json", date="2026-11-27", results=results, samples=samples)


@pytest.fixture(scope="module")
def docs(upstream):
    root = upstream / "globalgroup"
    published, _ = matched.published_games(root, "zh", 4, 4)
    fresh = matched.matched_globalgroup(root, "globalgroup_zh", seed=0, count=N).rows
    return published[:N], fresh


@pytest.fixture(scope="module")
def episodes(upstream):
    return {g: ([playable(g, e) for e in load_instances(g)], matched_clembench.matched_rows(g, 0)[0]) for g in ("wordle", "taboo")}


def _fresh_episodes(rows):
    return [json.loads(r["instance"]) for r in rows]


@pytest.fixture(scope="module")
def clem_data(upstream, tmp_path_factory):
    """The built clembench folder (the chance replies draw from its Wordle word list), for this module."""
    from datasets_build import clembench

    root = tmp_path_factory.mktemp("data")
    clembench.build(root / "clembench")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRIANGULATE_DATA", str(root))
        yield root


@pytest.fixture(scope="module")
def table(docs, episodes, clem_data, tmp_path_factory):
    pub_docs, fresh_docs = docs
    rng = random.Random(7)
    players = {
        "memoriser": (lambda d: gold_reply(d), lambda d: chance_reply(d, rng), True, False),
        "random": (lambda d: chance_reply(d, rng), lambda d: chance_reply(d, rng), False, False),
        "equal": (lambda d: gold_reply(d), lambda d: gold_reply(d), True, True),
    }
    runs = []
    for i, (model, (on_pub, on_fresh, knows_pub, knows_fresh)) in enumerate(players.items()):
        items = {"globalgroup_zh": gg_scores(pub_docs, on_pub), "globalgroup_zh_fresh": gg_scores(fresh_docs, on_fresh)}
        for game, (pub, fresh) in episodes.items():
            repeat = 1 if knows_pub else -(-N // len(pub))  # the chance player: 200+ seeded episodes per side
            items[game] = clem_scores(game, pub, knows_pub, seed=i, repeat=repeat)
            items[game + "_fresh"] = clem_scores(game, _fresh_episodes(fresh), knows_fresh, seed=i + 10, repeat=repeat)
        runs.append(write_run(tmp_path_factory.mktemp(model), model, items, {}))
    frame = contamination.delta_rows(runs, load_taxonomy(None).main_metrics)
    return frame.set_index(["model", "benchmark"])


BENCHMARKS = {"globalgroup_zh": 1.0, "wordle": 100.0, "taboo": 100.0}  # benchmark -> top of its main metric


def test_memoriser_is_flagged_on_every_benchmark_with_delta_near_top_minus_chance(table):
    for bench, top in BENCHMARKS.items():
        row, chance = table.loc[("memoriser", bench)], table.loc[("random", bench)]
        assert row["flag"] == "published favoured" and row["95% low"] > 0, bench
        assert row["published"] == pytest.approx(top), bench  # gold answers score the top on the published items
        assert row["delta"] == pytest.approx(top - chance["fresh"], abs=0.05 * top), bench


def test_chance_player_is_never_flagged_and_its_interval_straddles_zero(table):
    for bench in BENCHMARKS:
        row = table.loc[("random", bench)]
        assert row["flag"] == "" and row["reference"] == "chance", bench
        assert row["95% low"] <= 0 <= row["95% high"], bench
        assert min(row["n published"], row["n fresh"]) >= (N if bench == "globalgroup_zh" else 200), bench


def test_a_model_equally_good_on_both_is_not_flagged(table):
    for bench, top in BENCHMARKS.items():
        row = table.loc[("equal", bench)]
        assert row["flag"] == "" and row["fresh"] == pytest.approx(top) and row["delta"] == pytest.approx(0.0), bench


def test_bootstrap_difference_is_seeded_and_covers_the_true_difference():
    rng = random.Random(0)
    a = [float(rng.random() < 0.6) for _ in range(300)]
    b = [float(rng.random() < 0.4) for _ in range(300)]
    delta, low, high = bootstrap_difference(a, b)
    assert (delta, low, high) == bootstrap_difference(a, b)
    assert low < 0.2 < high and low > 0 and delta == pytest.approx(sum(a) / 300 - sum(b) / 300)
    assert all(x != x for x in bootstrap_difference([], b))  # NaN without items


def test_section_and_leaderboard_delta_columns(table, tmp_path, docs):
    pd.DataFrame({"eval_name": ["memoriser"], "fullname": ["memoriser"], "Average ⬆️": [1.0]}).to_csv(
        tmp_path / "leaderboard.csv", index=False
    )
    contamination.add_delta_columns(tmp_path, table.reset_index())
    board = pd.read_csv(tmp_path / "leaderboard.csv")
    assert {"globalgroup_zh delta", "wordle delta", "taboo delta"} <= set(board.columns)
    assert board.loc[0, "globalgroup_zh delta"] == pytest.approx(table.loc[("memoriser", "globalgroup_zh"), "delta"])
    assert pd.read_parquet(tmp_path / "leaderboard.parquet").shape == board.shape


def test_twins_without_item_records_are_listed_as_skipped(tmp_path):
    from types import SimpleNamespace as NS

    from triangulation.report.context import Skipped

    run = Run(model="m", path=tmp_path / "r.json", date="d", results={"globalgroup_zh": {}, "globalgroup_zh_fresh": {}})
    ctx = NS(runs=[run], out=tmp_path, taxonomy=NS(main_metrics={}))
    (skipped,) = contamination.section(ctx)
    assert isinstance(skipped, Skipped) and "--log_samples" in skipped.reason
    assert (
        contamination.section(
            NS(runs=[Run(model="m", path=run.path, date="d", results={"wordle": {}})], out=tmp_path, taxonomy=ctx.taxonomy)
        )
        == []
    )
