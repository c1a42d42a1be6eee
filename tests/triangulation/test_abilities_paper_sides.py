"""Seed 003 Figure 3 uses the paper's sides exactly (Sec. 3.1, App. E.2.1, App. F).

Sec. 3.1: "We take MMLU and BBH as representative of large QA benchmarks" and "We take clembench ... the
games Taboo, standard Wordle and the two variants Wordle (Clue) and Wordle (Critic), Reference Game,
Image Game, and Private/Shared". App. F: "for WM we have only considered those coming from the
Verbal (Base) N-3 subtask". App. E.2.1: BBH "excludes three of the original tasks ...: dyck languages,
navigate and word sorting" (the leaderboard's code keeps navigate and drops multistep_arithmetic_two:
we follow the code) and, for benchmarks with subtasks, "we computed the micro-average".
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from triangulation.report.abilities import (
    ability_matrix,
    apply_subtask_exclusions,
    assessment_members,
    load_taxonomy,
    static_vs_interactive,
    without_members,
)
from triangulation.runs.results_io import read_run

MODELS = ["m1", "m2", "m3", "m4"]


def _scores() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "mmlu": [1, 2, 3, 4],
            "leaderboard_bbh": [1, 2, 4, 3],
            "globalgroup_en": [4, 3, 2, 1],  # ours: static only in the extended view
            "connections": [4, 3, 2, 1],
            "clembench": [4, 3, 2, 1],  # the group
            "taboo": [1, 2, 3, 4],  # its members: never pooled next to the group
            "wordle": [1, 2, 3, 4],
            "splat": [1, 2, 3, 4],  # ours: interactive only in the extended view
            "nback_verbal_3_triangulating": [1, 2, 3, 4],
            "nback_verbal_1": [4, 3, 2, 1],  # other n-back variants: extended view only
            "nback_spatial_3": [4, 3, 2, 1],
        },
        index=MODELS,
    ).astype(float)


GROUPS = {"clembench": ["taboo", "wordle"], "nback": ["nback_verbal_1", "nback_spatial_3"]}


def test_paper_sides_are_mmlu_bbh_and_the_clembench_games():
    """Default view: static = MMLU + BBH, interactive = clembench (its games drop out: the group stands for them)."""
    taxonomy = load_taxonomy()
    members = assessment_members(_scores(), taxonomy, GROUPS)
    assert members == {"static": ["mmlu", "leaderboard_bbh"], "interactive": ["clembench"]}


def test_figure3_working_memory_tau_by_hand():
    """Working memory = nback_verbal_3_triangulating only = [1, 2, 3, 4].

    Static side = mean of min-max scores of mmlu [0, 1/3, 2/3, 1] and bbh [0, 1/3, 1, 2/3]
    = [0, 1/3, 5/6, 5/6]: 5 concordant pairs, 0 discordant, 1 pair tied on the static side only,
    so tau-b = (5 - 0) / sqrt((5 + 0 + 0) * (5 + 0 + 1)) = 5 / sqrt(30) = 0.9129.
    Interactive side = clembench [4, 3, 2, 1] alone: tau-b = -1. (Counting taboo and wordle next to
    their group would pool [1, 2/3, 1/3, 0], [0, 1/3, 2/3, 1] twice = [1/3, 4/9, 5/9, 2/3]: tau +1.)
    """
    table = static_vs_interactive(_scores(), load_taxonomy(), GROUPS).set_index("ability")
    wm = table.loc["working_memory"]
    assert wm["benchmarks"] == "nback_verbal_3_triangulating"
    assert math.isclose(wm["tau_static"], 5 / math.sqrt(30), rel_tol=1e-9)
    assert math.isclose(wm["tau_interactive"], -1.0)
    assert wm["n_static"] == 4 and wm["n_interactive"] == 4


def test_extended_view_adds_our_tasks_and_is_labelled():
    """The extended view (our variant) adds globalgroup/connections (static), splat (interactive), every n-back."""
    ext = load_taxonomy().extended()
    assert ext.view == "extended"
    members = assessment_members(_scores(), ext, GROUPS)
    assert members["static"] == ["mmlu", "leaderboard_bbh", "globalgroup_en", "connections"]
    assert members["interactive"] == ["clembench", "splat"]
    wm = static_vs_interactive(_scores(), ext, GROUPS).set_index("ability").loc["working_memory"]
    assert wm["benchmarks"] == "nback_verbal_3_triangulating, nback_verbal_1, nback_spatial_3"


def test_group_and_members_never_together():
    """``cognitive_flexibility`` (the group) stands for wcst and lnt; nested groups drop their members' members."""
    groups = {"cognitive_flexibility": ["wcst", "lnt"], "outer": ["inner"], "inner": ["leaf"]}
    assert without_members(["wcst", "cognitive_flexibility", "lnt"], groups) == ["cognitive_flexibility"]
    assert without_members(["wcst", "lnt"], groups) == ["wcst", "lnt"]
    assert without_members(["leaf", "outer"], groups) == ["outer"]


