"""Issue 30 item 13: `suite --dry_run` on a machine with no tokenizer (neither the model's nor the embedded
SmolLM2's) writes the plan with a "not counted" note for every cell, eval cells included (it raised a
TypeError from ``n_tokens`` outside its ``try``)."""

from __future__ import annotations

import json

from tests.support.built_data import use_built_data
from tests.triangulation.test_suite import write_suite
from triangulation.cli.main import main


def test_dry_run_without_any_tokenizer_notes_every_cell(tmp_path, upstream, monkeypatch, capsys):
    from triangulation.suite import counting

    use_built_data(upstream, monkeypatch)
    monkeypatch.setattr(counting.Tokenizers, "_load", lambda self, source: None)  # nothing on this machine
    suite = write_suite(
        tmp_path,
        {
            "models": [{"name": "remote", "model": "local-chat-completions", "model_args": "model=m,base_url=http://127.0.0.1:9/v1"}],
            "tasks": [{"eval": "connections", "limit": 1}, {"play": "wcst", "limit": 1}],
        },
    )
    out = tmp_path / "out"
    assert main(["suite", str(suite), "--output_path", str(out), "--dry_run"]) == 0
    cells = json.loads((out / "suite_plan.json").read_text(encoding="utf-8"))["models"][0]["cells"]
    assert [c["name"] for c in cells] == ["connections", "wcst"]
    for cell in cells:
        assert cell["requests"] is None and cell["prompt_tokens"] is None and cell["note"].startswith("not counted: no tokenizer")
