"""Published vs fresh (issues 33, 42): scripted players scored by the real GlobalGroup and clembench scoring on the
published items and on their matched fresh twins; the paired delta, its interval, q-value and flag; the paired
statistic and Benjamini-Hochberg on hand-computed cases; mismatched sides; the leaderboard's delta columns."""

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
from multiturn.games.clem import GAMES
from multiturn.games.clem.common import PLAYER_A, PLAYER_B
from multiturn.games.clem.replay import play_game
from plumbing.jsonio import read_jsonl
from plumbing.stats import benjamini_hochberg, paired_delta
from triangulation.report.abilities import load_taxonomy
from triangulation.report.analyses import contamination
from triangulation.runs.results_io import Run, complete_run

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
    return loaded(Run(model=model, path=folder / "results.json", date="2026-11-27", results=results, samples=samples))


def loaded(run: Run) -> Run:
    """``run`` with its records read and its main scores computed, as the report's reader leaves it."""
    return complete_run(run, load_taxonomy(None).main_metrics, {p: read_jsonl(p) for p in run.samples.values()})


@pytest.fixture(scope="module")
def docs(upstream):
    root = upstream / "globalgroup"
    published, _ = matched.published_games(root, "zh", 4, 4)
    fresh = matched.matched_globalgroup(root, "globalgroup_zh", seed=0, count=N).rows
    return published[:N], fresh


@pytest.fixture(scope="module")
def episodes(upstream):
    return {g: ([playable(g, e) for e in load_instances(g)], matched_clembench.matched_rows(g, 0)[0]) for g in ("taboo",)}


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
    frame = contamination.delta_rows(runs)  # each run's main scores: the report's default main metrics (loaded)
    return frame.set_index(["model", "benchmark"])


BENCHMARKS = {"globalgroup_zh": 1.0, "taboo": 100.0}  # benchmark -> top of its main metric


def test_memoriser_is_flagged_on_every_benchmark_with_delta_near_top_minus_chance(table):
    for bench, top in BENCHMARKS.items():
        row, chance = table.loc[("memoriser", bench)], table.loc[("random", bench)]
        assert row["flag"] == "published favoured" and row["q"] <= contamination.FDR, bench
        assert row["95% low"] > 0 or row["interval"] == contamination.NOT_ESTIMABLE, bench
        assert row["published"] == pytest.approx(top), bench  # gold answers score the top on the published items
        assert row["delta"] == pytest.approx(top - chance["fresh"], abs=0.05 * top), bench


def test_chance_player_is_never_flagged_and_its_interval_straddles_zero(table):
    for bench in BENCHMARKS:
        row = table.loc[("random", bench)]
        assert row["flag"] == "" and row["reference"] == "chance", bench
        assert row["95% low"] <= 0 <= row["95% high"] or (row["interval"] == contamination.NOT_ESTIMABLE and row["delta"] == 0), bench
        assert row["pairs"] >= (N if bench == "globalgroup_zh" else 200) and row["pairs note"] == "", bench


def test_a_model_equally_good_on_both_is_not_flagged(table):
    for bench, top in BENCHMARKS.items():
        row = table.loc[("equal", bench)]
        assert row["flag"] == "" and row["fresh"] == pytest.approx(top) and row["delta"] == pytest.approx(0.0), bench
        assert row["interval"] == contamination.NOT_ESTIMABLE and row["p"] == 1.0, bench  # every pair differs by 0


def test_paired_delta_hand_computed_cases():
    # d = (1, 1, 1): one sign pattern of 8 reaches the mean 1; every pair differs by 1, so no interval
    three = paired_delta([1, 1, 1], [0, 0, 0])
    assert (three.delta, three.p, three.pairs, three.estimable) == (1.0, 1 / 8, 3, False)
    # d = (1, 0, 1, 0): mean 0.5 needs both nonzero signs +, the zeros are free: 4 of 16 patterns
    mixed = paired_delta([1, 0, 1, 1], [0, 0, 0, 1])
    assert (mixed.delta, mixed.p, mixed.estimable) == (0.5, 0.25, True)
    # resampling 4 of {1, 0, 1, 0}: all zeros and all ones each have probability 1/16 > 2.5%, so [0, 1]
    assert (mixed.low, mixed.high) == (0.0, 1.0)
    # a pair with a NaN on either side is left out: one pair (1 - 0) remains, p = 1/2
    one = paired_delta([1, float("nan"), 0], [0, 1, float("nan")])
    assert (one.delta, one.pairs, one.p, one.estimable) == (1.0, 1, 0.5, False)
    zero = paired_delta([0, 0, 0, 0], [0, 0, 0, 0])  # the "0.000 [0.000, 0.000]"
    assert (zero.delta, zero.p, zero.estimable) == (0.0, 1.0, False)
    assert all(x != x for x in (paired_delta([], []).delta, paired_delta([], []).p))
    with pytest.raises(ValueError, match="one value per pair"):
        paired_delta([1, 0], [1])


