"""`triangulate eval`: lm-eval's CLI with our task folder added to the include path."""

from __future__ import annotations

from pathlib import Path

from lm_eval_tasks import TASKS_DIR
from triangulation.cli import eval as eval_cli
from triangulation.cli.main import build_parser


def test_include_paths_puts_ours_first_and_keeps_the_users(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert eval_cli.include_paths(None) == [str(TASKS_DIR)]
    assert eval_cli.include_paths(f"{a}:{b}") == [str(TASKS_DIR), str(a.resolve()), str(b.resolve())]
    assert eval_cli.include_paths([str(TASKS_DIR), str(a)]) == [str(TASKS_DIR), str(a.resolve())]


def test_eval_is_listed_in_the_help():
    help_text = build_parser().format_help()
    assert "eval" in help_text and "lm-eval" in help_text


def test_passthrough_extends_the_include_path(monkeypatch, tmp_path):
    """The parsed lm-eval arguments reach lm-eval's own runner with our folder added."""
    from lm_eval._cli import HarnessCLI

    seen = {}
    monkeypatch.setattr(HarnessCLI, "execute", lambda self, args: seen.update(vars(args)))
    code = eval_cli.run_passthrough(["--model", "hf", "--tasks", "globalgroup_zh", "--include_path", str(tmp_path)])
    assert code == 0
    assert seen["tasks"] in ("globalgroup_zh", ["globalgroup_zh"])
    assert seen["include_path"] == [str(TASKS_DIR), str(Path(tmp_path).resolve())]


def test_missing_build_is_one_line_naming_the_build_command(monkeypatch, tmp_path, capsys):
    """Unbuilt data: `triangulate eval` prints one error line that names `triangulate data build`, exit 2."""
    from triangulation.cli.main import main

    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path / "nothing-built"))
    code = main(["eval", "--model", "dummy", "--tasks", "globalgroup_zh", "--limit", "1"])
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("triangulate: error:")]
    assert len(lines) == 1 and "triangulate data build" in lines[0]
    assert "Traceback" not in err


def test_a_run_without_a_model_uses_the_embedded_one(monkeypatch):
    from models.default_model import default_model_args

    argv = eval_cli.with_default_model(["--tasks", "globalgroup_zh", "--limit", "5"])
    assert argv[-4:] == ["--model", "hf", "--model_args", default_model_args(device=None)]
    for given in (
        ["--model", "vllm", "--tasks", "x"],
        ["--tasks", "x", "--model_args=pretrained=y"],
        ["-M", "hf", "--tasks", "x"],
        ["ls", "tasks"],
        ["run", "--help"],
        ["--config", "c.yaml"],
    ):
        assert eval_cli.with_default_model(given) == given


def test_credentials_in_model_args_are_scrubbed_from_what_lm_eval_writes(monkeypatch, tmp_path):
    """lm-eval copies model_args into its results verbatim: `triangulate eval` rewrites them redacted."""
    import json

    from lm_eval._cli import HarnessCLI

    key = "sk-test-SECRET-4242-abcdef"
    out = tmp_path / "out"

    def fake_execute(self, args):  # what lm-eval writes: config.model_args and a samples line
        folder = out / "model"
        folder.mkdir(parents=True)
        (folder / "results_x.json").write_text(json.dumps({"config": {"model_args": args.model_args}}))
        (folder / "samples_t.jsonl").write_text(json.dumps({"arguments": f"key {key}"}) + "\n")

    monkeypatch.setattr(HarnessCLI, "execute", fake_execute)
    code = eval_cli.run_passthrough(
        [
            "--model",
            "local-completions",
            "--model_args",
            f"base_url=http://x,api_key={key}",
            "--tasks",
            "globalgroup_zh",
            "--output_path",
            str(out),
        ]
    )
    assert code == 0
    written = {p.name: p.read_text() for p in out.rglob("*") if p.is_file()}
    assert set(written) == {"results_x.json", "samples_t.jsonl"}
    assert all(key not in text for text in written.values())
    assert all("<redacted>" in text for text in written.values())
    assert "http://x" in written["results_x.json"]


