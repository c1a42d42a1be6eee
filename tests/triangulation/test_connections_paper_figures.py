"""Seed 001's reasoning figures (Sec. 4.3.2, 6.1, 6.3; Tables 2, 6; Figure 7) with a reasoning judge.

Sec. 6.1: "The categories were only counted as correct if the model both clustered all the words correctly
and justified its reasoning in a manner semantically analogous to the gold NYT Connections-provided
category name." The score counts the answer's first four groups (Sec. 4.3.1: one try, four groups), so
Figure 7 does too. The paper's judge is human; ours is an LLM (``--judge_model``) or the fastText proxy.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter

import pandas as pd
import pytest

from models.scripted import ScriptedLM
from tests.triangulation.test_report_fakes import DATE, conn_doc, run_report
from triangulation.report.analyses.connections import (
    judged_groups,
    knowledge_accuracy,
    per_game_scores,
    reasoning_distribution,
    reasoning_ratio,
)
from triangulation.report.analyses.connections_judge import GroupToJudge, LLMJudge

# conn_doc's knowledge labels per group: G1 Semantic, G2 Encyclopedic, G3 Semantic + Associative, G4 Word form


def five_group_answer(doc) -> str:
    """G1 exact with the gold name, G2 exact with a wrong name, two mixed groups, then G4 exact as a 5th group."""
    g = [grp["words"] for grp in doc["groups"]]
    lines = [
        f"{doc['groups'][0]['topic']}: {json.dumps(g[0])}",
        f"THINGS THAT ARE BLUE: {json.dumps(g[1])}",
        f"MIXED A: {json.dumps(g[2][:2] + g[3][:2])}",
        f"MIXED B: {json.dumps(g[2][2:] + g[3][2:])}",
        f"{doc['groups'][3]['topic']}: {json.dumps(g[3])}",
    ]
    return "\n".join(lines)


def same_name_judge(names, topics):
    """A scripted reasoning check: analogous iff the names are equal ignoring case."""
    return [bool(n) and n.casefold() == t.casefold() for n, t in zip(names, topics)]


def _record(model, doc, response):
    return (model, "connections", {"doc": doc, "resps": [[response]], "filtered_resps": [response]})


def test_figure7_counts_first_four_groups_and_requires_reasoning():
    """Hand count for one game: clustered = [G1, G2] (G4 is the 5th group: no credit), reasoned = [G1].
    Figure 7 shares: Semantic (G1 yes, G3 no) = 0.5, Encyclopedic (G2: clustered, name wrong) = 0,
    Associative (G3) = 0, Word form (G4) = 0. The clustering-only variant gives Encyclopedic 1.0."""
    doc = conn_doc(0)
    groups = judged_groups([_record("m", doc, five_group_answer(doc))], same_name_judge)
    assert groups["clustered"].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert groups["reasoned"].tolist() == [1.0, 0.0, 0.0, 0.0]
    share, count = knowledge_accuracy(groups)
    assert share["m"].to_dict() == {"Associative": 0.0, "Encyclopedic": 0.0, "Semantic": 0.5, "Word form": 0.0}
    assert count.loc["Semantic", "m"] == 1
    clustered, _ = knowledge_accuracy(groups, "clustered")
    assert clustered.loc["Encyclopedic", "m"] == 1.0 and clustered.loc["Word form", "m"] == 0.0


def test_tables_6_and_2_by_hand():
    """Three games: (clustering 2, reasoning 1), (4, 4), (0, 0). Table 6: one game each at 0, 1, 4.
    Table 2: mean of 1/2 and 4/4 over the games with clustering > 0 = 0.75."""
    games = pd.DataFrame({"model": ["m"] * 3, "id": ["a", "b", "c"], "unweighted": [2, 4, 0], "reasoning": [1.0, 4.0, 0.0]})
    assert reasoning_distribution(games).loc["m"].tolist() == [1, 1, 0, 0, 1]
    assert reasoning_ratio(games)["m"] == pytest.approx(0.75)


@pytest.mark.parametrize("model, ratio", [("claude3.5sonnet", 0.87), ("gpt4o", 0.84)])
def test_tables_2_and_6_from_the_authors_scores(upstream, model, ratio):
    """The authors' per-game scores (``scoring/<model>_scores.csv``, human-judged reasoning) through our
    Table 6 and Table 2 code reproduce the published Table 6 columns and Table 2 ratios (two decimals)."""
    published_table6 = {"claude3.5sonnet": [101, 152, 109, 53, 23], "gpt4o": [131, 157, 94, 36, 20]}[model]
    with open(upstream / f"connections/scoring/{model}_scores.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    games = pd.DataFrame(
        {
            "model": model,
            "id": [r[""] for r in rows],
            "unweighted": [int(r["Unweighted Clustering Score"]) for r in rows],
            "reasoning": [float(r["Categorical Reasoning Score"]) for r in rows],
        }
    )
    assert reasoning_distribution(games).loc[model].tolist() == published_table6
    assert round(reasoning_ratio(games)[model], 2) == ratio


class JudgeLM(ScriptedLM):
    """``scripted-judge`` for ``triangulate report --judge_model``: says Yes iff the two names in our judge
    prompt are equal ignoring case; counts the prompts it saw."""

    prompts: list[str] = []

    def __init__(self):
        super().__init__(self.verdict, name="scripted-judge")

    @staticmethod
    def verdict(messages) -> str:
        text = messages[-1]["content"]
        JudgeLM.prompts.append(text)
        gold = re.search(r"Official category name: (.*)", text).group(1)
        said = re.search(r"Player's name for this group: (.*)", text).group(1)
        return "Yes." if gold.strip().casefold() == said.strip().casefold() else "No, it is a different connection."

    @classmethod
    def create_from_arg_obj(cls, arg_dict, additional_config=None):
        return cls()


def test_report_judge_model_flag(tmp_path, monkeypatch):
    """``triangulate report --judge_model scripted-judge``: two games answered with ``five_group_answer``.
    Per game clustering 2 and reasoning 1, so Table 6 = two games at 1, Table 2 ratio = 0.5; the
    judge is asked once per distinct (name, gold) pair: 2 games x 2 clustered groups = 4 prompts."""
    from models.loading import register_lm_class

    monkeypatch.delenv("TRIANGULATE_FASTTEXT_DIR", raising=False)
    register_lm_class("scripted-judge", JudgeLM)
    JudgeLM.prompts.clear()
    folder = tmp_path / "runs" / "m"
    folder.mkdir(parents=True)
    docs = [conn_doc(k) for k in range(2)]
    with open(folder / f"samples_connections_{DATE}.jsonl", "w") as fh:
        for i, doc in enumerate(docs):
            answer = five_group_answer(doc)
            fh.write(
                json.dumps({"doc_id": i, "doc": doc, "resps": [[answer]], "filtered_resps": [answer], "unweighted_clustering": 2.0}) + "\n"
            )
    payload = {
        "results": {"connections": {"alias": "connections", "unweighted_clustering,none": 2.0}},
        "group_subtasks": {"connections": []},
        "configs": {},
        "config": {"model": "hf", "model_args": {"pretrained": "org/m"}},
    }
    (folder / f"results_{DATE}.json").write_text(json.dumps(payload))
    out = tmp_path / "report"
    assert run_report([str(tmp_path / "runs"), "--judge_model", "scripted-judge", "--out", str(out)]) == 0
    assert len(JudgeLM.prompts) == 4
    table6 = pd.read_csv(out / "connections_reasoning_distribution.csv", index_col=0)
    assert table6.loc["org/m"].tolist() == [0, 2, 0, 0, 0]
    ratio = pd.read_csv(out / "connections_reasoning_ratio.csv", index_col=0)
    assert ratio.loc["org/m", "average ratio"] == pytest.approx(0.5)
    know = pd.read_csv(out / "connections_knowledge.csv", index_col=0)
    assert know.loc["Semantic", "org/m"] == 0.5 and know.loc["Encyclopedic", "org/m"] == 0.0
    assert "LLM judge scripted-judge" in (out / "report.html").read_text()


def test_llm_judge_sees_the_group_and_the_response_parses_yes_no_and_caches():
    """The judge is shown the group's words, the gold name, the model's name ("(none given)" for a
    placeholder such as Category1) and the whole response; replies without Yes/No count as not analogous;
    each group is asked once."""
    seen = []
    replies = iter(["Yes", "I cannot tell"])

    def respond(messages):
        seen.append(messages[-1]["content"])
        return next(replies)

    lm = ScriptedLM(respond)
    judge = LLMJudge(lm, "scripted")
    a = GroupToJudge("Circles", "TORUS-SHAPED THINGS", ("BAGEL", "TIRE", "WREATH", "LIFESAVER"), "1. Circles: round things")
    b = GroupToJudge(None, "BAD GOLF SHOTS", ("HOOK", "SLICE", "SHANK", "WHIFF"), "Category2: [HOOK, SLICE, SHANK, WHIFF]")
    assert judge.judge_groups([a, b, a]) == [True, False, True]
    assert judge.judge_groups([a]) == [True] and lm.requests_seen == 2 and judge.unparsed == 1
    assert (
        "BAGEL, TIRE, WREATH, LIFESAVER" in seen[0]
        and "1. Circles: round things" in seen[0]
        and "Player's name for this group: Circles" in seen[0]
    )
    assert "Player's name for this group: (none given)" in seen[1] and "Official category name: BAD GOLF SHOTS" in seen[1]
    assert Counter(judge.verdicts.values()) == Counter({True: 1, False: 1})


def test_fasttext_proxy_is_a_per_game_name_check():
    """Without an LLM, ``judged_groups`` takes a per-game check on the names (the fastText proxy's shape)."""
    doc = conn_doc(1)
    calls = []

    def check(names, topics):
        calls.append(list(names))
        return same_name_judge(names, topics)

    groups = judged_groups([_record("m", doc, five_group_answer(doc))], check)
    assert groups["reasoned"].tolist() == [1.0, 0.0, 0.0, 0.0] and len(calls) == 1


# Seed 001 App. D.2, Table 6 (games per categorical reasoning score 0-4 over the 438 test games)
PUBLISHED_TABLE6 = {"claude3.5sonnet": [101, 152, 109, 53, 23], "gpt4o": [131, 157, 94, 36, 20]}
TABLE6_TOLERANCE = 5  # games per bin, as for Table 5: our parser's clusters differ from the authors' in a few games


@pytest.mark.parametrize("model", sorted(PUBLISHED_TABLE6))
def test_table6_from_raw_responses_and_the_authors_human_verdicts(upstream, model):
    """Our Figure 7 / Table 6 pipeline (``judged_groups``: first four groups, exact clusters, AND a reasoning
    verdict) on the published raw responses (``results/<model>.json``, field ``reason``), with the authors'
    recorded human verdicts (``categorical_score``, keyed ``<model's name>_#_<gold name>``) as the judge,
    reproduces Table 6 within 5 games per bin (Claude: 105/150/107/53/23; GPT-4o: 134/156/92/36/20)."""
    gold = json.loads((upstream / "connections/scoring/scripts/gold_data.json").read_text())
    raw = json.loads((upstream / f"connections/results/{model}.json").read_text())
    frames = []
    for index, (game, answer) in enumerate(zip(gold, raw)):
        if game.get("exclude") or len({w for v in game["categories"].values() for w in (v["Words"] if isinstance(v, dict) else v)}) != 16:
            continue  # the 3 few-shot games and the one game whose words were lost upstream: not among the 438
        groups = [
            {"topic": t, "words": v["Words"] if isinstance(v, dict) else v, "level": k}
            for k, (t, v) in enumerate(game["categories"].items())
        ]
        doc = {"id": str(index), "words": [w.strip() for w in answer["allwords"].split(", ")], "groups": groups}
        verdicts = {
            k.split("_#_")[-1].strip().upper(): str(v).strip().lower() == "yes" for k, v in (answer.get("categorical_score") or {}).items()
        }

        def recorded(names, topics, verdicts=verdicts):
            return [verdicts.get(t.strip().upper(), False) for t in topics]

        reason = answer["reason"].replace("\n", " ")
        frames.append(judged_groups([(model, "connections", {"doc": doc, "resps": [[reason]]})], recorded))
    games = per_game_scores(pd.concat(frames, ignore_index=True))
    assert len(games) == 438
    ours = reasoning_distribution(games).loc[model].tolist()
    print(f"\n{model} Table 6 ours={ours} published={PUBLISHED_TABLE6[model]}")
    assert all(abs(a - b) <= TABLE6_TOLERANCE for a, b in zip(ours, PUBLISHED_TABLE6[model]))


def test_judge_model_loads_only_when_a_group_needs_judging():
    """``--judge_model`` is loaded at the first question: a report without Connections samples never loads it."""
    from plumbing.errors import UserError
    from triangulation.report.analyses.connections_judge import load_llm_judge

    judge = load_llm_judge("no-such-model")
    assert judge.judge_groups([]) == [] and judge.lm is None
    with pytest.raises(UserError, match="unknown model 'no-such-model'"):
        judge.judge_groups([GroupToJudge("a", "b", ("w",), "r")])


# Seed 001 Table 1 ("Distribution of different knowledge types required to categorize words across 438 games")
TABLE1 = {
    "semantic relations": 1045,
    "encyclopedic": 266,
    "multiword expressions": 168,
    "associative relations": 137,
    "phonology/orthography/morphology": 44,
    "word meaning + word form": 92,
}


def _knowledge_labels_of_scored_games(upstream) -> list[list[str]]:
    """Per gold group of the 438 scored games (the rows of the authors' score CSV), its knowledge labels as the
    build splits them (``semantic relations + morphological`` -> two labels)."""
    from datasets_build.connections import split_labels

    root = upstream / "connections"
    with open(root / "scoring" / "gpt4o_scores.csv", newline="", encoding="utf-8") as fh:
        scored = {frozenset(w.strip() for w in row["Allwords"].split(",")) for row in csv.DictReader(fh)}
    taxonomy = json.loads((root / "game_with_knowledge_taxonomy.json").read_text(encoding="utf-8"))
    games = [g for g in taxonomy if frozenset(w.strip() for w in g["allwords"].split(",")) in scored]
    assert len(taxonomy) == 442 and len(games) == 438
    return [split_labels(a["Knowledge Type"]) for g in games for a in g["reasoning_annotation"]]


def test_table1_knowledge_type_counts_from_the_published_taxonomy(upstream):
    """Seed 001 Table 1 (Sec. 3.2): Word Form (Phonology/Orthography/Morphology 44, Multiword Expressions 168),
    Word Meaning (Semantic Relations 1045, Associative Relations 137, Encyclopedic 266), Word Meaning + Word
    Form 92, over the 438 games the models played; a group with two labels counts once, under
    "Word Meaning + Word Form". All six published counts, from ``game_with_knowledge_taxonomy.json``."""
    from triangulation.report.analyses.connections import knowledge_counts

    counts = knowledge_counts(_knowledge_labels_of_scored_games(upstream))
    assert counts.to_dict() == TABLE1
    # by hand on four groups: one of each kind
    small = knowledge_counts([["semantic relations"], ["phonology"], ["encyclopedic", "orthography"], []])
    assert small["semantic relations"] == 1 and small["phonology/orthography/morphology"] == 1
    assert small["word meaning + word form"] == 1 and small.sum() == 3


def test_figure4_weighted_score_spread_from_the_raw_answers(upstream):
    """Seed 001 Figure 4, "Spread of weighted clustering scores" (eq. 2: weights 1-4 yellow..purple, 0-10),
    for the two models whose raw answers are upstream (GPT-4o, Claude 3.5 Sonnet): the report's
    distribution of our re-scored answers lies within 5 games per score of the authors' own
    ``scoring/*_scores.csv`` (the data behind the figure; differences come from their answer extraction)."""
    from custom_metrics.connections import score_connections
    from tests.custom_metrics.test_metrics_upstream import _scored_games
    from triangulation.report.analyses.connections import score_distribution

    for model, label in (("gpt4o", "GPT-4o"), ("claude3.5sonnet", "Claude 3.5 Sonnet")):
        games, rows = _scored_games(upstream, model)
        records = []
        for game in games:
            pool = [w.strip() for w in game["allwords"].split(", ")]
            scored = score_connections(game["reason"].replace("\n", " "), game["gold"], pool=pool)
            records.append((label, "connections", {"weighted_clustering": scored["weighted"]}))
        ours = score_distribution(records, "weighted_clustering").loc[label]
        theirs = Counter(int(r["Weighted Clustering Score"]) for r in rows)
        assert list(ours.index) == list(range(11)) and ours.sum() == 438
        assert all(abs(ours[k] - theirs[k]) <= 5 for k in range(11)), (model, ours.to_dict(), dict(theirs))