def _bbh_results(tmp_path):
    """A leaderboard_bbh run with three subtasks: 10 samples at 0.5, 20 navigate at 1.0, 30 at 0.2.

    lm-eval's group value (micro-average of all three) = (5 + 20 + 6) / 60 = 0.5167; the paper's,
    without navigate: (10 x 0.5 + 30 x 0.2) / 40 = 11 / 40 = 0.275.
    """
    subs = {"leaderboard_bbh_boolean_expressions": (0.5, 10), "leaderboard_bbh_navigate": (1.0, 20), "leaderboard_bbh_snarks": (0.2, 30)}
    results = {name: {"alias": name, "acc_norm,none": v} for name, (v, _) in subs.items()}
    results["leaderboard_bbh"] = {"alias": "bbh", "acc_norm,none": 31 / 60}
    payload = {
        "results": results,
        "group_subtasks": {"leaderboard_bbh": list(subs)},
        "configs": {},
        "n-samples": {name: {"original": n, "effective": n} for name, (_, n) in subs.items()},
        "config": {"model": "hf", "model_args": {"pretrained": "org/m1"}},
    }
    path = tmp_path / "results_2026-11-21T10-00-00.json"
    path.write_text(json.dumps(payload))
    return read_run(path, load_taxonomy().main_metrics)


def test_leaderboard_bbh_keeps_its_own_24_subtasks_navigate_included(tmp_path):
    """App. E.2.1 says the leaderboard's BBH excludes "dyck languages, navigate and word sorting", but the
    leaderboard's code the paper ran (lm-eval 0.4.13 ``leaderboard_bbh``) has 24 subtasks, navigate among
    them (it leaves out dyck_languages, multistep_arithmetic_two, word_sorting). So leaderboard_bbh's own
    value stands: (10 x 0.5 + 20 x 1.0 + 30 x 0.2) / 60 = 31/60 (dropping navigate would give 11/40)."""
    run = _bbh_results(tmp_path)
    table = pd.DataFrame({"leaderboard_bbh": [31 / 60]}, index=["org/m1"])
    fixed, notes = apply_subtask_exclusions(table, [run], load_taxonomy())
    assert fixed.loc["org/m1", "leaderboard_bbh"] == pytest.approx(31 / 60) and notes == {}
    taxonomy = load_taxonomy()
    assert not taxonomy.is_excluded_subtask("leaderboard_bbh_navigate", run.group_subtasks)
    lm_eval_dir = Path(importlib.util.find_spec("lm_eval").origin).parent / "tasks" / "leaderboard" / "bbh_mc"
    subtasks = {p.stem for p in lm_eval_dir.glob("*.yaml") if not p.stem.startswith("_")}
    assert len(subtasks) == 24 and "navigate" in subtasks
    assert not subtasks & {"dyck_languages", "multistep_arithmetic_two", "word_sorting"}


def test_plain_bbh_leaves_out_what_the_leaderboard_leaves_out(tmp_path):
    """Plain ``bbh_cot_fewshot``: the leaderboard's three exclusions (dyck_languages, multistep_arithmetic_two,
    word_sorting), micro-averaged (App. E.2.1) over what is left: subtasks navigate 1.0 (20 samples),
    multistep_arithmetic_two 0.0 (40), snarks 0.4 (20) -> (20 x 1.0 + 20 x 0.4) / 40 = 0.7."""
    subs = {
        "bbh_cot_fewshot_navigate": (1.0, 20),
        "bbh_cot_fewshot_multistep_arithmetic_two": (0.0, 40),
        "bbh_cot_fewshot_snarks": (0.4, 20),
    }
    results = {name: {"alias": name, "exact_match,get-answer": v} for name, (v, _) in subs.items()}
    results["bbh_cot_fewshot"] = {"alias": "bbh", "exact_match,get-answer": 28 / 80}
    payload = {
        "results": results,
        "group_subtasks": {"bbh_cot_fewshot": list(subs)},
        "configs": {},
        "n-samples": {name: {"original": n, "effective": n} for name, (_, n) in subs.items()},
        "config": {"model": "hf", "model_args": {"pretrained": "org/m1"}},
    }
    path = tmp_path / "results_2026-11-21T10-00-00.json"
    path.write_text(json.dumps(payload))
    run = read_run(path, load_taxonomy().main_metrics)
    table = pd.DataFrame({"bbh_cot_fewshot": [28 / 80]}, index=["org/m1"])
    fixed, notes = apply_subtask_exclusions(table, [run], load_taxonomy())
    assert fixed.loc["org/m1", "bbh_cot_fewshot"] == pytest.approx(0.7)
    assert "bbh_cot_fewshot_multistep_arithmetic_two" in notes["bbh_cot_fewshot"]
    taxonomy = load_taxonomy()
    assert taxonomy.is_excluded_subtask("bbh_cot_fewshot_dyck_languages", {"bbh_cot_fewshot": ["bbh_cot_fewshot_dyck_languages"]})
    assert not taxonomy.is_excluded_subtask("bbh_cot_fewshot_navigate", run.group_subtasks)
    # a subtask column (--subtasks) that the leaderboard excludes is on no side
    with_sub = pd.DataFrame({"bbh_cot_fewshot_word_sorting": [1.0, 2.0], "mmlu": [1.0, 2.0]}, index=["a", "b"])
    assert assessment_members(with_sub, taxonomy, {"bbh_cot_fewshot": ["bbh_cot_fewshot_word_sorting"]})["static"] == ["mmlu"]


