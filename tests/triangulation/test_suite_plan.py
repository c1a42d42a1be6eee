"""`triangulate suite --dry_run`: DIR/suite_plan.json with each model's engine, GPUs, replicas and expected
start and end (the GPU pool), its cells' commands
(secrets redacted) and request / prompt-token counts where the data is local, null where it is not."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.triangulation.test_suite import ROOT, scripted, suite_env, write_suite

SECRET = "sk-plan-test-secret-0123456789"


def test_dry_run_writes_the_plan_with_counts(tmp_path):
    suite = write_suite(
        tmp_path,
        {
            "defaults": {"seed": 3},
            "models": [
                {**scripted("alpha"), "gpus": 2},
                {
                    "name": "remote",
                    "model": "local-chat-completions",
                    "model_args": f"model=m,base_url=http://127.0.0.1:9/v1,api_key={SECRET}",
                },
            ],
            "tasks": [
                {"eval": "connections", "limit": 2},
                {"play": "lnt", "limit": 1, "name": "lnt1"},
                {"play": "lnt", "limit": 2, "name": "lnt2"},
                {"eval": "winogrande", "limit": 2},  # Hub data, not on this machine
            ],
        },
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "-o", str(out), "--dry_run", "--gpus", "0,1,2"]
    result = subprocess.run(cmd, cwd=ROOT, env=suite_env(tmp_path / "w.log"), capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    text = (out / "suite_plan.json").read_text()
    assert SECRET not in text and SECRET not in result.stdout + result.stderr
    plan = json.loads(text)
    alpha, remote = plan["models"]
    assert (alpha["name"], alpha["gpus"], alpha["replicas"]) == ("alpha", ["0", "1"], 1)
    assert remote["gpus"] == ["2"] and alpha["expected_start_h"] == remote["expected_start_h"] == 0  # both fit the 3 GPUs at once
    assert alpha["engine"] == "hf" and alpha["engine_reason"].startswith("hf: the default engine")
    assert (
        plan["expected"]["makespan_h"] >= alpha["expected_end_h"] > 0
        and 0 < plan["expected"]["busy_work"] <= plan["expected"]["busy_held"] <= 1
    )
    cells = {c["name"]: c for c in alpha["cells"]}
    assert set(cells) == {"connections", "lnt1", "lnt2", "winogrande"}
    assert all(set(c) >= {"name", "command", "requests", "prompt_tokens", "tokenizer"} for c in cells.values())
    assert cells["connections"]["requests"] == 2 and cells["connections"]["prompt_tokens"] > 2 * 50
    assert cells["connections"]["tokenizer"] == "SmolLM2-135M-Instruct (embedded)"  # "alpha" is no local tokenizer
    # generated tokens: a generation's gold answer's length, at most its max_gen_toks; a game's well-formed replies
    conn = cells["connections"]
    assert conn["kind"] == "generate" and 0 < conn["gen_tokens"] <= conn["max_gen_tokens"] == 2 * 750
    assert cells["lnt1"]["kind"] == "play" and 0 < cells["lnt1"]["gen_tokens"] <= cells["lnt1"]["max_gen_tokens"]
    assert plan["expected"]["sources"]["alpha"]["work"].startswith("3 of 4 cells counted")  # winogrande: the table
    # LNT has a fixed number of trials: two episodes are exactly twice one
    assert cells["lnt1"]["requests"] > 1 and cells["lnt2"]["requests"] == 2 * cells["lnt1"]["requests"]
    assert (
        cells["lnt2"]["prompt_tokens"] == 2 * cells["lnt1"]["prompt_tokens"]
        or cells["lnt2"]["prompt_tokens"] > cells["lnt1"]["prompt_tokens"]
    )
    wino = cells["winogrande"]
    assert (
        wino["requests"] is None and wino["prompt_tokens"] is None and wino["tokenizer"] is None and wino["note"].startswith("not counted")
    )
    assert "--limit 2" in cells["connections"]["command"] and "play --tasks lnt" in cells["lnt1"]["command"]
    assert "api_key=<redacted>" in remote["cells"][0]["command"]
    assert plan["totals"]["alpha"]["cells_not_counted"] == 1
    assert plan["totals"]["alpha"]["requests"] == sum(c["requests"] or 0 for c in cells.values())
    assert (
        "alpha: GPUs 0,1 x1, expected 0.00 h ->" in result.stdout
        and "node: expected makespan" in result.stdout
        and f"plan: {out / 'suite_plan.json'}" in result.stdout
    )
    assert not (out / "runs").exists()  # nothing ran
