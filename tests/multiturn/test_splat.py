"""SPLAT: the dataset built from upstream puzzles.xlsx, the player-judge game, its metrics and tasks."""

from __future__ import annotations

import json
import math
import os
from collections import Counter

import pytest

from datasets_build.hub import atomic_dir
from models.scripted import ScriptedLM
from multiturn.engine.runner import run_task
from multiturn.engine.settings import TaskSettings
from multiturn.games import splat
from multiturn.registry import get_task
from plumbing.errors import UserError
from plumbing.paths import dataset_dir


@pytest.fixture(scope="module")
def splat_data(upstream, tmp_path_factory):
    """Build only the ``splat`` dataset into a temporary TRIANGULATE_DATA for this module."""
    from datasets_build.splat import build_splat

    old = os.environ.get("TRIANGULATE_DATA")
    os.environ["TRIANGULATE_DATA"] = str(tmp_path_factory.mktemp("splat_data"))
    with atomic_dir(dataset_dir("splat", must_exist=False)) as out:
        summary = build_splat(out)
    yield summary
    if old is None:
        os.environ.pop("TRIANGULATE_DATA", None)
    else:
        os.environ["TRIANGULATE_DATA"] = old


@pytest.fixture(scope="module")
def puzzles(splat_data):
    from datasets_build.splat import load_splat

    return [dict(r) for r in load_splat()["test"]]


# --- dataset ---------------------------------------------------------------------------------


def test_dataset_has_the_published_levels(splat_data, puzzles, upstream):
    assert splat_data["rows"] == 975
    assert Counter(p["difficulty"] for p in puzzles) == {"easy": 217, "medium": 648, "hard": 110}
    assert Counter(p["level"] for p in puzzles) == {1: 10, 2: 72, 3: 135, 4: 218, 5: 235, 6: 195, 7: 84, 8: 22, 9: 4}
    assert len({p["id"] for p in puzzles}) == 975
    assert puzzles[0]["id"] == "splat_000" and puzzles[0]["title"] == "Red high heels"
    # every level label agrees with its bucket, as published ("7/10 HARD")
    assert all(p["level_label"].split()[1].lower() == p["difficulty"] for p in puzzles)


def test_prompts_travel_with_the_built_dataset(splat_data, upstream):
    import yaml

    from datasets_build.splat import load_prompts

    prompts = load_prompts()
    config = yaml.safe_load((upstream / "splat" / "config.yaml").read_text(encoding="utf-8"))["prompt"]
    assert prompts["player_init"] == config["prompt_player_init"]
    assert prompts["judge_init"] == config["prompt_judge_init"]
    assert prompts["player_ready_message"] == "I am ready. Please show me the story."


def test_bad_level_label_is_one_clear_error():
    from datasets_build.splat import level_of

    assert level_of("7/10 HARD", "x") == (7, "hard")
    with pytest.raises(UserError, match="row 5"):
        level_of("7/10 EASY", "puzzles.xlsx row 5")
    with pytest.raises(UserError, match="not like"):
        level_of("hard", "puzzles.xlsx row 6")


def test_missing_build_names_the_build_command(tmp_path, monkeypatch):
    from datasets_build.splat import load_splat

    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path))
    with pytest.raises(UserError, match="triangulate data build"):
        load_splat()


# --- prompts and parsing (pure) --------------------------------------------------------------

PUZZLE = {
    "id": "p",
    "title": "Sweet Dreams",
    "story": "Matthew keeps reading\nto his son despite the blackout.",
    "answer": "He is blind and reads Braille.",
}
PROMPTS = {
    "player_init": "PLAYER RULES",
    "judge_init": "JUDGE RULES",
    "judge_puzzle_template": "T=%s S=%s A=%s",
    "player_ready_message": "READY",
}


def test_story_and_judge_context_follow_the_authors_code():
    assert (
        splat.story_shown(PUZZLE) == "The title of the puzzle is Sweet Dreams. Matthew keeps reading to his son despite the blackout. Why?"
    )
    msgs = splat.judge_messages(PROMPTS, PUZZLE, "Is he blind?")
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert (
        msgs[0]["content"]
        == "JUDGE RULES\n\nT=Sweet Dreams S=Matthew keeps reading to his son despite the blackout. Why? A=He is blind and reads Braille.\n\nREADY"
    )
    assert msgs[2]["content"] == "Is he blind?"
    opening = splat.player_opening(PROMPTS, PUZZLE)
    assert opening == [{"role": "user", "content": "PLAYER RULES\n\n" + splat.story_shown(PUZZLE)}]
    assert "Braille" not in opening[0]["content"]  # the player never sees the answer