def test_natural_plan_without_meeting():
    """App. F: "In the case of NATURAL PLAN, we have not considered results coming from the meeting subtask".
    Planning pools calendar [1, 2, 3, 4] alone (meeting [4, 3, 2, 1] left out): tau with mmlu [1, 2, 3, 4] = 1;
    with meeting pooled the planning score would be a constant 0.5 (tau undefined)."""
    scores = pd.DataFrame(
        {"mmlu": [1, 2, 3, 4], "natural_plan_calendar": [1, 2, 3, 4], "natural_plan_meeting": [4, 3, 2, 1]}, index=MODELS
    ).astype(float)
    planning = static_vs_interactive(scores, load_taxonomy()).set_index("ability").loc["planning"]
    assert planning["benchmarks"] == "natural_plan_calendar"
    assert planning["tau_static"] == pytest.approx(1.0)


def test_a_later_run_without_subtasks_keeps_its_own_bbh_value(tmp_path):
    """The score table shows the latest run's group value; an older run's subtasks must not replace it."""
    old = _bbh_results(tmp_path)
    payload = {
        "results": {"leaderboard_bbh": {"alias": "bbh", "acc_norm,none": 0.9}},
        "group_subtasks": {"leaderboard_bbh": ["leaderboard_bbh_snarks"]},
        "configs": {},
        "config": {"model": "hf", "model_args": {"pretrained": "org/m1"}},
    }
    newer = tmp_path / "later" / "results_2026-11-22T10-00-00.json"
    newer.parent.mkdir()
    newer.write_text(json.dumps(payload))
    table = pd.DataFrame({"leaderboard_bbh": [0.9]}, index=["org/m1"])
    fixed, notes = apply_subtask_exclusions(table, [read_run(newer, load_taxonomy().main_metrics), old], load_taxonomy())
    assert fixed.loc["org/m1", "leaderboard_bbh"] == 0.9 and notes == {}


def test_figure7_matrix_leaves_out_wordle_and_image_game():
    """Seed 003 App. I, Figure 7: "Correlation of cognitive abilities with Large QA benchmarks and Interactive
    Games. The correlation matrix does not include results on Wordle and Image Game".

    Four models; working memory (nback_verbal_3_triangulating) [1, 2, 3, 4]. Columns: mmlu [1, 2, 3, 4]
    -> tau 1; taboo [4, 3, 2, 1] -> tau -1; wordle_withclue [1, 2, 4, 3] -> (5 - 1) / 6 = 0.667
    (5 concordant pairs, 1 discordant); wordle and imagegame are not columns. Figure 3's interactive side
    keeps them."""
    scores = pd.DataFrame(
        {
            "nback_verbal_3_triangulating": [1, 2, 3, 4],
            "mmlu": [1, 2, 3, 4],
            "taboo": [4, 3, 2, 1],
            "wordle_withclue": [1, 2, 4, 3],
            "wordle": [0, 0, 0, 1],
            "imagegame": [0, 1, 0, 0],
        },
        index=MODELS,
    ).astype(float)
    taxonomy = load_taxonomy()
    tau, p, _n = ability_matrix(scores, taxonomy)
    assert list(tau.columns) == ["mmlu", "taboo", "wordle_withclue"]
    assert list(tau.index) == ["Working Memory"]
    assert tau.loc["Working Memory"].tolist() == pytest.approx([1.0, -1.0, 4 / 6])
    assert {"wordle", "imagegame"} <= set(assessment_members(scores, taxonomy)["interactive"])
