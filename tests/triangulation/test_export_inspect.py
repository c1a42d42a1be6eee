"""``triangulate export inspect``: Inspect AI logs of a real play run (the random player and a scripted player
whose replies carry ``<script>``) and of an lm-eval ``--log_samples`` file, read back with inspect_ai's own
``read_eval_log`` and ``samples_df`` and shown by ``inspect view bundle`` in headless Chromium."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from tests.support.played_run import EVIL, build_data, play
from triangulation.cli.main import main
from triangulation.viewer.episodes import from_record

DATE = "2026-01-01T00-00-00.000001"
GG_DOC = {
    "words": ["a1", "a2", "b1", "b2"],
    "groups": [{"topic": "A", "words": ["a1", "a2"]}, {"topic": "B", "words": ["b1", "b2"]}],
    "n_groups": 2,
}
GG_REPLY = f"Group X: [a1, b1]\nGroup Y: [a2, b2] {EVIL}"


def write_lm_eval_samples(folder: Path, date: str = DATE, f1s: tuple[float, ...] = (0.5, 0.0)) -> None:
    """An lm-eval 0.4.13 results JSON and ``--log_samples`` file of ``globalgroup_zh`` (one sample per F1)."""
    folder.mkdir(parents=True)
    results = {"globalgroup_zh": {"group_f1,none": 0.25, "group_f1_stderr,none": 0.25, "solved,none": 0.0, "alias": "globalgroup_zh"}}
    config = {"model": "hf", "model_args": "pretrained=org/m"}
    (folder / f"results_{date}.json").write_text(json.dumps({"results": results, "config": config}))
    lines = []
    for doc_id, f1 in enumerate(f1s):
        lines.append(
            {
                "doc_id": doc_id,
                "doc": GG_DOC,
                "target": "",
                "arguments": {"gen_args_0": {"arg_0": "Group these: [a1, a2, b1, b2]"}},
                "resps": [[GG_REPLY]],
                "filtered_resps": [GG_REPLY],
                "metrics": ["group_f1", "solved"],
                "group_f1": f1,
                "solved": 0.0,
            }
        )
    (folder / f"samples_globalgroup_zh_{date}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


PRAGMATICS = {
    "lm_pragmatics_irony": ["lm_pragmatics_irony_seed_0", "lm_pragmatics_irony_seed_1"],
    "lm_pragmatics_humour": ["lm_pragmatics_humour_seed_0"],
}


def write_lm_eval_group(folder: Path) -> None:
    """An lm-eval run of a nested group (``lm_pragmatics`` > phenomenon > prompt-order seed), one sample per leaf."""
    folder.mkdir(parents=True)
    leaves = [t for subs in PRAGMATICS.values() for t in subs]
    results = {t: {"acc,none": 1.0, "alias": t} for t in [*leaves, *PRAGMATICS, "lm_pragmatics"]}
    group_subtasks = {"lm_pragmatics": list(PRAGMATICS), **PRAGMATICS}
    config = {"model": "hf", "model_args": "pretrained=org/g"}
    (folder / f"results_{DATE}.json").write_text(json.dumps({"results": results, "group_subtasks": group_subtasks, "config": config}))
    for leaf in leaves:
        sample = {
            "doc_id": 0,
            "doc": {"question": f"q of {leaf}", "answer": 1},
            "target": 1,
            "arguments": [["q", " a"]],
            "resps": [],
            "filtered_resps": [],
            "metrics": ["acc"],
            "acc": 1.0,
        }
        (folder / f"samples_{leaf}_{DATE}.jsonl").write_text(json.dumps(sample) + "\n")


@pytest.fixture(scope="module")
def runs(upstream, tmp_path_factory) -> Path:
    from models.chance import RandomLM
    from models.scripted import ScriptedLM

    root = tmp_path_factory.mktemp("export")
    build_data(upstream, root / "data")
    out = root / "runs"
    play(out, ["nback_verbal_1", "connections_interactive"], RandomLM(seed=7), "random")
    play(out, ["wcst", "lnt", "taboo", "wordle"], RandomLM(seed=7), "random", limit=1)
    write_lm_eval_group(out / "org__g")
    play(out, ["nback_verbal_1"], ScriptedLM(lambda messages: f"x {EVIL}", name="evil"), "scripted-evil")
    write_lm_eval_samples(out / "org__m")
    write_lm_eval_samples(out / "older" / "org__m", date="2025-01-01T00-00-00.000001", f1s=(1.0, 1.0, 1.0))  # an older run: left out
    return out


@pytest.fixture(scope="module")
def logs(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("logs")
    assert main(["export", "inspect", str(runs), "--out", str(out)]) == 0
    return out


def log_of(logs: Path, task: str, model: str):
    from inspect_ai.log import read_eval_log

    found = [read_eval_log(str(p)) for p in sorted(logs.glob("*.eval"))]
    return next(lg for lg in found if lg.eval.task == task and lg.eval.model == model)


def records(runs: Path, model: str, task: str) -> list[dict]:
    from multiturn.engine.record import read_episodes

    return list(read_episodes(runs / model / f"episodes_{task}.jsonl"))


def test_one_log_per_model_and_task(logs):
    from inspect_ai.log import read_eval_log

    pairs = sorted((lg.eval.model, lg.eval.task) for lg in map(read_eval_log, map(str, logs.glob("*.eval"))))
    assert pairs == [
        ("org/g", "lm_pragmatics"),  # one log for the group's three leaf tasks
        ("org/m", "globalgroup_zh"),
        ("random", "connections_interactive"),
        ("random", "lnt"),
        ("random", "nback_verbal_1"),
        ("random", "taboo"),
        ("random", "wcst"),
        ("random", "wordle"),
        ("scripted-evil", "nback_verbal_1"),
    ]


def test_every_log_has_its_own_task_id(logs):
    """Inspect View hides logs sharing a task_id as retries: the chance player's must not hide another model's."""
    from inspect_ai.log import read_eval_log

    ids = [read_eval_log(str(p), header_only=True).eval.task_id for p in logs.glob("*.eval")]
    assert len(ids) == len(set(ids)) == 9


@pytest.mark.parametrize(
    ("task", "says"), [("taboo", "target_word"), ("wordle", "target_word"), ("wcst", "first_rule"), ("lnt", "first_rule")]
)
def test_every_play_sample_has_its_target_and_instance(runs, logs, task, says):
    log = log_of(logs, task, "random")
    recs = records(runs, "random", task)
    assert log.samples and len(log.samples) == len(recs)
    for sample, rec in zip(log.samples, recs):
        hidden = str(rec["instance"][says])
        assert sample.target and hidden in sample.target  # the word / the rule
        assert sample.metadata["instance"][says] == rec["instance"][says]


def test_an_lm_eval_group_is_one_log_with_its_subtasks_samples(logs):
    log = log_of(logs, "lm_pragmatics", "org/g")
    leaves = sorted(t for subs in PRAGMATICS.values() for t in subs)
    assert sorted(s.id for s in log.samples) == [f"{t}-0" for t in leaves]
    assert sorted(s.metadata["task"] for s in log.samples) == leaves
    assert all(s.target == "1" and s.metadata["instance"]["question"] == f"q of {s.metadata['task']}" for s in log.samples)
    assert {s.name: s.metrics[s.name].value for s in log.results.scores} == {"acc": 1.0}


def test_play_episodes_round_trip_with_roles_scores_and_results(runs, logs):
    log = log_of(logs, "nback_verbal_1", "scripted-evil")
    recs = records(runs, "scripted-evil", "nback_verbal_1")
    assert log.status == "success" and [s.id for s in log.samples] == [r["id"] for r in recs]
    sample, episode = log.samples[0], from_record(recs[0], "scripted-evil")
    roles = [m.role for m in sample.messages]
    n_trials = len(recs[0]["transcript"])
    # instructions, then letter / reply per trial; Gong's notebook keeps a reply that is not exactly 'm' or '-' in the
    # history as its first character (issue 41 item 3), so that turn, written by the game, follows each reply but the last
    expected = ["system"]
    for trial in range(n_trials):
        expected += ["user", "assistant"] + (["assistant"] if trial < n_trials - 1 else [])
    assert roles == expected
    assert sample.messages[2].text == f"x {EVIL}" and sample.messages[2].metadata["correct"] is False
    assert sample.messages[3].text == "x"  # the game's rewrite of that reply, as the next request carried it
    assert "targets" in sample.target and recs[0]["instance"]["targets"] in sample.target
    assert set(sample.scores) == {k for k, v in recs[0]["scores"].items() if isinstance(v, (int, float))}
    acc = sample.scores["accuracy"]
    assert acc.value == recs[0]["scores"]["accuracy"]
    assert acc.explanation == episode.why and "trials answered as expected" in acc.explanation
    assert acc.answer.splitlines()[0].startswith("unparsed: the parser expects 'm' or '-'")  # our parsed reading of the replies
    results = json.loads(next((runs / "scripted-evil").glob("results_*.json")).read_text())["results"]["nback_verbal_1"]
    metrics = {s.name: s.metrics[s.name].value for s in log.results.scores}
    assert metrics["accuracy"] == results["accuracy,none"] and log.results.total_samples == len(recs)


def test_lm_eval_samples_round_trip_with_gold_and_parsed_groups(logs):
    log = log_of(logs, "globalgroup_zh", "org/m")
    assert [s.id for s in log.samples] == ["0", "1"]
    sample = log.samples[0]
    assert [m.role for m in sample.messages] == ["user", "assistant"]
    assert sample.input == "Group these: [a1, a2, b1, b2]" and sample.messages[1].text == GG_REPLY
    assert sample.target == "A: a1, a2\nB: b1, b2"  # the gold groups
    assert sample.scores["group_f1"].value == 0.5 and log.samples[1].scores["group_f1"].value == 0.0
    assert sample.scores["group_f1"].answer == "Group X: a1, b1; Group Y: a2, b2"
    assert "process_results" in sample.scores["group_f1"].explanation
    group_f1 = next(s for s in log.results.scores if s.name == "group_f1")
    assert group_f1.metrics["group_f1"].value == 0.25 and group_f1.metrics["stderr"].value == 0.25


def test_samples_df_reads_every_sample(runs, logs):
    from inspect_ai.analysis import evals_df, samples_df

    frame = samples_df(str(logs))
    episodes = sum(
        len(records(runs, m, t))
        for m, t in [("random", "nback_verbal_1"), ("random", "connections_interactive"), ("scripted-evil", "nback_verbal_1")]
    )
    others = sum(len(records(runs, "random", t)) for t in ("wcst", "lnt", "taboo", "wordle"))
    assert len(frame) == episodes + 2 + others + 3
    evil = frame[frame["id"].astype(str).str.startswith("nback_verbal_1") & frame["metadata_model"].eq("scripted-evil")]
    assert len(evil) == 2 and (evil["score_accuracy"] == 0.0).all()
    assert sorted(frame.loc[frame["metadata_task"] == "globalgroup_zh", "score_group_f1"]) == [0.0, 0.5]
    assert len(evals_df(str(logs))) == 9


def test_missing_inspect_is_a_one_line_error(runs, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # import inspect_ai -> ImportError
    assert main(["export", "inspect", str(runs), "--out", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err
    assert "triangulate[inspect]" in err and len(err.strip().splitlines()) == 1


def test_export_usage_errors_are_one_line(tmp_path, capsys):
    from triangulation.cli.main import build_parser

    assert "export" in build_parser().format_help()
    (tmp_path / "empty").mkdir()
    for folder, says in ((tmp_path / "empty", "no episodes_<task>.jsonl"), (tmp_path / "missing", "no such folder")):
        assert main(["export", "inspect", str(folder), "--out", str(tmp_path / "logs")]) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow  # runs `inspect view bundle`, serves it on 127.0.0.1 and drives Chromium (~30 s)
def test_inspect_view_bundle_shows_the_conversation_and_its_score_escaped(logs, tmp_path):
    from tests.support.browser import page_text, serve_folder

    inspect = shutil.which("inspect") or str(Path(sys.executable).with_name("inspect"))
    bundle = tmp_path / "bundle"
    subprocess.run(
        [inspect, "view", "bundle", "--log-dir", str(logs), "--output-dir", str(bundle)], check=True, capture_output=True, timeout=300
    )
    evil_log = next(p.name for p in (bundle / "logs").glob("*nback_verbal_1_scripted-evil.eval"))
    gg_log = next(p.name for p in (bundle / "logs").glob("*globalgroup_zh*.eval"))
    page = "#/logs/{}/samples/sample/{}/1/messages"
    with serve_folder(bundle) as url:
        text = page_text(url + "/" + page.format(urllib.parse.quote(evil_log), "nback_verbal_1_block00"), until=f"x {EVIL}")
        scripts = page_text(url + "/", until="", expression="[...document.scripts].map(s => s.textContent).join('\\n')")
        gg = page_text(url + "/" + page.format(urllib.parse.quote(gg_log), "0"), until="Group X: [a1, b1]")
    assert f"x {EVIL}" in text  # the model's reply is on the page as text (escaped, not markup)
    assert "Sample nback_verbal_1_block00" in text and "the parser expects 'm' or '-'" in text  # the parsed reading
    assert "SCORES" in text.upper() and "accuracy" in text  # its scores
    assert "alert(1)" not in scripts
    assert "Group these: [a1, a2, b1, b2]" in gg and "Group X: [a1, b1]" in gg  # the prompt and the reply
    assert "A: a1, a2" in gg and "group_f1" in gg.lower() and "Group X: a1, b1; Group Y: a2, b2" in gg  # gold, score, our reading


@pytest.mark.parametrize("game", ["taboo", "wordle"])
def test_a_clem_games_headline_is_the_clemscore_the_report_shows(logs, runs, game):
    """Inspect shows a log's first score as its headline: for clembench games the clemscore (issue 43 item 4),
    not the Main Score, which is NaN when no episode was played."""
    log = log_of(logs, game, "random")
    results = json.loads(next(p for p in (runs / "random").glob("results_*.json") if game in p.read_text()).read_text())["results"][game]
    assert log.results.scores[0].name == "clemscore"
    assert log.results.scores[0].metrics["clemscore"].value == results["clemscore,none"]
