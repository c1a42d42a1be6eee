"""The Hub-ready clembench dataset and `triangulate data generate --benchmark clembench`."""

from __future__ import annotations

import json

import pytest

from datasets_build.clembench import build, load_clembench
from datasets_build.clembench_fresh import generate_rows
from datasets_build.clembench_upstream import load_instances
from multiturn.games.clem import GAMES, play_game
from plumbing.errors import UserError
from triangulation.cli.main import main


def test_build_round_trips_the_v16_instances(upstream, built_data, tmp_path):
    summary = build(tmp_path)
    assert summary["configs"] == 7 + 9
    card = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "config_name: referencegame_de" in card and "Merriam-Webster" in card
    for game in ("taboo", "privateshared", "wordle_withcritic"):
        rows = load_clembench(game, tmp_path)
        published = load_instances(game)
        assert [r["id"] for r in rows] == [p["id"] for p in published]
        assert {k: v for k, v in rows[0].items() if k not in ("english_words", "resources")} == json.loads(json.dumps(published[0]))
    assert load_clembench("privateshared", tmp_path)[0]["resources"]["words"]  # the game's texts travel with the row
    assert len(load_clembench("wordle", tmp_path)[0]["english_words"]) == 12953


def test_referencegame_generator_uses_the_published_templates(upstream, built_data):
    """Rendering the zero-shot templates with a v1.6 instance's grids gives its published prompts."""
    from datasets_build.clembench_upstream import game_dir

    folder = game_dir("referencegame") / "resources" / "initial_prompts"
    head_a = (folder / "player_a_prompt_header_zero_shot.template").read_text(encoding="utf-8")
    for inst in load_instances("referencegame")[::37]:
        rendered = (
            head_a.replace("TARGET_GRID", inst["player_1_target_grid"])
            .replace("SECOND_GRID", inst["player_1_second_grid"])
            .replace("THIRD_GRID", inst["player_1_third_grid"])
        )
        assert rendered.strip() == inst["player_1_prompt_header"].strip()


@pytest.mark.parametrize("game", ["wordle", "imagegame", "referencegame", "privateshared"])
def test_generated_episodes_are_fresh_deterministic_and_playable(upstream, built_data, game):
    rows = generate_rows(game, 6, seed=7)
    assert rows == generate_rows(game, 6, seed=7)
    assert rows != generate_rows(game, 6, seed=8)
    assert len({r["id"] for r in rows}) == 6
    for inst in rows[:3]:
        from tests.multiturn.test_clem_games import _perfect_players

        scores = play_game(GAMES[game](inst), _perfect_players(game, inst)).scores()
        assert scores["aborted"] == 0 and scores["main_score"] == 100.0


def test_generator_needs_sources_it_cannot_redistribute(upstream, built_data, tmp_path):
    with pytest.raises(UserError, match="--clues"):
        generate_rows("wordle_withclue", 4, 1)
    with pytest.raises(UserError, match="--related"):
        generate_rows("taboo", 3, 1)
    related = {
        "house": ["home", "roof", "door"],
        "cat": ["pet", "kitten", "meow"],
        "river": ["water", "stream", "bank"],
        "time": ["clock", "hour", "minute"],
        "zebra": ["stripes", "horse", "africa"],
        "people": ["person", "crowd", "human"],
    }
    taboo = generate_rows("taboo", 1, 1, related=related)
    assert taboo[0]["target_word"] in related and taboo[0]["related_word"] == related[taboo[0]["target_word"]]
    from tests.multiturn.test_clem_games import _perfect_players

    assert play_game(GAMES["taboo"](taboo[0]), _perfect_players("taboo", taboo[0])).scores()["main_score"] == 100.0
    assert (
        len(
            generate_rows(
                "wordle_withclue",
                2,
                1,
                clues={"start": "embark", "house": "home", "plant": "flora", "water": "h2o", "light": "lamp", "sound": "noise"},
            )
        )
        == 2
    )


def test_data_generate_cli(upstream, built_data, tmp_path, monkeypatch):
    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path / "data"))
    out = tmp_path / "gen"
    assert (
        main(["data", "generate", "--benchmark", "clembench", "--game", "imagegame", "--count", "4", "--seed", "1", "--out", str(out)]) == 0
    )
    rows = load_clembench("imagegame", out)
    assert len(rows) == 4 and all(r["target_grid"] for r in rows)
    assert main(["data", "generate", "--benchmark", "clembench", "--count", "4"]) == 2  # no --game: one-line error


def test_tasks_play_generated_instances_when_pointed_at_them(upstream, built_data, tmp_path, monkeypatch):
    from multiturn.registry import get_task

    out = tmp_path / "gen"
    assert (
        main(["data", "generate", "--benchmark", "clembench", "--game", "privateshared", "--count", "5", "--seed", "2", "--out", str(out)])
        == 0
    )
    episodes = get_task("privateshared", {"instances": str(out)}).instances(0)
    assert [e["id"] for e in episodes] == [r["id"] for r in generate_rows("privateshared", 5, 2)]
    with pytest.raises(UserError, match="has no episodes of taboo"):  # a folder without the game is an error, not a fallback
        get_task("taboo", {"instances": str(out)}).instances(0)
