"""Interactive Connections / GlobalGroup: the app's rules, the parse rule, metrics, scripted players."""

from __future__ import annotations

import pytest

from datasets_build.globalgroup import SUBSET_NAMES
from models.scripted import ScriptedLM
from multiturn.engine.runner import run_task
from multiturn.engine.settings import TaskSettings
from multiturn.game import TaskSpec
from multiturn.games import connections_interactive as ci
from multiturn.games import globalgroup_interactive as gi
from multiturn.registry import get_task

GROUPS = [
    {"topic": "FISH", "words": ["BASS", "FLOUNDER", "SALMON", "TROUT"], "level": 0, "color": "yellow"},
    {"topic": "FIRE ___", "words": ["ANT", "DRILL", "ISLAND", "OPAL"], "level": 1, "color": "green"},
    {"topic": "Things to sew", "words": ["DART", "HEM", "PLEAT", "SEAM"], "level": 2, "color": "blue"},
    {"topic": "Birds minus last letter", "words": ["CONDO", "HAW", "HERO", "LOO"], "level": 3, "color": "purple"},
]
WORDS = [
    "HEM",
    "ANT",
    "LOO",
    "BASS",
    "DRILL",
    "SEAM",
    "CONDO",
    "SALMON",
    "OPAL",
    "HAW",
    "TROUT",
    "DART",
    "ISLAND",
    "HERO",
    "PLEAT",
    "FLOUNDER",
]


def make_doc(i: int) -> dict:
    rot = i % 16
    return {"id": f"g{i}", "words": WORDS[rot:] + WORDS[:rot], "groups": GROUPS}


class FixedTask(TaskSpec):
    """The interactive game over given docs (no built data needed)."""

    name = "fixed_interactive"
    gen_kwargs = dict(ci.GEN_KWARGS)

    def __init__(self, docs, intro=ci.NYT_INTRO):
        self.docs, self.intro = docs, intro

    def instances(self, seed):
        return [dict(d) for d in self.docs]

    def make_game(self, instance, seed):
        return ci.ConnectionsGame(instance, self.intro, self.gen_kwargs)


def knower(groups_of):
    """Plays the gold groups in order: the next one after those the game has confirmed."""

    def respond(messages):
        confirmed = sum(m["role"] == "user" and m["content"].startswith("Correct!") for m in messages)
        return "These share a theme.\nGUESS: [" + ", ".join(groups_of(messages)[confirmed]) + "]"

    return respond


def synthetic_groups(messages):
    return [g["words"] for g in GROUPS]


def wrong_player(messages):
    """One word from each group, a different combination every turn: never right, never one away."""
    turn = sum(m["role"] == "assistant" for m in messages)
    return "GUESS: [" + ", ".join(g["words"][turn % 4] for g in GROUPS) + "]"


# --- pure rules ------------------------------------------------------------------------------


def test_judge_guess_rules():
    groups = [g["words"] for g in GROUPS]
    assert ci.judge_guess(["trout", "Bass", "SALMON", "FLOUNDER"], groups, []) == ("correct", 0)
    assert ci.judge_guess(["TROUT", "BASS", "SALMON", "HEM"], groups, []) == ("one_away", 0)
    assert ci.judge_guess(["TROUT", "BASS", "HEM", "ANT"], groups, []) == ("wrong", None)
    assert ci.judge_guess(["TROUT", "BASS", "SALMON", "FLOUNDER"], groups, [0]) == ("wrong", None)


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("GUESS: [BASS, FLOUNDER, SALMON, TROUT]", ["BASS", "FLOUNDER", "SALMON", "TROUT"]),
        ("Fish first.\nguess: [bass, flounder, 'salmon', “trout”]", ["BASS", "FLOUNDER", "SALMON", "TROUT"]),
        ("GUESS: BASS, FLOUNDER, SALMON, TROUT", ["BASS", "FLOUNDER", "SALMON", "TROUT"]),
        ("Maybe [HEM, DART, SEAM, PLEAT]? No: GUESS: [ANT, DRILL, ISLAND, OPAL]", ["ANT", "DRILL", "ISLAND", "OPAL"]),
        ("Fish: [BASS, FLOUNDER, SALMON, TROUT]\nSewing: [HEM, DART, SEAM, PLEAT]", ["HEM", "DART", "SEAM", "PLEAT"]),
        ("GUESS: [BASS, FLOUNDER, SALMON]", None),  # three words
        ("GUESS: [BASS, BASS, SALMON, TROUT]", None),  # a repeated word
        ("GUESS: [BASS, FLOUNDER, SALMON, COD]", None),  # not on the board
        ("I have no idea.", None),
        ("", None),
    ],
)
def test_parse_guess(reply, expected):
    assert ci.parse_guess(reply, WORDS) == expected


