"""A model's identity and fingerprint come from one ``ModelRef`` (issue 38 item 1; issue 39's two model-identity
defects and item 13).

Before: two GGUF files of one name (llama.cpp's default ``ggml-model-Q4_K_M.gguf``) in two folders, or two
``revision=``s of one Hub model, shared one report row; two suite entries of one weights under two ``name:``s shared
one row; rotating a credential or adding a ``timeout`` changed every cell's fingerprint (a finished cell reran).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from models.ref import ModelRef
from triangulation.runs.results_io import Run, name_models
from triangulation.suite.outputs import report_model_names
from triangulation.suite.spec import cells, load_suite


def _rows(*model_args: str, labels=None, root=Path("/runs")) -> list[str]:
    runs = [
        Run(model="?", path=root / f"m{i}" / "r.json", date="d", results={}, config={"model": "hf", "model_args": a})
        for i, a in enumerate(model_args)
    ]
    name_models(runs, {root / label: label for label in labels} if labels else None)
    return [r.model for r in runs]


def test_two_gguf_files_of_one_name_are_two_rows():
    rows = _rows("pretrained=/w/llama/,gguf_file=ggml-model-Q4_K_M.gguf", "pretrained=/w/qwen,gguf_file=ggml-model-Q4_K_M.gguf")
    assert rows == ["llama/ggml-model-Q4_K_M", "qwen/ggml-model-Q4_K_M"]
    assert _rows(*["pretrained=/w/llama,gguf_file=ggml-model-Q4_K_M.gguf"] * 2) == ["ggml-model-Q4_K_M"] * 2  # one model: one row


def test_two_revisions_of_one_hub_model_are_two_rows():
    rows = _rows("pretrained=org/m,revision=abc", "pretrained=org/m,revision=def", "pretrained=org/m")
    assert rows == ["org/m@abc", "org/m@def", "org/m"]


def test_two_suite_names_of_one_weights_are_two_rows(tmp_path):
    rows = _rows("pretrained=org/m", "pretrained=org/m", labels=["m0", "m1"])
    assert rows == ["m0", "m1"]
    suite = tmp_path / "s.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "s",
                "models": [{"name": "greedy", "model_args": "pretrained=org/m"}, {"name": "other", "model_args": "pretrained=org/m"}],
                "tasks": [{"eval": "connections"}],
            }
        )
    )
    assert report_model_names(load_suite(suite).models) == ["greedy", "other"]


def _fingerprints(tmp_path: Path, model: dict, options: dict | None = None) -> list[str]:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "s", "models": [{"name": "m", **model}], "tasks": [{"play": "wordle", **(options or {})}]}))
    return [c.fingerprint() for c in cells(load_suite(path))]


def test_credentials_and_timeouts_do_not_change_a_fingerprint(tmp_path):
    base = {"model": "local-chat-completions", "model_args": "model=m,base_url=http://u:pw1@h/v1,api_key=k1"}
    rotated = {"model": "local-chat-completions", "model_args": "model=m,base_url=http://u:pw2@h/v1,api_key=k2,timeout=60"}
    assert _fingerprints(tmp_path, base) == _fingerprints(tmp_path, rotated)
    assert _fingerprints(tmp_path, base) == _fingerprints(tmp_path, base, {"timeout": 30})
    judged = {**base, "judge": {"model": "hf", "model_args": "pretrained=j,token=t1"}}
    assert _fingerprints(tmp_path, judged) == _fingerprints(
        tmp_path, {**base, "judge": {"model": "hf", "model_args": "pretrained=j,token=t2"}}
    )
    # what changes results still counts
    assert _fingerprints(tmp_path, base) != _fingerprints(
        tmp_path, {**base, "model_args": "model=m2,base_url=http://u:pw1@h/v1,api_key=k1"}
    )
    assert _fingerprints(tmp_path, base) != _fingerprints(tmp_path, base, {"seed": 7})


def test_a_model_without_credentials_keeps_its_fingerprint_form():
    # a suite written before ModelRef: its model_args as given (string or mapping) are what it hashed
    assert ModelRef.parse("hf", "pretrained=x,dtype=float32").fingerprint() == "pretrained=x,dtype=float32"
    assert ModelRef.parse("hf", {"pretrained": "x"}).fingerprint() == {"pretrained": "x"}


def test_model_ref_parses_once_and_derives_every_form(parses):
    ref = ModelRef.parse("hf", "pretrained=/w/org/SmolLM,revision=r1,api_key=secret")
    forms = (ref.name, ref.folder, ref.report_id, ref.key, ref.redacted, ref.args_string, ref.fingerprint())
    assert [a for a in parses if isinstance(a, str)] == ["pretrained=/w/org/SmolLM,revision=r1,api_key=secret"]
    assert ref.key == "/w/org/SmolLM@r1" and ref.report_id == "SmolLM" and "secret" not in repr(forms)