def test_eval_of_the_chance_player_writes_to_a_stable_random_folder():
    """lm-eval names a model without a name key with a new random id each run; `--model random` gets
    ``model=random`` so its files land in ``OUTPUT/random/`` as `triangulate play --model random` writes them."""
    assert eval_cli.with_chance_name(["--model", "random", "--tasks", "x"]) == [
        "--model",
        "random",
        "--tasks",
        "x",
        "--model_args",
        "model=random",
    ]
    assert eval_cli.with_chance_name(["--model=random", "--model_args", "seed=3"])[-1] == "seed=3,model=random"
    assert eval_cli.with_chance_name(["--model", "random", "--model_args=seed=3"])[-1] == "--model_args=seed=3,model=random"
    for unchanged in (["--model", "hf", "--model_args", "pretrained=x"], ["--model", "random", "--model_args", "model=mine"]):
        assert eval_cli.with_chance_name(unchanged) == unchanged


def test_one_name_per_gguf_model_in_folders_and_reports():
    from models.default_model import DEFAULT_MODEL_NAME, GGUF_FILE
    from models.naming import gguf_model_name

    assert gguf_model_name(GGUF_FILE) == DEFAULT_MODEL_NAME == "SmolLM2-135M-Instruct-Q4_1"
    assert gguf_model_name("/m/Llama-3.2-1B-Instruct.Q4_K_M.gguf") == "Llama-3.2-1B-Instruct-Q4_K_M"  # version dots stay


def test_an_eval_whose_results_are_there_runs_no_model_and_writes_nothing(monkeypatch, tmp_path, capsys):
    """The second `triangulate eval` of the same model, tasks and limit finds its results file and stops;
    another limit, a missing samples file or --rerun runs lm-eval again."""
    import json

    from lm_eval._cli import HarnessCLI

    runs = []
    monkeypatch.setattr(HarnessCLI, "execute", lambda self, args: runs.append(vars(args)["limit"]))
    folder = tmp_path / "random"
    folder.mkdir()
    date = "2026-01-01T00-00-00.000001"
    results = {
        "results": {"connections": {"unweighted_clustering,none": 0.0}},
        "configs": {"connections": {"task": "connections"}},
        "config": {"model": "random", "model_args": {"model": "random"}, "limit": 3.0, "gen_kwargs": {}},
        "chat_template": "<|im_start|>...",
    }
    (folder / f"results_{date}.json").write_text(json.dumps(results))
    (folder / f"samples_connections_{date}.jsonl").write_text("{}\n")
    argv = [
        "--model",
        "random",
        "--tasks",
        "connections",
        "--limit",
        "3",
        "--apply_chat_template",
        "--log_samples",
        "--output_path",
        str(tmp_path),
    ]
    assert eval_cli.run_passthrough(argv) == 0 and runs == []
    assert "nothing to evaluate; no model loaded, no new results file" in capsys.readouterr().out
    results["chat_template"] = ""  # what lm-eval records for a model without a template (the chance player)
    (folder / f"results_{date}.json").write_text(json.dumps(results))
    assert eval_cli.run_passthrough(argv) == 0 and runs == []  # --apply_chat_template was given: the same run
    results["chat_template"] = "<|im_start|>..."
    (folder / f"results_{date}.json").write_text(json.dumps(results))
    assert eval_cli.run_passthrough([*argv[:5], "2", *argv[6:]]) == 0 and runs == [2.0]  # another limit runs
    assert eval_cli.run_passthrough([*argv[:6], *argv[7:]]) == 0 and runs == [2.0, 3.0]  # no chat template: runs
    assert eval_cli.run_passthrough([*argv, "--rerun"]) == 0 and runs == [2.0, 3.0, 3.0]
    (folder / f"samples_connections_{date}.jsonl").unlink()
    assert eval_cli.run_passthrough(argv) == 0 and runs == [2.0, 3.0, 3.0, 3.0]  # samples asked for, missing
