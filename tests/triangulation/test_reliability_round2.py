"""Issue 30 items 1, 3, 5, 7: two models whose paths end alike keep two rows; ``score`` respects ``play``'s lock;
a suite's plan and its cells' command lines hold no credential."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

from triangulation.cli.main import main

REPO = Path(__file__).resolve().parents[2]
HOLD = """
import sys, time
sys.path.insert(0, {repo!r})
from plumbing.locks import RunLock
with RunLock({path!r}):
    print("locked", flush=True)
    time.sleep(float(sys.argv[1]))
"""


def _play(out: Path, seed: str = "1") -> list[str]:
    return ["play", "--model", "random", "--model_args", f"seed={seed}", "--tasks", "wcst", "--limit", "2", "--output_path", str(out)]


def _as_model(played: Path, root: Path, path: str) -> Path:
    """The chance player's run in ``played``, as if it had been a local model at ``path`` (results config and folder)."""
    from models.ref import ModelRef

    folder = root / ModelRef.parse("hf", f"pretrained={path}").folder
    shutil.copytree(played / "random", folder)
    for results in folder.glob("results_*.json"):
        data = json.loads(results.read_text(encoding="utf-8"))
        data["config"].update(model="hf", model_args=f"pretrained={path}", model_name=path)
        results.write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_two_models_whose_paths_end_in_the_same_folder_keep_two_rows(tmp_path, capsys):
    """Item 1: ``/models/orgA/Same`` and ``/models/orgB/Same`` were one row of scores.csv (one model's scores
    silently gone); each is now named by its folders, in the report, its CSVs and the episode viewer, and the
    report says so."""
    root = tmp_path / "runs"
    for org, seed in (("orgA", "1"), ("orgB", "2")):
        assert main(_play(tmp_path / org, seed)) == 0
        _as_model(tmp_path / org, root, f"/models/{org}/Same")
    capsys.readouterr()
    assert main(["report", str(root), "--out", str(tmp_path / "report")]) == 0
    err = capsys.readouterr().err
    assert "named 'Same'" in err and "orgA/Same" in err and "orgB/Same" in err
    with (tmp_path / "report" / "scores.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    models = {row[0] for row in rows[1:]}
    assert {"orgA/Same", "orgB/Same"} <= models and "Same" not in models, rows
    page = (tmp_path / "report" / "episodes" / "wcst.html").read_text(encoding="utf-8")
    assert "orgA/Same" in page and "orgB/Same" in page
    assert main(["view", str(root), "--out", str(tmp_path / "view")]) == 0
    assert "orgB/Same" in (tmp_path / "view" / "wcst.html").read_text(encoding="utf-8")


def _hold_lock(path: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD.format(repo=str(REPO), path=str(path)), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_score_while_play_holds_the_run_is_refused_naming_the_holder(tmp_path, capsys):
    """Item 3: ``score`` takes the lock ``play`` holds while it writes; it stops with one line naming the holder
    (no results file from a half-played run), or waits for it with ``--wait_lock``."""
    assert main(_play(tmp_path)) == 0
    folder = tmp_path / "random"
    before = sorted(folder.glob("results_*.json"))
    argv = _play(tmp_path)
    argv[argv.index("--limit") + 1] = "3"
    assert main(argv) == 0
    for path in set(folder.glob("results_*.json")) - set(before):  # as a `play --limit 3` still running leaves it:
        path.unlink()  # a third episode on file, its results not written yet
    holder = _hold_lock(folder / "episodes_wcst.jsonl", 60)
    try:
        capsys.readouterr()
        assert main(["score", str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"PID {holder.pid}" in err[0] and "--wait_lock" in err[0], err
        assert sorted(folder.glob("results_*.json")) == before
    finally:
        holder.kill()
        holder.wait()
    holder = _hold_lock(folder / "episodes_wcst.jsonl", 1.5)
    try:
        assert main(["score", str(tmp_path), "--wait_lock"]) == 0
    finally:
        holder.wait()


PASSWORD = "PL'AN-i30a-pass"


def test_a_dry_run_plan_holds_no_url_password(tmp_path, capsys, monkeypatch):
    """Item 5: ``suite_plan.json`` showed an ``engine: api`` endpoint's URL with its password."""
    monkeypatch.setenv("I30A_KEY", "unused-key-value")
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "models:\n  - name: remote\n    engine: api\n    model: local-chat-completions\n    model_args: model=fake\n"
        f'    base_url: "http://user:{PASSWORD}@127.0.0.1:9/v1"\n    api_key_env: I30A_KEY\n'
        "tasks:\n  - play: wcst\n    limit: 1\n",
        encoding="utf-8",
    )
    assert main(["suite", str(suite), "--output_path", str(tmp_path / "out"), "--dry_run"]) == 0
    plan = (tmp_path / "out" / "suite_plan.json").read_text(encoding="utf-8")
    assert PASSWORD not in plan and "AN-i30a-pass" not in plan
    assert "127.0.0.1:9" in plan and "<redacted>" in plan
    assert "AN-i30a-pass" not in "".join(capsys.readouterr())


def test_suite_cells_get_credentials_in_their_environment_never_their_argv(tmp_path, monkeypatch):
    """Item 7: a cell's command line is visible to every user (``ps -ef``); each credential of its model_args,
    judge_model_args and gen_kwargs reaches it through its environment instead, and the cell runs with them."""
    key, token = "ARGVKEY-i30a-12", "ARGVTOKEN-i30a-34"
    base_url = f"http://user:{PASSWORD}@127.0.0.1:9/v1/chat/completions"
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "models:\n  - name: leaky\n    model: local-chat-completions\n"
        f'    model_args: "model=fake,base_url={base_url},api_key={key}"\n'
        "    judge: {model: local-chat-completions, model_args: {model: j, api_key: JUDGEKEY-i30a-56}}\n"
        f"tasks:\n  - play: splat_easy\n    limit: 1\n    gen_kwargs: {{auth_token: {token}}}\n",
        encoding="utf-8",
    )
    log = tmp_path / "cells.jsonl"
    monkeypatch.setenv("FAKE_CELL_LOG", str(log))
    monkeypatch.setenv("FAKE_CELL_REQUESTS", "0")
    launcher = f"{sys.executable} {REPO / 'tests' / 'support' / 'fake_cell.py'}"
    assert main(["suite", str(suite), "--output_path", str(tmp_path / "out"), "--launcher", launcher, "--no_report"]) == 0
    [start, end] = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    shown = " ".join(start["cmdline"])
    assert "fake_cell.py" in shown and "--model_args" in shown
    for secret in (PASSWORD, key, token, "JUDGEKEY-i30a-56"):
        assert secret not in shown, f"{secret} in the cell's argv: {shown}"
        assert secret in " ".join(start["argv"])  # and the cell still runs with it
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file() and "fake-model" not in p.parts]  # the suite's own files
    assert any(p.suffix == ".log" for p in written)
    assert not [p for p in written if any(s.encode() in p.read_bytes() for s in (key, token, "AN-i30a-pass"))]


def test_lm_evals_request_cache_stores_no_echoed_key(tmp_path):
    """Issue 30 done-means: a suite eval cell's ``--use_cache`` database held a key the server echoed."""
    from lm_eval.api.instance import Instance
    from lm_eval.api.model import CachingLM

    from models.scripted import ScriptedLM
    from plumbing.secrets import register_model_args
    from triangulation.cli.eval import install_scrubbing_request_cache

    register_model_args({"api_key": "CACHEKEY-777-x"})
    install_scrubbing_request_cache()
    lm = ScriptedLM(lambda messages: "my key is CACHEKEY-777-x")
    cached = CachingLM(lm, str(tmp_path / "cache.db"))
    prompt = json.dumps([{"role": "user", "content": "q"}])
    [reply] = cached.generate_until([Instance("generate_until", {}, (prompt, {"until": []}), 0)])
    assert reply == "my key is CACHEKEY-777-x"  # this run's own reply is untouched
    cached.dbdict.close()
    assert b"CACHEKEY-777-x" not in (tmp_path / "cache.db").read_bytes()
