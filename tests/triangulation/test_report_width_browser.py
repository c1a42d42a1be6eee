"""The report's first screen at 1,400 px (issue 32), in headless Chromium: a 16-benchmark leaderboard fits the
window (the page never scrolls sideways; since issue 43 a board wider than the window scrolls in its own box,
numbers unwrapped), its model column is sticky, and each header carries the full name on hover."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.browser import page_text

DATE = "2026-01-01T00-00-00.000001"
GROUPS = {g: [f"{g}_indirect_speech_variant_{i}" for i in range(7)] for g in ("lm_pragmatics_like_group_a", "lm_pragmatics_like_group_b")}
MEMBERS = [m for members in GROUPS.values() for m in members]
MEASURE = """JSON.stringify({page: document.documentElement.scrollWidth, view: window.innerWidth,
board: document.querySelector('table.board').parentElement.getBoundingClientRect().right,
sticky: getComputedStyle(document.querySelector('table.board tbody th')).position,
titles: [...document.querySelectorAll('table.board thead th')].map(th => th.title)})"""


def write_run(root: Path, model: str, acc: float) -> None:
    folder = root / model.replace("/", "__")
    folder.mkdir(parents=True)
    results = {t: {"acc,none": acc, "acc_stderr,none": 0.1, "alias": t} for t in [*MEMBERS, *GROUPS]}
    configs = {t: {"task": t, "output_type": "multiple_choice"} for t in MEMBERS}
    payload = {
        "results": results,
        "group_subtasks": GROUPS,
        "configs": configs,
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
    }
    payload["n-samples"] = {t: {"original": 100, "effective": 4} for t in MEMBERS}
    (folder / f"results_{DATE}.json").write_text(json.dumps(payload))
    for task in MEMBERS:
        lines = [
            {
                "doc_id": d,
                "doc": {},
                "target": 0,
                "arguments": [["q", " a"], ["q", " b"]],
                "filter": "none",
                "metrics": ["acc"],
                "acc": float(d % 2),
            }
            for d in range(4)
        ]
        (folder / f"samples_{task}_{DATE}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    from triangulation.cli.main import main

    root = tmp_path_factory.mktemp("width")
    for model, acc in (("org/a-rather-long-model-name-7B-Instruct", 0.75), ("org/b", 0.5), ("random", 0.5)):
        write_run(root / "runs", model, acc)
    assert main(["report", str(root / "runs"), "--out", str(root / "report")]) == 0
    return root / "report" / "report.html"


def test_the_leaderboard_fits_1400_px_with_a_sticky_model_column_and_full_names_on_hover(report):
    seen = json.loads(page_text(report.as_uri() + "#Leaderboard", until="{", expression=MEASURE, window_size="1400,900"))
    assert seen["view"] == 1400
    # the page never scrolls sideways; a board wider than the window scrolls in its own box (issue 43 item 6)
    assert seen["page"] <= seen["view"] and seen["board"] <= seen["view"]
    assert seen["sticky"] == "sticky"
    assert len(seen["titles"]) == 17 and all(name in " ".join(seen["titles"]) for name in [*MEMBERS, *GROUPS])


def test_the_verdict_says_why_it_counts_fewer_benchmarks_than_columns(report):
    text = report.read_text(encoding="utf-8")
    assert "chance on" in text
    assert "of the leaderboard&#x27;s 16 columns here, 14 are members shown beside their group" in text or (
        "of the leaderboard's 16 columns here, 14 are members shown beside their group" in text
    )
