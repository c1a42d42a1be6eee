"""Issue 41 items 3 and 6 (n-back): Gong et al.'s one-character history, and their verbal and spatial 3x3 tables
recomputed from their published GPT-3.5 trial records with our scoring code.

The expected values are the tables their notebooks printed (``experiments/verbal.ipynb`` cell 10 and
``experiments/spatial_3*3.ipynb`` cell 11 outputs, ChatGPT-WM 1c1467b): hit rate, false-alarm rate, accuracy (%)
and the notebooks' |d'|, mean over the 50 blocks."""

from __future__ import annotations

import json

import pytest

from models.scripted import ScriptedLM
from multiturn import registry
from multiturn.engine.runner import run_task
from multiturn.engine.settings import TaskSettings
from multiturn.games.nback import history_turn, parse_notebook, score_trials

# N: (hit rate, false-alarm rate, accuracy, |d'|) as the notebooks printed them
VERBAL = {1: (87.00, 1.50, 94.67, 3.53), 2: (32.00, 4.12, 74.58, 1.43), 3: (23.25, 4.50, 71.42, 1.11)}
SPATIAL_3X3 = {1: (94.50, 21.38, 83.92, 2.85), 2: (41.50, 16.88, 69.25, 0.83), 3: (34.50, 15.50, 67.83, 0.77)}


def _table(records: dict, n: int) -> tuple[float, float, float, float]:
    blocks = [records[f"{n}back_{b}"] for b in range(50)]
    scores = [score_trials([t["target"] for t in trials], [parse_notebook(t["response"]) for t in trials]) for trials in blocks]
    mean = lambda key: sum(s[key] for s in scores) / len(scores)  # noqa: E731
    return 100 * mean("hit_rate"), 100 * mean("false_alarm_rate"), 100 * mean("accuracy"), mean("abs_dprime_notebook")


@pytest.mark.parametrize("file_name,printed", [("all_trials_verbal.json", VERBAL), ("all_trials_spatial_3*3.json", SPATIAL_3X3)])
def test_gong_tables_from_the_published_trials(upstream, file_name, printed):
    records = json.loads((upstream / "nback" / "ChatGPT-WM" / "results" / file_name).read_text())
    for n, row in printed.items():
        got = _table(records, n)
        # the notebooks print two decimals; |d'| rounded the same way (half-even ties do not occur here)
        assert [round(v, 2) for v in got] == pytest.approx(list(row), abs=0.0051), (file_name, n, got)


def test_history_keeps_the_notebooks_single_character():
    assert history_turn("m", "notebook") == "m" and history_turn("-", "notebook") == "-"
    assert history_turn("m (match)", "notebook") == "m"  # chat_response = chat_response[0]
    assert history_turn("- no match", "notebook") == "-"
    assert history_turn("x", "notebook") == "x" and history_turn("", "notebook") == ""
    assert history_turn("m (match)", "strict") == "m (match)"  # our variant keeps the whole reply


def test_nback_plays_gongs_history_and_the_port_is_unaffected(upstream, built_data):
    seen: list[list[dict]] = []

    def spy(messages):
        seen.append(messages)
        return "- (no match)"

    run_task(TaskSettings(registry.get_task("nback_verbal_2"), limit=1), {"player": ScriptedLM(spy)}, progress=False)
    replies = [m["content"] for m in seen[-1] if m["role"] == "assistant"]
    assert replies == ["-"] * 23  # before issue 41: the whole "- (no match)"
    seen.clear()
    task = registry.get_task("nback_verbal_2", {"parse": "strict"})
    run_task(TaskSettings(task, limit=1), {"player": ScriptedLM(spy)}, progress=False)
    assert {m["content"] for m in seen[-1] if m["role"] == "assistant"} == {"- (no match)"}
    seen.clear()
    run_task(TaskSettings(registry.get_task("nback_verbal_3_triangulating"), limit=1), {"player": ScriptedLM(spy)}, progress=False)
    assert [m["role"] for m in seen[-1]] == ["system"] + ["user"] * 24
