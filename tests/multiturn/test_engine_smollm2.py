"""`triangulate play` on the embedded SmolLM2 (real model, real CLI): the issue-3 end-to-end check."""

from __future__ import annotations

import json
import math
import os
import subprocess

import pytest

from multiturn.engine.record import read_episodes
from plumbing import run_folder

TASKS = ["nback_verbal_1", "nback_spatial_2", "wcst", "lnt"]


@pytest.mark.slow
def test_play_on_smollm2_writes_results_and_episodes(upstream, built_data, tmp_path):
    # one episode per task and 2 new tokens per reply keep this cheap (the histories still grow to
    # 24-25 trials); --limit 2 works the same and costs twice as much
    cmd = [
        "triangulate",
        "play",
        "--tasks",
        ",".join(TASKS),
        "--limit",
        "1",
        "--gen_kwargs",
        "max_gen_toks=2",
        "--output_path",
        str(tmp_path),
    ]
    proc = subprocess.run(cmd, env=dict(os.environ, TRIANGULATE_UPSTREAM=str(upstream)), capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [model_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert "smollm2" in model_dir.name.lower()
    [results] = list(model_dir.glob("results_*.json"))
    payload = json.loads(results.read_text())
    assert payload["config"]["model"] == "hf" and "gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf" in payload["config"]["model_args"]
    assert payload["config"]["gen_kwargs"] == {"max_gen_toks": 2}
    assert payload["config"]["lm_class"] == "PrefixCacheHFLM" and payload["config"]["prefix_cache"] is True
    for task in TASKS:
        entry = payload["results"][task]
        assert payload["n-samples"][task]["effective"] == 1
        assert 0.0 <= entry["parse_rate,none"] <= 1.0
        if task in ("wcst", "lnt") and entry["parse_rate,none"] == 0.0:  # accuracy on parsed trials only
            assert math.isnan(entry["accuracy,none"]) and entry["accuracy_all_trials,none"] == 0.0
        else:
            assert 0.0 <= entry["accuracy,none"] <= 1.0
        [record] = read_episodes(run_folder.episodes_path(model_dir, task))
        assert record["failed"] is False and len(record["trials"]) in (24, 25)
        assert all(isinstance(t["response"], str) for t in record["transcript"])
    assert "dprime,none" in payload["results"]["nback_verbal_1"]
    assert "perseverative_errors,none" in payload["results"]["wcst"]
