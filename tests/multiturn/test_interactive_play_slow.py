"""`triangulate play --tasks splat_easy,connections_interactive` on the embedded SmolLM2 as player and judge."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from multiturn.engine.record import read_episodes
from plumbing import run_folder

TASKS = ["splat_easy", "connections_interactive"]
ROUND_CAP = 2  # SPLAT's 15 rounds cut to 2 to keep CI cheap; the cap is checked in the results config


def data_with_splat(upstream: Path) -> Path:
    """The shared built-data folder of the test process (globalgroup, connections) plus ``splat``."""
    from datasets_build.hub import atomic_dir
    from datasets_build.splat import build_splat
    from tests.support.built_data import built_data_root

    root = built_data_root(str(upstream))
    if not (root / "splat" / "README.md").is_file():
        with atomic_dir(root / "splat") as out:
            build_splat(out)
    return root


@pytest.mark.slow
def test_play_splat_and_interactive_connections_on_smollm2(upstream, tmp_path):
    root = data_with_splat(upstream)
    env = dict(os.environ, TRIANGULATE_UPSTREAM=str(upstream), TRIANGULATE_DATA=str(root))
    # one BLAS/OpenMP thread: on a busy 2-core machine two spinning threads made generation ~10x slower
    env.setdefault("OMP_NUM_THREADS", "1")
    cmd = [
        "triangulate",
        "play",
        "--tasks",
        ",".join(TASKS),
        "--limit",
        "2",
        "--gen_kwargs",
        "max_gen_toks=16",
        "--task_args",
        f"max_rounds={ROUND_CAP}",
        "--output_path",
        str(tmp_path),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [model_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    [results] = list(model_dir.glob("results_*.json"))
    payload = json.loads(results.read_text())
    assert payload["config"]["model"] == "hf" and "SmolLM2" in payload["config"]["model_args"]

    splat = payload["results"]["splat_easy"]
    assert payload["n-samples"]["splat_easy"]["effective"] == 2
    assert 0.0 <= splat["accuracy,none"] <= 1.0 and 1.0 <= splat["rounds,none"] <= ROUND_CAP
    assert 0.0 <= splat["overall,none"] <= 100.0
    assert payload["configs"]["splat_easy"]["max_rounds"] == ROUND_CAP
    records = read_episodes(run_folder.episodes_path(model_dir, "splat_easy"))
    assert len(records) == 2 and not any(r["failed"] for r in records)
    for record in records:
        assert record["difficulty"] == "easy" and 1 <= len(record["rounds"]) <= ROUND_CAP
        assert all(isinstance(r["player"], str) and isinstance(r["judge"], str) for r in record["rounds"])
        assert any(t["role"] == "judge" for t in record["transcript"])
        assert record["scores"]["rounds"] == (len(record["rounds"]) if record["hit"] else ROUND_CAP)

    conn = payload["results"]["connections_interactive"]
    assert payload["n-samples"]["connections_interactive"]["effective"] == 2
    assert 0.0 <= conn["mistakes,none"] <= 4.0 and 0.0 <= conn["groups_found,none"] <= 4.0
    assert 0.0 <= conn["weighted_clustering,none"] <= 10.0
    records = read_episodes(run_folder.episodes_path(model_dir, "connections_interactive"))
    assert sorted(r["id"] for r in records) == ["connections_000", "connections_001"]
    for record in records:
        assert not record["failed"] and record["events"]
        assert {e["result"] for e in record["events"]} <= {"correct", "one_away", "wrong", "invalid", "invalid_mistake"}
        assert record["scores"]["mistakes"] == 4.0 or record["scores"]["solved"] == 1.0  # every game ends by the rules
