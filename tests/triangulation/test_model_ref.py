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
from triangulation.suite.spec import Cell, cells, load_suite


def _rows(*model_args: str, labels=None, root=Path("/runs")) -> list[str]:
    runs = [
        Run(model="?", path=root / f"m{i}" / "r.json", date="d", results={}, ref=ModelRef.stored({"model": "hf", "model_args": a}))
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
    assert load_suite(suite).report_names == ["greedy", "other"]


def _fingerprints(tmp_path: Path, model: dict, options: dict | None = None) -> list[str]:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "s", "models": [{"name": "m", **model}], "tasks": [{"play": "wordle", **(options or {})}]}))
    return [c.fingerprint for c in cells(load_suite(path))]


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
    forms = (ref.name, ref.folder, ref.report_id, ref.key, ref.label, ref.redacted, ref.args_string, ref.resume_args, ref.fingerprint())
    assert parses == ["pretrained=/w/org/SmolLM,revision=r1,api_key=secret"]  # every form from the one parse
    assert ref.key == "/w/org/SmolLM@r1" and ref.report_id == "SmolLM" and "secret" not in repr(forms)


def _suite(tmp_path: Path, models: list[dict]) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "s", "models": models, "tasks": [{"play": "wordle", "seed": 3, "limit": 2}]}))
    return path


def test_a_suite_parses_each_model_once_and_derives_names_flags_and_fingerprints_from_it(parses, tmp_path):
    from triangulation.suite.cells import cell_argv
    from triangulation.suite.preflight import Findings, model_checks

    roles = {"judge": {"model": "hf", "model_args": "pretrained=/w/judge"}, "player_b": {"model_args": {"pretrained": "/w/b"}}}
    path = _suite(tmp_path, [{"name": "a", "model": "hf", "model_args": "pretrained=/w/a,revision=r1", **roles}])
    parses.clear()
    suite = load_suite(path)
    assert len(parses) == 3  # the model, its judge, its second player: once each, at the suite file
    [cell] = cells(suite)
    argv = cell_argv(cell, tmp_path, ["triangulate"])
    cell.fingerprint, suite.report_names, model_checks(suite.models[0], Findings())
    assert len(parses) == 3  # the command line, fingerprint, report name and preflight read the ModelRefs
    assert argv[argv.index("--judge_model_args") + 1] == "pretrained=/w/judge"  # passed on as written
    assert argv[argv.index("--model_args_b") + 1] == '{"pretrained": "/w/b"}'


def test_two_gguf_files_of_one_name_and_two_revisions_are_two_suite_rows(tmp_path):
    gguf = "ggml-model-Q4_K_M.gguf"
    models = [
        {"name": "llama", "model_args": f"pretrained=/w/llama,gguf_file={gguf}"},
        {"name": "qwen", "model_args": f"pretrained=/w/qwen,gguf_file={gguf}"},
        {"name": "r1", "model_args": "pretrained=org/m,revision=r1"},
        {"name": "r2", "model_args": "pretrained=org/m,revision=r2"},
    ]
    suite = load_suite(_suite(tmp_path, models))
    assert suite.report_names == ["llama", "qwen", "r1", "r2"]  # one id each: each row by its suite name
    assert len({m.ref.key for m in suite.models}) == 4  # four weights, as the report's own naming tells them apart
    assert len({c.fingerprint for c in cells(suite)}) == 4


def test_a_cells_fingerprint_reads_what_the_suite_file_says_not_what_is_derived_from_it(tmp_path):
    """A model's derived facts (its rate key, its resolved backend, made once with it or on first read) are not part of
    its cells' fingerprints: reading them first leaves every fingerprint as it was, so no finished cell runs again."""
    suite = tmp_path / "s.yaml"
    suite.write_text("models:\n  - {name: a, model: hf, model_args: pretrained=org/m}\ntasks:\n  - {name: t, eval: [arc_easy]}\n")
    first = load_suite(suite)
    before = Cell(first.models[0], first.tasks[0]).fingerprint
    again = load_suite(suite)
    assert again.models[0].backend.model == "hf" and again.models[0].key  # derived facts read first
    assert Cell(again.models[0], again.tasks[0]).fingerprint == before
