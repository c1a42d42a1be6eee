"""``triangulate play --wandb_args ... --hf_hub_log_args ...``: results and episodes logged through lm-eval's
own loggers. W&B runs in offline mode (nothing leaves the machine); the Hub's client is replaced by a
recorder (the upload calls lm-eval's EvaluationTracker makes are checked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.played_run import build_data


@pytest.fixture
def data(upstream, tmp_path_factory):
    return build_data(upstream, tmp_path_factory.mktemp("loggers-data"))


def test_play_logs_results_and_episodes_to_wandb_offline(data, tmp_path, monkeypatch):
    pytest.importorskip("wandb", reason="pip install wandb (the [test] extra has it)")
    from triangulation.cli.main import main

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    args = [
        "play",
        "--model",
        "random",
        "--tasks",
        "nback_verbal_1,wcst",
        "--limit",
        "2",
        "--output_path",
        str(tmp_path / "out"),
        "--wandb_args",
        f"project=triangulate-test,mode=offline,dir={tmp_path}",
    ]
    assert main(args) == 0
    [run_dir] = list((tmp_path / "wandb").glob("offline-run-*"))
    tables = {p.name.split("_episodes")[0]: p for p in (run_dir / "files" / "media" / "table").glob("*_episodes_*.table.json")}
    assert set(tables) == {"nback_verbal_1", "wcst"}
    table = json.loads(tables["wcst"].read_text())
    assert table["columns"] == ["id", "failed", "scores", "turns", "transcript"]
    assert [row[0] for row in table["data"]] == ["wcst_run0", "wcst_run1"]
    [results] = list((run_dir / "files" / "media" / "table" / "evaluation").glob("eval_results_*.table.json"))
    rows = json.loads(results.read_text())["data"]  # lm-eval's WandbLogger results table
    assert any(row[0] == "wcst" and "accuracy" in row for row in rows), rows


def test_play_pushes_results_and_episodes_through_the_evaluation_tracker(data, tmp_path, monkeypatch):
    import huggingface_hub

    from triangulation.cli.main import main

    uploads = []

    class RecordingApi:
        def __init__(self, *a, **k):
            pass

        def whoami(self, *a, **k):
            return {"name": "tester"}

        def create_repo(self, *a, **k):
            return None

        def upload_file(self, *a, **k):
            uploads.append(k.get("path_in_repo"))

        def upload_folder(self, *a, **k):
            uploads.extend(p.name for p in Path(k["folder_path"]).iterdir())

        def list_repo_files(self, *a, **k):
            return list(uploads)

        def __getattr__(self, name):
            return lambda *a, **k: None

    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingApi)  # lm-eval's tracker imports it at use
    from lm_eval.loggers import EvaluationTracker

    cards = []  # the dataset card is rebuilt from the files on the Hub: recorded, not run
    monkeypatch.setattr(EvaluationTracker, "recreate_metadata_card", lambda self: cards.append(self.details_repo_private))
    monkeypatch.setenv("HF_TOKEN", "hf_dummy_token_for_test")
    args = [
        "play",
        "--model",
        "random",
        "--tasks",
        "lnt",
        "--limit",
        "1",
        "--output_path",
        str(tmp_path / "out"),
        "--hf_hub_log_args",
        "hub_results_org=someorg,details_repo_name=d,results_repo_name=r,push_results_to_hub=True,push_samples_to_hub=True,public_repo=False",
    ]
    assert main(args) == 0
    assert any(str(u).endswith(".json") for u in uploads), uploads  # the results JSON
    assert any("samples_lnt" in str(u) for u in uploads), uploads  # the episodes as samples
    assert cards == ["someorg/d-private"]
