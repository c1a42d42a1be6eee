"""Replaying the nine published clembench v1.6 episodes reproduces every recorded game-master decision."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from multiturn.games.clem import replay_episode

RUNS = "clembench-runs/v1.6"
GPT4 = "gpt-4-turbo-2024-04-09-t0.0--gpt-4-turbo-2024-04-09-t0.0"
LLAMA = "Meta-Llama-3-8B-Instruct-hf-t0.0--Meta-Llama-3-8B-Instruct-hf-t0.0"

# (pair, game, experiment folder, turns, main score, aborted, success): outcomes as the records show them
EPISODES = [
    (GPT4, "taboo", "0_high_en", 1, 100.0, 0, 1),  # guessed at the first clue
    (LLAMA, "taboo", "0_high_en", 1, 100.0, 0, 1),  # "GUESS: RESPONSIBILITY" accepted (lower-cased)
    (GPT4, "referencegame", "0_line_grids_rows", 1, 100.0, 0, 1),  # "Answer: first" is the target
    (LLAMA, "referencegame", "0_line_grids_rows", 1, 0.0, 0, 0),  # "Answer: Third": valid, wrong
    (GPT4, "wordle", "0_high_frequency_words_no_clue_no_critic", 5, 30.0, 0, 1),  # solved at guess 5
    (LLAMA, "wordle", "0_high_frequency_words_no_clue_no_critic", 7, 0.0, 0, 0),  # 'statr' re-prompted, lost
    (GPT4, "wordle_withclue", "0_high_frequency_words_clue_no_critic", 1, 100.0, 0, 1),  # solved at once
    (GPT4, "imagegame", "0_compact_grids", 6, 100.0, 0, 1),  # 5 instructions + DONE, grid exact
    (LLAMA, "imagegame", "0_compact_grids", 1, float("nan"), 1, 0),  # no "Instruction:" -> aborted
]


def _load(upstream: Path, pair: str, game: str, experiment: str) -> dict:
    path = upstream / RUNS / pair / game / experiment / "episode_0" / "interactions.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("pair,game,experiment,turns,main,aborted,success", EPISODES, ids=[f"{p[:5]}-{g}" for p, g, *_ in EPISODES])
def test_replay_reproduces_recorded_episode(upstream, built_data, pair, game, experiment, turns, main, aborted, success):
    interactions = _load(upstream, pair, game, experiment)
    result = replay_episode(game, interactions)
    assert result["differences"] == []
    assert result["unused_replies"] == {}
    assert result["turns"] == len(interactions["turns"]) == turns
    assert result["aborted"] == aborted
    assert result["success"] == success
    if math.isnan(main):
        assert math.isnan(result["main_score"])
    else:
        assert result["main_score"] == pytest.approx(main)


def test_replay_compares_every_decision(upstream, built_data):
    """A changed reply changes our master's decisions, and the comparison reports it."""
    interactions = _load(upstream, GPT4, "taboo", "0_high_en")
    for event in interactions["turns"][0]:
        if event["from"] == "Player 2":
            event["action"]["content"] = "My guess is responsibility"  # no GUESS: prefix
    result = replay_episode("taboo", interactions)
    assert result["aborted"] == 1
    assert any("invalid format" in d or "valid response" in d for d in result["differences"])


def test_replay_with_given_instance_and_wrong_game(upstream, built_data):
    from datasets_build.clembench_upstream import load_instances
    from plumbing.errors import UserError

    interactions = _load(upstream, GPT4, "referencegame", "0_line_grids_rows")
    instance = load_instances("referencegame")[0]
    assert replay_episode("referencegame", interactions, instance)["differences"] == []
    with pytest.raises(UserError):
        replay_episode("taboo", interactions)  # no taboo instance has this first prompt
    with pytest.raises(UserError):
        replay_episode("chess", interactions)