def test_paired_delta_is_seeded_and_covers_the_true_difference():
    rng = random.Random(0)
    a = [float(rng.random() < 0.6) for _ in range(300)]
    b = [float(rng.random() < 0.4) for _ in range(300)]
    first = paired_delta(a, b)
    assert first == paired_delta(a, b)
    assert first.low < 0.2 < first.high and first.low > 0 and first.delta == pytest.approx(sum(a) / 300 - sum(b) / 300)
    assert first.p < 0.001  # sampled sign flips: p = (1 + hits) / (1 + 10000)


def test_paired_beats_unpaired_when_items_vary_in_difficulty():
    """Items whose difficulty both sides share: the paired interval is narrower than the spread of either side."""
    rng = random.Random(1)
    hard = [rng.random() for _ in range(200)]
    pub = [h + 0.05 for h in hard]
    res = paired_delta(pub, hard)
    assert res.delta == pytest.approx(0.05) and not res.estimable  # every pair differs by exactly 0.05
    noisy = [h + 0.05 + rng.gauss(0, 0.01) for h in hard]
    res = paired_delta(noisy, hard)
    assert res.low > 0.04 and res.high < 0.06 and res.p < 0.001


def test_benjamini_hochberg_hand_computed():
    # sorted p 0.01, 0.03, 0.04, 0.5 (m = 4): p*m/rank 0.04, 0.06, 0.0533, 0.5; step-up minimum from the top
    q = benjamini_hochberg([0.01, 0.04, 0.03, 0.5])
    assert q == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.5])
    nan = float("nan")
    out = benjamini_hochberg([nan, 0.02, 0.9])
    assert out[0] != out[0] and out[1:] == pytest.approx([0.04, 0.9])  # NaN is no test: m = 2
    assert benjamini_hochberg([0.6, 0.9]) == pytest.approx([0.9, 0.9])


def _items(values: list[float]) -> list[dict]:
    return [{"group_f1": v} for v in values]


def test_unequal_item_sets_are_restricted_to_the_pairs_present_and_said(tmp_path):
    run = write_run(tmp_path / "a", "m", {"globalgroup_zh": _items([1, 1, 1, 1, 0]), "globalgroup_zh_fresh": _items([0, 1, 0])}, {})
    (row,) = contamination.delta_rows([run]).to_dict("records")
    assert row["pairs"] == 3 and row["published"] == 1.0 and row["fresh"] == pytest.approx(1 / 3)
    assert row["delta"] == pytest.approx(2 / 3) and "compared on the 3 pairs both hold" in row["pairs note"]
    assert row["p"] == 0.25  # d = (1, 0, 1): 2 of 8 sign patterns reach the mean


def test_sides_run_with_different_settings_are_refused(tmp_path):
    pub = write_run(tmp_path / "a", "m", {"globalgroup_zh": _items([1, 0, 1])}, {})
    fresh = write_run(tmp_path / "b", "m", {"globalgroup_zh_fresh": _items([0, 0, 1])}, {})
    pub.configs["globalgroup_zh"] = {"num_fewshot": 0}
    fresh.configs["globalgroup_zh_fresh"] = {"num_fewshot": 3}
    (row,) = contamination.delta_rows([pub, fresh]).to_dict("records")
    assert row["refused"] == "settings differ: num_fewshot 0 vs 3" and row["flag"] == "" and row["pairs"] == 0


def test_an_equally_good_model_is_flagged_at_most_at_the_stated_fdr_and_a_memoriser_always():
    """Calibration (issue 42, Build 5): 100 simulated reports of 12 twinned benchmarks x 1 model whose two sides are
    equally hard (Bernoulli items, 100 pairs): BH at 5% flags at least one benchmark in at most ~5% of the reports
    (under the global null, FDR = the chance of any flag); a memoriser (all published items right) on all 12."""
    import numpy as np

    rng = np.random.default_rng(0)
    any_flag = 0
    for _ in range(100):
        rates = rng.uniform(0.2, 0.8, 12)
        ps = [paired_delta(list(rng.random(100) < r), list(rng.random(100) < r), n_boot=50, n_flips=2000).p for r in rates]
        any_flag += any(q <= contamination.FDR for q in benjamini_hochberg(ps))
    assert any_flag <= 12  # Binomial(100, 0.05) exceeds 12 with probability < 0.001
    rates = rng.uniform(0.2, 0.8, 12)
    ps = [paired_delta([1.0] * 100, list(rng.random(100) < r), n_boot=50, n_flips=2000).p for r in rates]
    assert all(q <= contamination.FDR for q in benjamini_hochberg(ps))