def test_parse_guess_rejects_solved_words():
    board = [w for w in WORDS if w not in GROUPS[0]["words"]]
    assert ci.parse_guess("GUESS: [BASS, FLOUNDER, SALMON, TROUT]", board) is None


def test_weighted_score_is_seed_001_weighting():
    assert ci.weighted_score([0, 1, 2, 3]) == 10.0
    assert ci.weighted_score([3]) == 4.0
    assert ci.weighted_score([]) == 0.0


def test_prompt_names_the_rules_and_the_board():
    text = ci.opening_prompt(WORDS, 4, 4, ci.NYT_INTRO)
    assert text.startswith(ci.NYT_INTRO)
    assert "GUESS: [word1, word2, word3, word4]" in text and "You may make 4 mistakes" in text
    assert "Words: [" + ", ".join(WORDS) + "]" in text
    assert not any(line.startswith("#") for line in text.splitlines())


# --- scripted players on the engine ----------------------------------------------------------


def test_knower_solves_every_game_with_zero_mistakes():
    lm = ScriptedLM(knower(synthetic_groups))
    summary = run_task(TaskSettings(FixedTask([make_doc(i) for i in range(5)])), {"player": lm}, progress=False)
    m = summary["metrics"]
    assert m["solved"] == 1.0 and m["groups_found"] == 4.0 and m["mistakes"] == 0.0
    assert m["weighted_clustering"] == 10.0 and m["invalid_replies"] == 0.0
    assert lm.requests_seen == 5 * 3  # the fourth group completes itself
    record = summary["records"][0]
    assert [e["result"] for e in record["events"]] == ["correct"] * 3
    assert "Yellow group FISH" in " ".join(t["content"] for t in record["transcript"])


def test_wrong_player_ends_after_four_mistakes():
    lm = ScriptedLM(wrong_player)
    summary = run_task(TaskSettings(FixedTask([make_doc(i) for i in range(3)])), {"player": lm}, progress=False)
    m = summary["metrics"]
    assert m["mistakes"] == 4.0 and m["groups_found"] == 0.0 and m["solved"] == 0.0 and m["weighted_clustering"] == 0.0
    assert lm.requests_seen == 3 * 4
    assert [e["result"] for e in summary["records"][0]["events"]] == ["wrong"] * 4


def test_unparseable_replies_reprompt_once_then_count_as_mistakes():
    prompts_seen = []

    def garbage(messages):
        prompts_seen.append(messages[-1]["content"])
        return "I like turtles."

    lm = ScriptedLM(garbage)
    summary = run_task(TaskSettings(FixedTask([make_doc(0)])), {"player": lm}, progress=False)
    m = summary["metrics"]
    assert m["mistakes"] == 4.0 and m["invalid_replies"] == 8.0 and m["groups_found"] == 0.0
    assert lm.requests_seen == 8
    assert prompts_seen[1].startswith("Invalid guess:") and "does not count as a mistake" in prompts_seen[1]
    assert prompts_seen[2].startswith("Invalid guess again")
    results = [e["result"] for e in summary["records"][0]["events"]]
    assert results == ["invalid", "invalid_mistake"] * 4


def test_one_invalid_reply_then_a_good_one_costs_nothing():
    know = knower(synthetic_groups)

    def player(messages):
        return "Hmm, let me think." if len(messages) == 1 else know(messages)

    summary = run_task(TaskSettings(FixedTask([make_doc(1)])), {"player": ScriptedLM(player)}, progress=False)
    assert summary["metrics"]["mistakes"] == 0.0 and summary["metrics"]["solved"] == 1.0
    assert summary["metrics"]["invalid_replies"] == 1.0


