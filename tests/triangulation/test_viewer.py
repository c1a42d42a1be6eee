"""The episode viewer on a real play run (the random player on every family, a scripted player whose
replies carry ``<script>``) and on lm-eval samples: what each page shows, and that it is escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.played_run import EVIL, FAMILY_TASKS, played_run
from triangulation.html import script_json
from triangulation.viewer.pages import page_name, write_viewer


@pytest.fixture(scope="module")
def runs(upstream, tmp_path_factory) -> Path:
    return played_run(upstream, tmp_path_factory.mktemp("viewer"))


@pytest.fixture(scope="module")
def pages(runs, tmp_path_factory) -> dict[str, Path]:
    return write_viewer([runs], tmp_path_factory.mktemp("pages"))


def ids(runs: Path, task: str) -> list[str]:
    out = []
    for path in runs.glob(f"*/episodes_{task}.jsonl"):
        out += [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]
    return out


def test_one_page_per_task_lists_every_episode_without_javascript(runs, pages):
    assert set(FAMILY_TASKS.values()) <= set(pages)
    index = (next(iter(pages.values())).parent / "index.html").read_text(encoding="utf-8")
    for task, page in pages.items():
        html = page.read_text(encoding="utf-8")
        assert f"href='{page_name(task)}'" in index
        expected = ids(runs, task)
        assert expected and html.count("<li id='ep") == len(expected)  # the plain list JS-off readers get
        for episode_id in expected:
            assert f"<span class='id'>{episode_id}</span>" in html


@pytest.mark.parametrize(
    "task, reading",
    [
        ("nback_verbal_1", r"read as: <bdi>[m-]</bdi>"),  # the model's m/- as parsed
        ("nback_verbal_1", r"trial 1: letter \w, expected [m-]"),  # the stimulus and target
        ("wcst", r"read as: <bdi>option [1-4]: \w+ \w+ \d</bdi>"),  # the chosen option's card
        ("wcst", r"New Card: \w+ \w+ \d\nOption 1: "),  # the exact prompt, not a paraphrase
        ("wcst", r"&rarr; system prompt</div><pre dir='auto'>\s*You are participating in a card matching exercise"),
        ("lnt", r"read as: <bdi>(vowel|consonant|even|odd)</bdi>"),
        (
            "connections_interactive",
            r"read as: <bdi>\w+, \w+, \w+, \w+</bdi></div><div class='note why-turn'><bdi>(correct|wrong|one away)",
        ),
        ("splat_easy", r"class='turn judge'>.*?read as: <bdi>(yes|no|irrelevant|other|congratulations)</bdi>"),
        ("wordle", r"<span class='tile (green|yellow|red)'>\w</span>"),  # the feedback grid
        ("referencegame", r"class='turn player_b'"),  # the second player's column
        ("privateshared", r"probe answer|parse: "),
    ],
)
def test_pages_show_the_parsed_reading_of_each_family(pages, task, reading):
    html = pages[task].read_text(encoding="utf-8")
    assert re.search(reading, html), reading
    assert "<b>Scored:</b>" in html and "class='why'" in html


def test_model_text_is_escaped_everywhere(pages):
    html = pages["nback_verbal_1"].read_text(encoding="utf-8")
    assert EVIL not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.lower().count("<script") == 2  # the JSON index and the page's own script, nothing else


def test_script_json_cannot_close_its_element():
    text = script_json({"reply": "</script><!-- & \u2028\u2029 >"})
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == {"reply": "</script><!-- & \u2028\u2029 >"}


def test_lm_eval_samples_show_prompt_parsed_groups_gold_and_metrics(tmp_path):
    folder = tmp_path / "run" / "m"
    folder.mkdir(parents=True)
    date = "2026-01-01T00-00-00.000001"
    config = {"model": "hf", "model_args": "pretrained=org/m"}
    (folder / f"results_{date}.json").write_text(json.dumps({"results": {"globalgroup_zh": {"group_f1,none": 0.5}}, "config": config}))
    doc = {
        "words": ["a1", "a2", "b1", "b2"],
        "groups": [{"topic": "A", "words": ["a1", "a2"]}, {"topic": "B", "words": ["b1", "b2"]}],
        "n_groups": 2,
    }
    reply = f"Group X: [a1, b1]\nGroup Y: [a2, b2] {EVIL}"
    sample = {
        "doc_id": 0,
        "doc": doc,
        "target": "",
        "arguments": {"gen_args_0": {"arg_0": "Group these: [a1, a2, b1, b2]"}},
        "resps": [[reply]],
        "filtered_resps": [reply],
        "metrics": ["group_f1", "solved"],
        "group_f1": 0.5,
        "solved": 0.0,
    }
    (folder / f"samples_globalgroup_zh_{date}.jsonl").write_text(json.dumps(sample) + "\n")
    old = dict(sample, doc_id=1, group_f1=0.0)
    (folder / "samples_globalgroup_zh_2025-01-01T00-00-00.000001.jsonl").write_text(json.dumps(old) + "\n")  # older run: ignored
    pages = write_viewer([tmp_path / "run"], tmp_path / "view")
    html = pages["globalgroup_zh"].read_text(encoding="utf-8")
    assert html.count("<li id='ep") == 1 and "org/m" in html
    assert "Group these: [a1, a2, b1, b2]" in html  # the prompt
    assert "read as: <bdi>Group X: a1, b1; Group Y: a2, b2</bdi>" in html  # the parsed groups
    assert "<td>A</td><td>a1, a2</td>" in html  # the gold groups
    assert "group_f1 = 0.500" in html and "solved = 0.000" in html  # per-game metrics
    assert EVIL not in html


def test_view_cli(runs, tmp_path, capsys):
    from triangulation.cli.main import main

    assert main(["view", str(runs), "--out", str(tmp_path / "v")]) == 0
    assert (tmp_path / "v" / "index.html").is_file() and (tmp_path / "v" / "wcst.html").is_file()
    assert main(["view", str(tmp_path / "missing"), "--out", str(tmp_path / "w")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_large_tasks_are_split_into_linked_files(runs, tmp_path, monkeypatch):
    from triangulation.viewer import pages as viewer

    monkeypatch.setattr(viewer, "EPISODES_PER_FILE", 1)
    pages = write_viewer([runs], tmp_path / "split")
    n = len(ids(runs, "nback_verbal_1"))  # 2 models x 2 episodes
    files = sorted((tmp_path / "split").glob("nback_verbal_1*.html"))
    assert len(files) == n and pages["nback_verbal_1"].name == "nback_verbal_1.html"
    second = (tmp_path / "split" / "nback_verbal_1-2.html").read_text(encoding="utf-8")
    assert "<a href='nback_verbal_1.html'>1-1</a>" in second and "<b>2-2</b>" in second
    assert second.count("<li id='ep") == 1


def test_unparsed_replies_say_what_the_parser_expected(tmp_path):
    """A reply our parser refuses is marked unparsed, with the rule it expected (issue 24: "The answer is 4.")."""
    from multiturn import registry
    from multiturn.engine.scheduler import play_episodes

    task = registry.get_task("wcst")
    instance = task.instances(seed=1)[0]
    instance["trials"] = instance["trials"][:2]
    answers = iter(["The answer is 4.", "option 2"])

    class Answering:
        def apply_chat_template(self, messages, add_generation_prompt=True):
            return json.dumps(messages)

        def generate_until(self, requests, disable_tqdm=False):
            return [next(answers, "ok") for _ in requests]

    [record] = play_episodes(task, [instance], {"player": Answering()}, seed=1, progress=False)
    views = task.turn_views(record)
    replies = [v for v in views if v.role == "player"]
    assert replies[0].text == "The answer is 4." and replies[0].reading is None and replies[0].verdict is False
    assert "'option N' anywhere in the reply" in replies[0].why
    assert replies[1].reading.startswith("option 2: ") and replies[1].verdict in (True, False)
    assert views[0].to == "system prompt" and "card matching exercise" in views[0].text  # the system prompt as sent
    from triangulation.viewer.pages import render_turn

    html = render_turn(replies[0])
    assert "unparsed" in html and "the parser expects" in html


def test_a_record_of_no_known_task_shows_its_stored_transcript():
    from triangulation.viewer.episodes import from_record

    record = {
        "id": "x1",
        "task": "retired_game",
        "transcript": [{"role": "user", "content": "hi"}, {"role": "player", "content": "yo"}, {"t": 1}],
    }
    episode = from_record(record, "m")
    assert [(t.role, t.text) for t in episode.turns] == [("gm", "hi"), ("player", "yo"), ("gm", '{"t": 1}')]
    assert episode.task == "retired_game" and episode.why == ""


def test_right_to_left_model_text_is_isolated():
    from multiturn.game import TurnView
    from triangulation.viewer.pages import render_turn

    html = render_turn(TurnView("player", "\u202eevil", reading="\u05d0\u05d1 <b>", verdict=True, why="x"))
    assert "<pre dir='auto'>\u202eevil</pre>" in html and "<bdi>\u05d0\u05d1 &lt;b&gt;</bdi>" in html


def test_chat_history_prompts_are_shown_as_messages():
    from triangulation.viewer.episodes import sample_prompt

    history = json.dumps([{"role": "system", "content": "be brief"}, {"role": "user", "content": "group [a, b]"}])
    assert sample_prompt({"arguments": {"gen_args_0": {"arg_0": history}}}) == "[system] be brief\n\n[user] group [a, b]"
    assert sample_prompt({"arguments": [["plain prompt", {}]]}) == "plain prompt"


def test_a_record_the_current_game_plays_differently_shows_the_rest_as_stored():
    """A replay that stops fitting (here: the record has more replies than the game asks for) keeps the
    turns it could read and lists the remaining stored replies, saying why they have no reading."""
    from multiturn import registry
    from multiturn.engine.scheduler import play_episodes
    from multiturn.game import views_by_replay

    task = registry.get_task("lnt")
    instance = task.instances(seed=1)[0]
    instance["trials"] = instance["trials"][:1]

    class Says:
        def apply_chat_template(self, messages, add_generation_prompt=True):
            return json.dumps(messages)

        def generate_until(self, requests, disable_tqdm=False):
            return ["vowel" for _ in requests]

    [record] = play_episodes(task, [instance], {"player": Says()}, seed=1, progress=False)
    record["calls"].append({"role": "player", "reply": "an extra reply"})
    views = views_by_replay(task, record)
    assert views[-2].reading == "vowel" and views[-1].text == "an extra reply" and "plays this record differently" in views[-1].why
    record["calls"][0]["role"] = "judge"  # the first call already does not fit: the stored transcript instead
    assert views_by_replay(task, record) == []


def test_the_reports_episode_pages_name_models_as_its_rows_do(tmp_path):
    """Two suite entries of one weights (``name:`` labels) are two rows of the report and two models on its episode
    pages: the pages are made from the runs the report read (the viewer once named each folder from its config, so
    both were ``org/m``)."""
    import pandas as pd

    from triangulation.report.make import make_report

    date = "2026-01-01T00-00-00.000001"
    for name, f1 in (("a", 0.5), ("b", 0.25)):
        folder = tmp_path / "runs" / name
        folder.mkdir(parents=True)
        results = {"results": {"arc_easy": {"acc,none": f1}}, "config": {"model": "hf", "model_args": "pretrained=org/m"}}
        (folder / f"results_{date}.json").write_text(json.dumps(results))
        sample = {"doc_id": 0, "doc": {}, "target": "x", "arguments": [["prompt"]], "filtered_resps": ["reply"], "metrics": ["acc"]}
        (folder / f"samples_arc_easy_{date}.jsonl").write_text(json.dumps({**sample, "acc": f1}) + "\n")
    runs = tmp_path / "runs"
    make_report([runs], tmp_path / "report", labels={runs / "a": "greedy", runs / "b": "sampled"})
    rows = pd.read_csv(tmp_path / "report" / "scores.csv", index_col="model")["arc_easy"].to_dict()
    assert rows == {"greedy": 0.5, "sampled": 0.25}
    page = (tmp_path / "report" / "episodes" / page_name("arc_easy")).read_text(encoding="utf-8")
    assert "models: greedy, sampled." in page


def test_the_report_reads_each_per_sample_file_once(runs, tmp_path, monkeypatch):
    """The runs are read once at the report's edge and shared by its cells, chance levels, analyses and episode
    pages (on the old main each episodes file was opened five or six times: cells, chance, analyses, pages, the
    torn-line count)."""
    import builtins
    from collections import Counter

    from triangulation.report.make import make_report

    opened: Counter = Counter()
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):
        if str(file).endswith(".jsonl"):
            opened[str(file)] += 1
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    make_report([runs], tmp_path / "report")
    assert opened and set(opened.values()) == {1}, opened


def test_a_report_over_one_results_file_pages_the_episodes_of_its_folder(runs, tmp_path):
    """A results file given as is (``triangulate report DIR/<model>/results_<date>.json``) gets the episode pages of
    its folder, as a folder does."""
    from plumbing import run_folder
    from triangulation.report.make import make_report

    file = sorted((runs / "random").glob("results_*.json"))[-1]
    make_report([file], tmp_path / "report")
    pages = {p.name for p in (tmp_path / "report" / "episodes").glob("*.html")}
    tasks = run_folder.play_tasks(runs / "random")
    assert tasks and {page_name(t) for t in tasks} <= pages
