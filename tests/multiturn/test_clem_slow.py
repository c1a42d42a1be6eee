"""End to end: `triangulate play --tasks clembench --limit 1` plays all seven games on SmolLM2."""

from __future__ import annotations

import json

import pytest

from multiturn.engine.record import read_episodes
from multiturn.games.clem import CLEMBENCH_GAMES
from plumbing import run_folder
from triangulation.cli.main import main


@pytest.mark.slow
def test_play_clembench_on_smollm2(upstream, built_data, tmp_path, capsys):
    code = main(["play", "--tasks", "clembench", "--limit", "1", "--gen_kwargs", "max_gen_toks=12", "--output_path", str(tmp_path)])
    assert code == 0
    results = sorted(tmp_path.rglob("results_*.json"))
    assert len(results) == 1
    payload = json.loads(results[0].read_text(encoding="utf-8"))
    # lm-eval's shape: the group is listed under `results` too, next to its members
    assert set(payload["results"]) == set(CLEMBENCH_GAMES) | {"clembench"}
    assert payload["group_subtasks"]["clembench"] == sorted(CLEMBENCH_GAMES)
    for game in CLEMBENCH_GAMES:
        entry = payload["results"][game]
        assert 0.0 <= entry["played,none"] <= 100.0
        assert entry["n_failed"] == 0
        records = read_episodes(run_folder.episodes_path(results[0].parent, game))
        assert len(records) == 1
        turns = records[0]["interactions"]["turns"]
        assert turns and any(e["from"] == "GM" and e["action"]["type"] == "send message" for e in turns[0])
    group = payload["groups"]["clembench"]
    assert "clemscore,none" in group and "played,none" in group
    assert "clemscore" in capsys.readouterr().out