@pytest.mark.parametrize(
    "reply,label",
    [
        ("Congratulations! You solved it.", "congratulations"),
        ("Yes.", "yes"),
        ("no", "no"),
        ("That is Irrelevant to the story.", "irrelevant"),
        ("I cannot say that, but yes, partly.", "yes"),
        ("Keep going!", "other"),
        ("", "other"),
        ("Nobody knows", "other"),  # whole words only
    ],
)
def test_judge_label(reply, label):
    assert splat.judge_label(reply) == label


def test_episode_scores_definition():
    assert splat.episode_scores(True, 4) == {"accuracy": 1.0, "rounds": 4.0, "overall": 25.0}
    assert splat.episode_scores(False, 15) == {"accuracy": 0.0, "rounds": 15.0, "overall": 0.0}


def test_aggregate_per_difficulty_and_avg():
    rows = [
        {**splat.episode_scores(True, 1), "accuracy_easy": 1.0, "rounds_easy": 1.0, "overall_easy": 100.0},
        {**splat.episode_scores(False, 15), "accuracy_easy": 0.0, "rounds_easy": 15.0, "overall_easy": 0.0},
        {**splat.episode_scores(True, 5), "accuracy_hard": 1.0, "rounds_hard": 5.0, "overall_hard": 20.0},
    ]
    agg = splat.aggregate_splat(rows)
    assert agg["accuracy"] == pytest.approx(2 / 3)
    assert agg["accuracy_easy"] == 0.5 and agg["accuracy_hard"] == 1.0 and math.isnan(agg["accuracy_medium"])
    assert agg["accuracy_avg"] == pytest.approx(0.75)  # mean of the difficulties present
    assert agg["rounds_avg"] == pytest.approx((8 + 5) / 2)
    assert agg["overall"] == pytest.approx(40.0)


# --- the game on the engine, with scripted players and judges --------------------------------


def _judge_that_knows(puzzles_by_title):
    """A judge that congratulates when the player's turn contains the hidden answer, else says 'No.'."""

    def respond(messages):
        assert messages[0]["content"].startswith("You are the judge")
        turn = messages[-1]["content"]
        answers = [p["answer"] for p in puzzles_by_title.values() if p["answer"] in messages[0]["content"]]
        assert len(answers) >= 1, "the judge must see the hidden answer"
        return "Congratulations!" if any(a in turn for a in answers) else "No."

    return respond


def _player_that_knows(puzzles_by_title):
    def respond(messages):
        assert messages[0]["content"].startswith("You are a player")
        story = messages[0]["content"]
        title = story.split("The title of the puzzle is ", 1)[1]
        hits = [p for t, p in puzzles_by_title.items() if title.startswith(flat_title(t) + ".")]
        return f"My answer: {hits[0]['answer']}"

    return respond


def flat_title(title):
    return splat.flat(title)


