"""SPLAT judge agreement as seed 004 reports it (Sec. 5.1, App. A.3, eq. 6, Table 2).

A.3: "we consider an agreement evaluation ... w.r.t. judgements for both final predicted answers and the
intermediate reasoning processes"; "if three humans vote 'matched', 'matched', and 'unmatched' for a
puzzle, respectively, the agreement among them, noted as 'human-human', is only [1/3], as there are three
pairs ... If the judge model vote 'matched', the agreement between humans and the judge model is [2/3]";
eq. 6: M = (1/m) sum_i delta(j_i, h_i) over the m comparisons. Table 2 reports it per difficulty.
"""

from __future__ import annotations

import os

import pytest

from multiturn.games import splat
from plumbing.errors import UserError

PROMPTS = {
    "player_init": "You are a player.",
    "judge_init": "You are the judge.",
    "judge_puzzle_template": "%s | %s | %s",
    "player_ready_message": "Ready.",
}


def test_paper_example_final_answer_votes():
    """matched, matched, unmatched; judge congratulates (= matched): judge-human 2/3, human-human 1/3."""
    scores = splat.agreement_scores([{"humans": ["matched", "matched", "unmatched"], "judge": "Congratulations!"}])
    assert scores == {
        "judge_agreement_final": pytest.approx(2 / 3),
        "judge_labels_final": 3.0,
        "human_agreement_final": pytest.approx(1 / 3),
        "human_pairs_final": 3.0,
    }


def test_reasoning_process_kept_apart_from_final_answers():
    """Question turns: [yes, yes] judged "No." -> 0 of 2, humans 1 of 1 pair; [irrelevant] judged
    "Irrelevant." -> 1 of 1. Reasoning: judge 1/3, human 1/1. The final answer [unmatched] judged "No." -> 1/1."""
    scores = splat.agreement_scores(
        [
            {"humans": ["yes", "yes"], "judge": "No."},
            {"humans": ["irrelevant"], "judge": "Irrelevant."},
            {"humans": ["unmatched"], "judge": "No, not quite."},
        ]
    )
    assert scores["judge_agreement_reasoning"] == pytest.approx(1 / 3) and scores["judge_labels_reasoning"] == 3.0
    assert scores["human_agreement_reasoning"] == 1.0 and scores["human_pairs_reasoning"] == 1.0
    assert scores["judge_agreement_final"] == 1.0 and scores["judge_labels_final"] == 1.0
    assert "human_agreement_final" not in scores


def _play(instance, labels, judge_replies):
    """Drive one SPLAT game by hand: the player answers once, the judge says No., then the labelled turns."""
    game = splat.SplatGame(instance, PROMPTS, human_labels=labels, max_rounds=1, by_difficulty=True)
    replies = iter(["My guess.", "No.", *judge_replies])
    while not game.done:
        game.next_request()
        game.on_reply(next(replies))
    return game.scores()


def test_per_difficulty_pooling():
    """Easy puzzle: final [matched, unmatched] judged matched (1/2), question [no] judged "No." (1/1).
    Hard puzzle: final [matched] judged "No." (0/1). Pooled final: 1/3; easy 1/2, hard 0/1;
    reasoning: easy 1/1, no hard key; human-human final: easy 0/1 pair."""
    easy = {"id": "e", "title": "E", "story": "s", "answer": "a", "difficulty": "easy"}
    hard = {"id": "h", "title": "H", "story": "s", "answer": "a", "difficulty": "hard"}
    e = _play(easy, [("It was a.", ["matched", "unmatched"]), ("Is it b?", ["no"])], ["Congratulations", "No."])
    h = _play(hard, [("It was c.", ["matched"])], ["No."])
    out = splat.aggregate_splat([e, h])
    assert out["judge_agreement_final"] == pytest.approx(1 / 3) and out["judge_labels_final"] == 3.0
    assert out["judge_agreement_final_easy"] == pytest.approx(1 / 2) and out["judge_agreement_final_hard"] == 0.0
    assert out["judge_agreement_reasoning_easy"] == 1.0 and "judge_agreement_reasoning_hard" not in out
    assert out["human_agreement_final_easy"] == 0.0 and out["human_pairs_final_easy"] == 1.0
    assert out["accuracy"] == 0.0  # the agreement probes do not change the game's score


def test_two_label_sets_one_per_person(tmp_path):
    """``human_labels=A.csv:B.csv``: each file one rater; the same turn gets both labels; kinds must not mix."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("id,turn,label\nsplat_000,Is it?,yes\nsplat_000,It was x.,matched\n")
    b.write_text("id,turn,label\nsplat_000,Is it?,no\nsplat_000,It was x.,matched\n")
    labels = splat.read_human_labels(f"{a}{os.pathsep}{b}")
    assert labels == {"splat_000": [("Is it?", ["yes", "no"]), ("It was x.", ["matched", "matched"])]}
    b.write_text("id,turn,label\nsplat_000,Is it?,matched\n")
    with pytest.raises(UserError, match="mixes final-answer and question labels"):
        splat.read_human_labels(f"{a}{os.pathsep}{b}")