def test_repeated_wrong_guess_is_invalid_not_a_second_mistake():
    def player(messages):
        return "GUESS: [BASS, ANT, DART, CONDO]"

    summary = run_task(TaskSettings(FixedTask([make_doc(2)])), {"player": ScriptedLM(player)}, progress=False)
    events = [e["result"] for e in summary["records"][0]["events"]]
    # wrong (1), repeat -> invalid, repeat -> invalid_mistake (2), then the same cycle again
    assert events[:3] == ["wrong", "invalid", "invalid_mistake"]
    assert summary["metrics"]["mistakes"] == 4.0


def test_one_away_then_recovery():
    know = knower(synthetic_groups)

    def player(messages):
        if len(messages) == 1:
            return "GUESS: [BASS, FLOUNDER, SALMON, HEM]"
        return know(messages)

    summary = run_task(TaskSettings(FixedTask([make_doc(3)])), {"player": ScriptedLM(player)}, progress=False)
    m = summary["metrics"]
    assert m["one_away_recoveries"] == 1.0 and m["mistakes"] == 1.0 and m["solved"] == 1.0
    record = summary["records"][0]
    assert record["events"][0]["result"] == "one_away"
    assert "One away!" in record["transcript"][2]["content"]


def test_groups_without_colours_have_no_weighted_score():
    groups = [{k: v for k, v in g.items() if k in ("topic", "words")} for g in GROUPS]
    doc = {"id": "gg", "words": WORDS, "groups": groups}
    lm = ScriptedLM(knower(synthetic_groups))
    summary = run_task(TaskSettings(FixedTask([doc], intro=gi.INTRO)), {"player": lm}, progress=False)
    assert "weighted_clustering" not in summary["metrics"]
    assert summary["metrics"]["solved"] == 1.0
    assert "Correct! FISH:" in " ".join(t["content"] for t in summary["records"][0]["transcript"])


def test_tasks_are_registered():
    from multiturn import registry

    names = registry.task_names()
    assert "connections_interactive" in names
    for subset in SUBSET_NAMES:
        assert f"globalgroup_interactive_{subset}" in names
        assert registry.get_task(f"globalgroup_interactive_{subset}").config()["dataset_config"] == f"{subset}_4x4"
    assert registry.expand(["globalgroup_interactive"]) == [f"globalgroup_interactive_{s}" for s in SUBSET_NAMES] == gi.task_names()


# --- the real games (built from upstream with the DATA builders) -----------------------------


@pytest.fixture
def built(upstream, monkeypatch):
    from tests.support.built_data import use_built_data

    return use_built_data(upstream, monkeypatch)


def gold_lookup(docs):
    """Opening board -> gold groups, so a scripted player 'knows' the answer of the game it is shown."""
    table = {ci.format_words(d["words"]): [list(g["words"]) for g in d["groups"]] for d in docs}
    assert len(table) == len(docs)

    def groups_of(messages):
        return table[messages[0]["content"].rsplit("Words: ", 1)[1].strip()]

    return groups_of


def test_knower_solves_all_438_connections_games_without_mistakes(built):
    task = get_task("connections_interactive")
    docs = task.instances(seed=0)
    assert len(docs) == 438
    lm = ScriptedLM(knower(gold_lookup(docs)))
    summary = run_task(TaskSettings(task, max_live=0), {"player": lm}, progress=False)
    m = summary["metrics"]
    assert summary["n_samples"]["effective"] == 438
    assert m["solved"] == 1.0 and m["mistakes"] == 0.0 and m["groups_found"] == 4.0
    assert m["weighted_clustering"] == 10.0 and m["invalid_replies"] == 0.0
    assert lm.requests_seen == 438 * 3
    assert [r["id"] for r in summary["records"]] == [d["id"] for d in docs]  # the static task's game ids


def test_wrong_player_loses_every_connections_game_in_four_mistakes(built):
    task = get_task("connections_interactive")
    docs = task.instances(seed=0)
    gold = gold_lookup(docs)

    def wrong(messages):  # one word of each gold group, a new combination each turn
        turn = sum(m["role"] == "assistant" for m in messages)
        return "GUESS: [" + ", ".join(g[turn % 4] for g in gold(messages)) + "]"

    lm = ScriptedLM(wrong)
    summary = run_task(TaskSettings(task, limit=50, max_live=0), {"player": lm}, progress=False)
    m = summary["metrics"]
    assert m["mistakes"] == 4.0 and m["groups_found"] == 0.0 and m["solved"] == 0.0 and m["weighted_clustering"] == 0.0
    assert lm.requests_seen == 50 * 4


