"""A suite cell's facts made once: an eval cell's options are one typed value that writes its flags (as a play
cell's ``PlayOptions``), and its done-marker is read once for both "finished?" and "another configuration?"."""

from __future__ import annotations

from pathlib import Path

from tests.triangulation.test_suite import write_suite
from triangulation.suite.cells import EvalOptions, cell_argv, cell_dir, eval_options, marker_facts, marker_state, write_marker
from triangulation.suite.serve import Endpoint
from triangulation.suite.spec import cells, load_suite
from triangulation.suite.task_stats import cells_work

SUITE = {
    "defaults": {"limit": 3, "seed": 7, "gen_kwargs": {"max_gen_toks": 16}},
    "models": [{"name": "m", "model": "hf", "model_args": "pretrained=x/y", "batch_size": 4, "device": "cpu"}],
    "tasks": [
        {"eval": "a", "num_fewshot": 2, "fewshot_as_multiturn": True, "metadata": {"k": 1}, "log_samples": True},
        {"eval": "b", "apply_chat_template": False, "fewshot_as_multiturn": True},
    ],
}


def test_an_eval_cells_options_write_its_flags_and_a_client_has_no_batch_or_device(tmp_path):
    chat, plain = cells(load_suite(write_suite(tmp_path, SUITE)))
    local = eval_options(chat)
    assert local == EvalOptions(
        limit=3,
        seed=7,
        gen_kwargs={"max_gen_toks": 16},
        batch_size="4",
        device="cpu",
        num_fewshot=2,
        apply_chat_template=True,
        fewshot_as_multiturn=True,
        metadata={"k": 1},
        log_samples=True,
    )
    assert local.flags() == [
        *("--limit", "3", "--seed", "7", "--gen_kwargs", '{"max_gen_toks": 16}', "--batch_size", "4", "--device", "cpu"),
        *("--num_fewshot", "2", "--apply_chat_template", "--fewshot_as_multiturn", "--metadata", '{"k": 1}', "--log_samples"),
    ]
    argv = cell_argv(chat, tmp_path / "o", ("T",))
    assert argv[argv.index("--limit") : argv.index("--use_cache")] == local.flags()  # the command line carries them as made
    client = eval_options(chat, Endpoint("http://127.0.0.1:1/v1", model="x/y"))
    assert client.batch_size is None and client.device is None and "--batch_size" not in client.flags()
    # no chat template: no multi-turn few-shot either (lm-eval's flag needs the template)
    assert "--fewshot_as_multiturn" not in eval_options(plain).flags() and not eval_options(plain).apply_chat_template


def test_the_marker_is_read_once_for_done_and_for_another_configuration(tmp_path):
    root = tmp_path / "out"
    [cell, _] = cells(load_suite(write_suite(tmp_path, SUITE)))
    state = marker_state(root, cell)
    assert not state.done and not state.stale  # no marker yet
    folder = cell_dir(root, cell)
    (folder / "r").mkdir(parents=True)
    Path(folder / "r" / "results.json").write_text("{}", encoding="utf-8")
    write_marker(root, cell, marker_facts(cell, cells_work(root, [cell])[cell.label]), ["r/results.json"], 1.0, 1)
    assert marker_state(root, cell).done and not marker_state(root, cell).stale
    changed = cells(load_suite(write_suite(tmp_path, {**SUITE, "defaults": {"limit": 4}}, "t.yaml")))[0]
    assert not marker_state(root, changed).done and marker_state(root, changed).stale  # a play cell would start over
    (folder / "r" / "results.json").unlink()
    assert not marker_state(root, cell).done and not marker_state(root, cell).stale  # same entry, results gone: rerun


def test_a_served_eval_cells_marker_records_the_work_the_estimate_counts(tmp_path):
    """Without a dry run's counts, the done-marker and the estimate take a cell's work from the table by one rule: a
    served model's eval cell runs through the one-pass client (MMLU: one request per question, not one per choice), so
    calibration divides the measured seconds by the work the estimate multiplies its rates with."""
    from triangulation.suite.counting import model_costs
    from triangulation.suite.task_stats import DEFAULT_PATH, ONE_PASS, table_counts

    suite = load_suite(
        write_suite(
            tmp_path,
            {
                "models": [{"name": "v", "model": "hf", "model_args": "pretrained=x/y", "size": 8, "engine": "vllm"}],
                "tasks": [{"eval": "mmlu"}],
            },
        )
    )
    cell = cells(suite)[0]
    marker_work = cells_work(tmp_path / "out", [cell])[cell.label]
    (estimated,) = model_costs(suite, 1, tmp_path / "out")[0].cells
    assert marker_work.requests == estimated.counts.requests == table_counts("mmlu", ["mmlu"], path=ONE_PASS)["mmlu"].requests
    assert marker_work.requests < table_counts("mmlu", ["mmlu"], path=DEFAULT_PATH)["mmlu"].requests