def test_player_that_knows_solves_every_puzzle_in_one_round(puzzles, tmp_path):
    task = get_task("splat_easy")
    by_title = {p["title"]: p for p in puzzles}
    player, judge = ScriptedLM(_player_that_knows(by_title)), ScriptedLM(_judge_that_knows(by_title))
    summary = run_task(TaskSettings(task, limit=12, model_dir=tmp_path / "m"), {"player": player, "judge": judge}, progress=False)
    assert summary["n_samples"]["effective"] == 12
    assert summary["metrics"]["accuracy"] == 1.0
    assert summary["metrics"]["rounds"] == 1.0
    assert summary["metrics"]["overall"] == 100.0
    assert player.requests_seen == 12 and judge.requests_seen == 12
    lines = (tmp_path / "m" / "episodes_splat_easy.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert {r["difficulty"] for r in records} == {"easy"}
    assert all(r["rounds"][0]["judge_label"] == "congratulations" for r in records)


def test_player_that_never_solves_uses_fifteen_rounds(puzzles):
    task = get_task("splat")  # all difficulties: per-difficulty metrics appear
    by_title = {p["title"]: p for p in puzzles}
    player = ScriptedLM(lambda messages: "Is it raining?")
    judge = ScriptedLM(_judge_that_knows(by_title))
    summary = run_task(TaskSettings(task, limit=3), {"player": player, "judge": judge}, progress=False)
    m = summary["metrics"]
    assert m["accuracy"] == 0.0 and m["rounds"] == 15.0 and m["overall"] == 0.0
    assert judge.requests_seen == 3 * 15
    # the player sees its whole history: 15 questions and 14 judge replies before its last turn
    record = summary["records"][0]
    assert len(record["rounds"]) == 15 and all(r["judge"] == "No." for r in record["rounds"])
    difficulties = {p["difficulty"] for p in puzzles[:3]}
    for d in difficulties:
        assert m[f"rounds_{d}"] == 15.0
    assert m["rounds_avg"] == 15.0


def test_hit_on_a_later_round_counts_that_round(puzzles):
    by_title = {p["title"]: p for p in puzzles}
    knows = _player_that_knows(by_title)

    def player(messages):  # asks three questions, then answers
        return knows(messages) if len(messages) >= 7 else "Is it a trick?"

    summary = run_task(
        TaskSettings(get_task("splat_hard"), limit=2),
        {"player": ScriptedLM(player), "judge": ScriptedLM(_judge_that_knows(by_title))},
        progress=False,
    )
    assert summary["metrics"] == {"accuracy": 1.0, "rounds": 4.0, "overall": 25.0}


def test_empty_player_turn_uses_its_round_without_a_judge_call(puzzles):
    by_title = {p["title"]: p for p in puzzles}
    knows = _player_that_knows(by_title)
    seen = []

    def player(messages):
        seen.append(messages[-1]["content"])
        return "   " if len(messages) == 1 else knows(messages)

    judge = ScriptedLM(_judge_that_knows(by_title))
    summary = run_task(TaskSettings(get_task("splat_medium"), limit=1), {"player": ScriptedLM(player), "judge": judge}, progress=False)
    assert summary["metrics"]["rounds"] == 2.0 and summary["metrics"]["accuracy"] == 1.0
    assert judge.requests_seen == 1
    assert seen[-1] == splat.EMPTY_TURN_REPLY
    assert summary["records"][0]["rounds"][0]["judge_label"] == "empty"


def test_judge_agreement_with_human_labels(puzzles, tmp_path):
    by_title = {p["title"]: p for p in puzzles}
    easy = [p for p in puzzles if p["difficulty"] == "easy"][:2]
    labels = tmp_path / "labels.jsonl"
    rows = [
        {"id": easy[0]["id"], "turn": "Is it raining?", "label": "no"},  # judge says No -> agree
        {"id": easy[0]["id"], "turn": "Is he a magician?", "label": "yes"},  # judge says No -> disagree
        {"id": easy[0]["id"], "turn": f"It is: {easy[0]['answer']}", "label": "matched"},  # congratulations -> agree
        {"id": easy[1]["id"], "turn": "Wrong story.", "label": "unmatched"},  # not congratulated -> agree
    ]
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    task = get_task("splat_easy", {"human_labels": labels})
    player = ScriptedLM(_player_that_knows(by_title))
    judge = ScriptedLM(_judge_that_knows(by_title))
    summary = run_task(TaskSettings(task, limit=3), {"player": player, "judge": judge}, progress=False)
    # eq. 6 per kind: questions 1 of 2 agree, final answers 2 of 2 (seed 004 Table 2 reports them apart)
    assert summary["metrics"]["judge_agreement_reasoning"] == pytest.approx(1 / 2)
    assert summary["metrics"]["judge_labels_reasoning"] == 2.0
    assert summary["metrics"]["judge_agreement_final"] == 1.0 and summary["metrics"]["judge_labels_final"] == 2.0
    assert "human_agreement_final" not in summary["metrics"]  # one label set: no human-human agreement
    assert summary["metrics"]["accuracy"] == 1.0  # agreement probes do not change the game's score
    assert judge.requests_seen == 3 + 4


def test_human_labels_file_errors(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,turn,label\nsplat_000,Is it?,maybe\n")
    with pytest.raises(UserError, match="maybe"):
        splat.read_human_labels(bad)
    with pytest.raises(UserError, match="does not exist"):
        splat.read_human_labels(tmp_path / "missing.csv")
    good = tmp_path / "good.csv"
    good.write_text("id,turn,label\nsplat_000,Is it?,Yes\n")
    assert splat.read_human_labels(good) == {"splat_000": [("Is it?", ["yes"])]}


def test_tasks_are_registered():
    from multiturn import registry

    names = registry.task_names()
    for name in ("splat", "splat_easy", "splat_medium", "splat_hard"):
        assert name in names
        assert registry.get_task(name).roles == ("player", "judge")
    assert registry.get_task("splat_hard").instances  # the factory builds the right difficulty
    assert registry.get_task("splat_hard").difficulty == "hard"


def test_round_cap_option_is_checked_and_defaults_to_the_published_fifteen():
    assert splat.SplatTask().max_rounds == 15 and splat.SplatTask("easy", max_rounds="4").max_rounds == 4
    for bad in ("zero", 0, -2, 1.5, True, ""):
        with pytest.raises(UserError, match="max_rounds=.* must be a positive integer"):
            splat.SplatTask("easy", max_rounds=bad)


# --- the real CLI path: `triangulate play --task_args ... --gen_kwargs ... --judge_gen_kwargs ...` ----


class SplatCliLM(ScriptedLM):
    """``scripted-splat``: one backend for both roles (as `triangulate play` without --judge_model); the
    player never solves, the judge always says "No."; every request's (role, gen_kwargs) is kept in ``seen``."""

    seen: list[tuple[str, dict]] = []

    def __init__(self):
        super().__init__(lambda messages: "No." if _is_judge(messages) else "Is it a dream?", name="scripted-splat")

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        for request in requests:
            role = "judge" if _is_judge(json.loads(request.args[0])) else "player"
            SplatCliLM.seen.append((role, dict(request.args[1])))
        return super().generate_until(requests, disable_tqdm)

    @classmethod
    def create_from_arg_obj(cls, arg_dict, additional_config=None):
        return cls()


def _is_judge(messages) -> bool:
    return messages[0]["content"].startswith("You are the judge")


@pytest.fixture
def play(puzzles, tmp_path, capsys):
    """``play(*flags)`` -> (exit code, results JSON or None, stderr) of ``triangulate play --tasks splat_easy --limit 1``."""
    from models.loading import register_lm_class
    from triangulation.cli.main import main

    register_lm_class("scripted-splat", SplatCliLM)
    SplatCliLM.seen.clear()

    def run(*flags):
        out = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
        code = main(["play", "--model", "scripted-splat", "--tasks", "splat_easy", "--limit", "1", "--output_path", str(out), *flags])
        found = list(out.glob("*/results_*.json"))
        payload = json.loads(found[0].read_text()) if found else None
        return code, payload, capsys.readouterr().err

    return run


def test_cli_max_rounds_option_caps_the_rounds_and_is_recorded(play):
    code, payload, err = play("--task_args", "max_rounds=2")
    assert code == 0, err
    assert payload["results"]["splat_easy"]["rounds,none"] == 2.0
    assert payload["config"]["task_args"] == {"max_rounds": 2}
    assert payload["configs"]["splat_easy"]["max_rounds"] == 2 and payload["configs"]["splat_easy"]["task_args"] == {"max_rounds": 2}
    assert [role for role, _ in SplatCliLM.seen] == ["player", "judge"] * 2
    code, payload, err = play("--task_args", "max_rounds=zero")
    assert code == 2 and payload is None
    assert err.count("\n") == 1 and "max_rounds='zero' must be a positive integer" in err


def test_cli_human_labels_option_measures_judge_agreement(play, puzzles, tmp_path):
    first = next(p for p in puzzles if p["difficulty"] == "easy")
    labels = tmp_path / "labels.csv"
    labels.write_text(f"id,turn,label\n{first['id']},Is it raining?,no\n{first['id']},Is he a ghost?,yes\n")
    code, payload, err = play("--task_args", f"human_labels={labels}", "max_rounds=1")
    assert code == 0, err
    result = payload["results"]["splat_easy"]
    assert result["judge_agreement_reasoning,none"] == 0.5 and result["judge_labels_reasoning,none"] == 2.0  # the judge says "No." to both
    assert payload["config"]["task_args"] == {"human_labels": str(labels), "max_rounds": 1}
    assert payload["configs"]["splat_easy"]["human_labels"] == str(labels)
    assert [role for role, _ in SplatCliLM.seen] == ["player", "judge", "judge", "judge"]
    code, _, err = play("--task_args", f"human_labels={tmp_path / 'missing.csv'}")
    assert code == 2 and err.count("\n") == 1 and "does not exist" in err


def test_cli_unknown_task_option_is_one_line_naming_the_options(play):
    code, payload, err = play("--task_args", "bogus=1")
    assert code == 2 and payload is None and not SplatCliLM.seen
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "bogus" in err and "max_rounds" in err and "human_labels" in err


def test_cli_judge_gen_kwargs_reach_only_the_judge_and_gen_kwargs_only_the_player(play):
    code, payload, err = play("--task_args", "max_rounds=1", "--judge_gen_kwargs", "max_gen_toks=7")
    assert code == 0, err
    by_role = {role: kwargs["max_gen_toks"] for role, kwargs in SplatCliLM.seen}
    assert by_role == {"player": splat.GEN_KWARGS["max_gen_toks"], "judge": 7}
    assert payload["config"]["judge_gen_kwargs"] == {"max_gen_toks": 7}
    SplatCliLM.seen.clear()
    code, payload, err = play("--task_args", "max_rounds=1", "--gen_kwargs", "max_gen_toks=5")
    assert code == 0, err
    by_role = {role: kwargs["max_gen_toks"] for role, kwargs in SplatCliLM.seen}
    assert by_role == {"player": 5, "judge": splat.GEN_KWARGS["max_gen_toks"]}


def test_prompts_are_derived_from_config_and_code_literals(upstream, tmp_path):
    """The builder reads config.yaml and puzzle_arena.py's string literals (with ast, never running the code)."""
    import shutil

    from datasets_build.splat import read_prompts, upstream_prompts

    expected = read_prompts(upstream / "splat" / "prompts")
    shutil.copy(upstream / "splat" / "config.yaml", tmp_path / "config.yaml")
    template = expected["judge_puzzle_template"].replace('"', '\\"')
    ready = expected["player_ready_message"]
    (tmp_path / "puzzle_arena.py").write_text(  # code shaped like the authors', not a copy of it
        "raise SystemExit('never executed')\n"
        "def play(title, story, answer, judge_messages):\n"
        f'    prompt_puzzle = "{template}"%(title, story, answer)\n'
        f'    judge_messages.append({{"role": "user", "content": "{ready}"}})\n'
    )
    assert upstream_prompts(tmp_path) == expected
    (tmp_path / "puzzle_arena.py").write_text("print('nothing here')\n")
    with pytest.raises(UserError, match="string literals"):
        upstream_prompts(tmp_path)
    assert upstream_prompts(upstream / "splat") == expected  # the authors' file gives the shared copy's texts


def test_player_sees_judge_replies_lower_cased(puzzles):
    seen = []

    def player(messages):
        seen.append(messages[-1]["content"])
        return "Is it night?"

    run_task(
        TaskSettings(get_task("splat_easy", {"max_rounds": 2}), limit=1),
        {"player": ScriptedLM(player), "judge": ScriptedLM(lambda m: "YES, Indeed.")},
        progress=False,
    )
    assert seen[1] == "yes, indeed."


def test_judge_label_never_raises_on_odd_input():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=200, deadline=None)
    @given(st.text(max_size=500))
    def fuzz(text):
        assert splat.judge_label(text) in ("congratulations", "yes", "no", "irrelevant", "other")

    fuzz()
    assert splat.judge_label("x " * 500_000 + "yes") in ("yes", "other")


def test_build_is_deterministic(splat_data, tmp_path):
    from datasets_build.splat import build_splat

    build_splat(tmp_path / "again")
    shard = "data/default/test-00000-of-00001.parquet"
    assert (tmp_path / "again" / shard).read_bytes() == (dataset_dir("splat") / shard).read_bytes()
    assert (tmp_path / "again" / "README.md").read_text() == (dataset_dir("splat") / "README.md").read_text()


def test_replays_and_judge_calls_are_the_papers_r_and_the_authors_default(upstream):
    """Seed 004 Sec. 5.2: "we repeatedly run each situation puzzle multiple times (denoted as R)" and "We set
    R = 1 and the max round is 15". R is the number of replays (``game_times`` in the authors' config.yaml),
    not ``judge_times`` (judge calls per question); the "(5)" beside ``judge_times`` is a comment there."""
    import yaml

    from multiturn import registry
    from multiturn.games import splat

    text = (upstream / "splat" / "config.yaml").read_text(encoding="utf-8")
    game = yaml.safe_load(text)["game"]
    assert game["game_times"] == splat.REPLAYS == 1 and game["judge_times"] == splat.JUDGE_TIMES == 1
    assert game["max_round"] == splat.MAX_ROUNDS == 15
    assert "judge_times: 1  # multiple judge for each question from player (5)" in text
    cfg = registry.get_task("splat").config()
    assert cfg["replays"] == 1 and cfg["judge_calls_per_question"] == 1