@pytest.mark.parametrize("subset", SUBSET_NAMES)
def test_knower_solves_every_globalgroup_4x4_test_game(built, subset):
    task = get_task(f"globalgroup_interactive_{subset}")
    docs = task.instances(seed=0)
    assert len(docs) == 300
    summary = run_task(TaskSettings(task, max_live=0), {"player": ScriptedLM(knower(gold_lookup(docs)))}, progress=False)
    m = summary["metrics"]
    assert m["solved"] == 1.0 and m["mistakes"] == 0.0 and "weighted_clustering" not in m


def test_report_joins_static_samples_and_episodes_game_by_game(tmp_path):
    """`triangulate report` writes connections_by_game.csv: lm-eval samples joined with play episodes on the game id."""
    import json

    import pandas as pd

    from triangulation.report.analyses import connections as analyses_connections
    from triangulation.runs.results_io import Run, complete_run, read_records

    docs = [make_doc(i) for i in range(3)]
    run_task(TaskSettings(FixedTask(docs), model_dir=tmp_path / "m"), {"player": ScriptedLM(knower(synthetic_groups))}, progress=False)
    episodes = tmp_path / "m" / "episodes_fixed_interactive.jsonl"
    with episodes.open("a") as fh:
        fh.write('{"id": "g1", "trunc')  # a run killed mid-write: the last line is skipped
    static = tmp_path / "samples_connections_2024.jsonl"
    static.write_text(  # the lm-eval --log_samples shape: doc plus one key per metric
        "\n".join(
            json.dumps(
                {"doc_id": i, "doc": {"id": d}, "unweighted_clustering": u, "weighted_clustering": w, "perfect_solve": float(u == 4)}
            )
            for i, (d, u, w) in enumerate([("g0", 4, 10), ("g2", 1, 3), ("not_played", 0, 0)])
        )
    )
    runs = [
        Run("model-a", tmp_path / "results_1.json", "1", {"connections": {}}, samples={"connections": static}),
        Run("model-a", tmp_path / "results_2.json", "2", {"connections_interactive": {}}, samples={"connections_interactive": episodes}),
        Run("model-b", tmp_path / "results_3.json", "3", {"connections": {}}, samples={"connections": static}),  # never played
    ]
    kinds = {static: "samples", episodes: "play"}
    runs = [complete_run(run, None, {p: read_records(p, kinds[p]) for p in run.samples.values()}) for run in runs]  # as the report reads
    section = analyses_connections.build(runs, tmp_path)
    rows = pd.read_csv(tmp_path / "connections_by_game.csv")
    assert list(rows.columns[:3]) == ["model", "id", "static_unweighted_clustering"]
    assert list(rows["id"]) == ["g0", "g2"] and set(rows["model"]) == {"model-a"}
    assert rows.loc[1, "static_weighted_clustering"] == 3 and rows.loc[1, "interactive_weighted_clustering"] == 10.0
    assert rows.loc[1, "interactive_solved"] == 1.0 and rows.loc[1, "static_perfect_solve"] == 0.0
    summary = analyses_connections.by_game_summary(analyses_connections.by_game(runs))
    assert summary.loc["model-a", "games"] == 2
    assert (
        summary.loc["model-a", "weighted clustering, static"] == 6.5 and summary.loc["model-a", "weighted clustering, interactive"] == 10.0
    )
    assert any("games played both ways" in getattr(block, "caption", "") for block in section.blocks)


def test_parse_guess_never_raises_and_is_fast():
    import time

    from hypothesis import given, settings
    from hypothesis import strategies as st

    pieces = st.sampled_from(list("GUESS:[],'\" \nabcHEMBASS-*") + WORDS)

    @settings(max_examples=200, deadline=None)
    @given(st.lists(pieces, max_size=80).map("".join))
    def fuzz(text):
        guess = ci.parse_guess(text, WORDS)
        assert guess is None or (len(guess) == 4 and set(guess) <= set(WORDS))

    fuzz()
    for unit in ("GUESS: [" + ", ".join(WORDS[:4]) + "]\n", "[" + ", ".join(WORDS[4:8]) + "] ", "word, " * 9 + "\n"):
        big = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
        start = time.perf_counter()
        ci.parse_guess(big, WORDS)
        assert time.perf_counter() - start < 3.0, unit  # generous on a loaded CI machine; issue 7 measures it
