"""Seed 001 Figure 7 for Claude 3.5 Sonnet and GPT-4o from the authors' published human verdicts
(``categorical_score`` in ``results/<model>.json``) and the knowledge taxonomy (issue 31, reproduction)."""

from __future__ import annotations

import pytest

from datasets_build.connections import read_games, read_published_answers
from triangulation.report.analyses.connections_published import figure7_rows, figure7_table

# Seed 001 Table 1: categories per knowledge type over the 438 games (Figure 7's denominators)
TABLE1 = {
    "semantic relations": 1045,
    "encyclopedic": 266,
    "multiword expressions": 168,
    "associative relations": 137,
    "phonology/orthography/morphology": 44,
    "word meaning + word form": 92,
}
# Seed 001 Table 6 (games per categorical reasoning score 0..4): the categories judged correct, sum(k * games)
TABLE6 = {"Claude 3.5 Sonnet": [101, 152, 109, 53, 23], "GPT-4o": [131, 157, 94, 36, 20]}


def test_figure7_by_hand_on_two_games():
    games = [
        {
            "id": "g1",
            "groups": [
                {"topic": "Fish", "knowledge": ["semantic relations"]},
                {"topic": "___ ball", "knowledge": ["multiword expressions"]},
            ],
        },
        {
            "id": "g2",
            "groups": [
                {"topic": "Birds", "knowledge": ["semantic relations"]},
                {"topic": "Anagrams", "knowledge": ["orthography", "semantic relations"]},
            ],
        },
    ]
    answers = {
        "M": [
            {"id": "g1", "categorical_score": {"FISHES_#_FISH": "Yes", "BALLS_#____ BALL": "No"}},
            {"id": "g2", "categorical_score": {"x_#_ANAGRAMS": "Yes"}},
        ]
    }
    table = figure7_table(figure7_rows(games, answers))
    # semantic relations: Fish yes, Birds no verdict -> 1 of 2; multiword: 0 of 1; two labels -> WM + WF: 1 of 1
    assert table.loc["semantic relations", ("percent", "M")] == pytest.approx(50.0)
    assert table.loc["multiword expressions", ("count", "M")] == 0
    assert table.loc["word meaning + word form", ("percent", "M")] == pytest.approx(100.0)


def test_figure7_from_the_published_verdicts(upstream):
    root = upstream / "connections"
    rows = figure7_rows(read_games(root)["test"], read_published_answers(root))
    for model in TABLE6:
        assert rows[rows.model == model].groupby("knowledge").size().to_dict() == TABLE1  # every category of the 438 games
    correct = rows.groupby("model")["correct"].sum().to_dict()
    implied = {m: sum(k * n for k, n in enumerate(bins)) for m, bins in TABLE6.items()}  # 621 and 533
    assert correct["GPT-4o"] == implied["GPT-4o"] == 533
    # Claude: 620 "Yes" verdicts in results/claude3.5sonnet.json against 621 implied by Table 6 (computed from
    # scoring/claude3.5sonnet_scores.csv): one category differs between the two published files
    assert correct["Claude 3.5 Sonnet"] == 620 and implied["Claude 3.5 Sonnet"] == 621
    table = figure7_table(rows)
    # Sec. 6.1: "Semantic > Encyclopedic > Associative > Morphology/Orthography/Phonology > Multiword > Word
    # Meaning + Word Form" (across models); Claude's bars follow it exactly
    claude = table[("percent", "Claude 3.5 Sonnet")].sort_values(ascending=False)
    assert list(claude.index) == [
        "semantic relations",
        "encyclopedic",
        "associative relations",
        "phonology/orthography/morphology",
        "multiword expressions",
        "word meaning + word form",
    ]
    assert table.loc["semantic relations", ("count", "Claude 3.5 Sonnet")] == 463
    assert table.loc["semantic relations", ("count", "GPT-4o")] == 417
    # "In every type of reasoning, however, LLMs perform with less than 50% accuracy"
    assert (table["percent"] < 50).all().all()


def test_report_section_reads_the_built_dataset(built_data, tmp_path):
    """The section's builder on the built connections dataset (its ``published_answers.json`` carries the
    verdicts): shown once a run played Connections, with the CSV of the figure."""
    from types import SimpleNamespace

    from triangulation.html import Section
    from triangulation.report.analyses.connections_published import build

    assert build(SimpleNamespace(runs=[SimpleNamespace(results={"mmlu": {}})], out=tmp_path)) == []
    built = build(SimpleNamespace(runs=[SimpleNamespace(results={"connections": {}})], out=tmp_path))
    assert len(built) == 1 and isinstance(built[0], Section)
    csv = (tmp_path / "connections_fig7_published.csv").read_text(encoding="utf-8")
    assert "semantic relations" in csv and "463" in csv and "417" in csv