def test_section_and_leaderboard_delta_columns(table, tmp_path, docs):
    pd.DataFrame({"eval_name": ["memoriser"], "fullname": ["memoriser"], "Average ⬆️": [1.0]}).to_parquet(
        tmp_path / "leaderboard.parquet", index=False
    )
    contamination.add_delta_columns(tmp_path, table.reset_index())
    board = pd.read_csv(tmp_path / "leaderboard.csv")
    assert {"globalgroup_zh delta", "taboo delta"} <= set(board.columns)
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


def test_delta_columns_keep_model_names_as_written(tmp_path):
    """Issue 39 item 11: model ``000500`` stayed ``000500`` and ``NA`` stayed ``NA`` (was 500 and empty)."""
    board = pd.DataFrame({"eval_name": ["000500", "NA"], "fullname": ["000500", "NA"], "Average ⬆️": [0.5, 0.25]})
    board.to_parquet(tmp_path / "leaderboard.parquet", index=False)
    board.to_csv(tmp_path / "leaderboard.csv", index=False)
    rows = pd.DataFrame({"model": ["000500", "NA"], "benchmark": ["wordle", "wordle"], "delta": [0.1, 0.2]})
    contamination.add_delta_columns(tmp_path, rows)
    csv = pd.read_csv(tmp_path / "leaderboard.csv", dtype=str, keep_default_na=False)
    assert list(csv["fullname"]) == ["000500", "NA"] and list(csv["wordle delta"]) == ["0.1", "0.2"]
    assert list(pd.read_parquet(tmp_path / "leaderboard.parquet")["fullname"]) == ["000500", "NA"]


def test_fresh_twins_are_no_benchmarks_of_their_own_in_the_score_table(tmp_path):
    """Issue 42: the leaderboard and the correlations (both read this table) leave ``<task>_fresh`` out."""
    from triangulation.report.build import collect_scores

    run = write_run(tmp_path, "m", {"globalgroup_zh": _items([1, 0]), "globalgroup_zh_fresh": _items([0, 0])}, {})
    table = collect_scores([run], [], load_taxonomy(None)).table
    assert list(table.columns) == ["globalgroup_zh"] and table.loc["m", "globalgroup_zh"] == 0.5


def test_the_fresh_seed_is_named_and_a_private_one_never_by_value(tmp_path):
    def run_with(folder, doc_id):
        run = write_run(tmp_path / folder, "m", {"globalgroup_zh": _items([1, 0]), "globalgroup_zh_fresh": _items([0, 0])}, {})
        path = run.samples["globalgroup_zh_fresh"]
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        path.write_text("".join(json.dumps({**x, "doc": {"id": doc_id}}) + "\n" for x in lines), encoding="utf-8")
        return loaded(run)

    assert contamination.fresh_seed(run_with("a", "zh_4x4_fresh0_000"), "globalgroup_zh_fresh") == "public default (seed 0)"
    assert contamination.fresh_seed(run_with("b", "zh_4x4_fresh7_000"), "globalgroup_zh_fresh") == "public (seed 7)"
    (row,) = contamination.delta_rows([run_with("c", "zh_4x4_freshprivate_000")]).to_dict("records")
    assert row["fresh seed"] == "private"


def test_the_membership_probe_is_shown_where_it_ran(tmp_path):
    run = write_run(tmp_path, "m", {"globalgroup_zh": _items([1, 0]), "globalgroup_zh_fresh": _items([0, 0])}, {})
    (tmp_path / "membership_globalgroup_zh.json").write_text(json.dumps({"auc": 0.75, "low": 0.6, "high": 0.9}), encoding="utf-8")
    (row,) = contamination.delta_rows([run]).to_dict("records")
    assert (row["Min-K% AUC"], row["AUC 95% low"], row["AUC 95% high"]) == (0.75, 0.6, 0.9)
    (tmp_path / "membership_globalgroup_zh.json").unlink()
    assert "Min-K% AUC" not in contamination.delta_rows([run]).columns


def test_probe_command_refusals_are_one_line(capsys):
    from triangulation.cli.main import main

    assert main(["probe", "--tasks", "taboo", "--output_path", "x"]) == 2
    assert "knows the item text of globalgroup_" in capsys.readouterr().err
    assert main(["probe", "--tasks", "globalgroup_zh", "--limit", "1", "--output_path", "x"]) == 2
    assert "--limit must be at least 2" in capsys.readouterr().err


def test_the_section_says_what_a_flag_can_and_cannot_mean(tmp_path):
    pub = write_run(tmp_path / "a", "m", {"globalgroup_zh": _items([1] * 20), "globalgroup_zh_fresh": _items([0, 1] * 10)}, {})
    section = contamination.build([pub], tmp_path)
    text = " ".join(block.text for block in section.blocks if hasattr(block, "text"))
    for phrase in ("What a flag can mean", "What it cannot mean", "No flag is no proof", "not estimable", "Benjamini-Hochberg"):
        assert phrase in text, phrase
    assert "Published items favoured at a false discovery rate of 0.05: m on globalgroup_zh (q = " in text
    assert (tmp_path / "published_vs_fresh.csv").is_file()
