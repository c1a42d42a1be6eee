"""CLadder, SimpleToM and NATURAL PLAN run through lm-eval on small files in the real schema, loaded by the
same code as the real data (a local folder with the Hub repository's layout, or local NATURAL PLAN JSONs,
passed as lm-eval metadata); a scripted model answers, so the expected scores follow from the files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from lm_eval_tasks import TASKS_DIR

CLADDER_ROWS = [  # the v1.5 CSV's columns used by the task: prompt, label (plus id, query_type, rung)
    ("1", "ate", "3", "Imagine a self-contained world where smoking causes cancer. {Given} that X, does Y rise?", "yes"),
    ("2", "marginal", "1", "Imagine a world where rain causes wet grass. Is wet grass more likely than not?", "no"),
    ("3", "correlation", "1", "Method 1: we look at the whole population. Is the chance of Y larger when X?", "yes"),
    ("4", "det-counterfactual", "3", "Would Y have occurred if not X instead of X?", "yes"),
]


def _story(i: int, answer: str) -> dict:
    return {
        "id": f"story{i}_sev1_aware",
        "scenario_name": "grocery_store",
        "story": f"The can of chips {i} has mold {{inside}}. Mary picks up the can and walks to the cashier.",
        "question": "Is Mary likely to be aware that the can has mold?",
        "choices": {"text": ["No", "Yes"] if answer == "A" else ["Yes", "No"], "label": ["A", "B"]},
        "answerKey": answer,
    }


def _evaluate(model, tasks: list[str], metadata: dict, **kwargs) -> dict:
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)
    return simple_evaluate(model=model, tasks=tasks, task_manager=manager, bootstrap_iters=0, **kwargs)


class Scripted:
    """A scripted lm-eval LM: ``answer(context) -> text`` for generation, ``score(context, continuation)`` for choices."""

    def __new__(cls, answer=None, score=None):
        from lm_eval.api.model import LM

        class _LM(LM):
            def __init__(self):
                super().__init__()
                self.requests = []

            def generate_until(self, requests, disable_tqdm=False):
                self.requests += requests
                return [answer(r.args[0]) for r in requests]

            def loglikelihood(self, requests, disable_tqdm=False):
                self.requests += requests
                return [(score(r.args[0], r.args[1]), False) for r in requests]

            def loglikelihood_rolling(self, requests, disable_tqdm=False):
                raise NotImplementedError

        return _LM()


@pytest.fixture
def cladder_dir(tmp_path) -> Path:
    folder = tmp_path / "CLadder"
    (folder / "data").mkdir(parents=True)
    with (folder / "data" / "full_v1.5_default.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "query_type", "rung", "prompt", "label"])
        writer.writerows(CLADDER_ROWS)
    return folder


def test_cladder_runs_on_a_local_copy_of_the_hub_layout(cladder_dir):
    replies = {"smoking": "Yes, smoking raises it.", "rain": "No.", "population": "'no'", "instead": "Maybe yes"}
    lm = Scripted(answer=lambda ctx: next(v for k, v in replies.items() if k in ctx))
    out = _evaluate(lm, ["cladder"], {"cladder_source": str(cladder_dir)})
    # right: yes/yes, no/no; wrong: "'no'" vs yes, "Maybe yes" (starts with neither) vs yes
    assert out["results"]["cladder"]["acc,none"] == pytest.approx(0.5)
    context, gen_kwargs = lm.requests[0].args
    assert context.startswith("You are an expert in causal inference.")
    assert "{Given} that X, does Y rise?\nStart your answer with 'Yes' or 'No'" in context  # braces in data kept
    assert gen_kwargs["max_gen_toks"] == 10 and gen_kwargs["do_sample"] is False


def test_cladder_without_hub_or_copy_is_one_user_error(tmp_path):
    from datasets_build.cladder import load_cladder
    from plumbing.errors import UserError

    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="lacks data/full_v1.5_default.csv"):
        load_cladder(cladder_source=str(tmp_path / "empty"))


@pytest.fixture
def simpletom_dir(tmp_path) -> Path:
    folder = tmp_path / "SimpleToM"
    answers = {"mental-state-qa": "AB", "behavior-qa": "AB", "judgment-qa": "AAA"}
    for config, keys in answers.items():
        (folder / config).mkdir(parents=True)
        lines = [json.dumps(_story(i, key)) for i, key in enumerate(keys)]
        (folder / config / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_simpletom_tasks_and_group_on_a_local_copy(simpletom_dir):
    lm = Scripted(score=lambda ctx, cont: 0.0 if cont.strip().startswith("(A)") else -3.0)  # always picks (A)
    out = _evaluate(lm, ["simpletom_mental_state", "simpletom_attribution_judgment"], {"simpletom_source": str(simpletom_dir)})
    results = out["results"]
    assert results["simpletom_mental_state"]["acc,none"] == pytest.approx(0.5)
    assert results["simpletom_behavior"]["acc,none"] == pytest.approx(0.5)
    assert results["simpletom_judgment"]["acc,none"] == pytest.approx(1.0)
    assert results["simpletom_attribution_judgment"]["acc,none"] == pytest.approx(4 / 5)  # micro, not (0.5 + 1) / 2
    context, continuation = lm.requests[0].args
    assert context.startswith("Given the following story, answer the question by giving the correct answer choice, (A) or (B).\nStory: ")
    assert "mold {inside}." in context and context.endswith("\n(A): No\n(B): Yes\nAnswer:")
    assert continuation == " (A): No"


TRIP_GOLD = (
    "Here is the trip plan for visiting the 3 European cities for 14 days:\n\n"
    "**Day 1-5:** Arriving in Venice and visit Venice for 5 days.\n**Day 5:** Fly from Venice to Vienna.\n"
    "**Day 5-9:** Visit Vienna for 5 days.\n**Day 9:** Fly from Vienna to Dubrovnik.\n"
    "**Day 9-14:** Visit Dubrovnik for 6 days."
)
MEETING_CONSTRAINTS = [["Golden Gate Park", "9:00AM"], ["Sandra", "Chinatown", "8:00AM to 11:00AM", 60]]
MEETING_DISTANCES = {"Golden Gate Park": {"Chinatown": 23}, "Chinatown": {"Golden Gate Park": 20}}
MEETING_GOLD = [
    "You start at Golden Gate Park at 9:00AM.",
    "You travel to Chinatown in 23 minutes and arrive at 9:23AM.",
    "You meet Sandra for 60 minutes from 9:23AM to 10:23AM.",
]


def _np_example(kind: str, i: int, **fields) -> tuple[str, dict]:
    base = {
        "prompt_0shot": f"TASK: {kind} {i}\nSOLUTION:",
        "prompt_5shot": f"TASK: example\nSOLUTION: x\n\nTASK: {kind} {i}\nSOLUTION:",
        "pred_5shot_pro": "",
        **fields,
    }
    return f"{kind}_example_{i}", base


@pytest.fixture
def natural_plan_dir(tmp_path) -> Path:
    folder = tmp_path / "natural-plan" / "data"
    folder.mkdir(parents=True)
    trip = dict(
        _np_example("trip_planning", i, cities="Venice**Vienna**Dubrovnik", durations="5**5**6", num_cities=3, golden_plan=TRIP_GOLD)
        for i in range(2)
    )
    calendar = dict(
        _np_example(
            "calendar_scheduling", i, num_days=1, num_people=2, duration=1, golden_plan="Here is the proposed time: Monday, 14:30 - 15:30 "
        )
        for i in range(3)
    )
    meeting = dict(
        _np_example(
            "meeting_planning", i, num_people=1, constraints=MEETING_CONSTRAINTS, dist_matrix=MEETING_DISTANCES, golden_plan=MEETING_GOLD
        )
        for i in range(2)
    )
    for name, data in (("trip_planning", trip), ("calendar_scheduling", calendar), ("meeting_planning", meeting)):
        (folder / f"{name}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    return folder.parent


def test_natural_plan_tasks_and_group_on_local_files(natural_plan_dir):
    replies = {
        "trip_planning 0": TRIP_GOLD,
        "trip_planning 1": TRIP_GOLD.replace("Vienna for 5 days", "Vienna for 4 days").replace("Day 9", "Day 8"),
        "calendar_scheduling 0": "Here is the proposed time: Monday, 14:30 - 15:30",
        "calendar_scheduling 1": "Monday, 14:30 - 15:00 would work",
        "calendar_scheduling 2": "Here is the proposed time: Monday, 14:30 - 15:30. Or Tuesday, 9:00 - 10:00",
        "meeting_planning 0": "SOLUTION: " + " ".join(MEETING_GOLD),
        "meeting_planning 1": "SOLUTION: You start at Golden Gate Park at 9:00AM. You meet Sandra for 60 minutes.",
    }

    def answer(ctx: str) -> str:
        return next(v for k, v in replies.items() if ctx.endswith(f"TASK: {k}\nSOLUTION:"))

    lm = Scripted(answer=answer)
    out = _evaluate(lm, ["natural_plan", "natural_plan_meeting"], {"natural_plan_dir": str(natural_plan_dir)})
    results = out["results"]
    assert results["natural_plan_trip"]["acc,none"] == pytest.approx(0.5)
    assert results["natural_plan_calendar"]["acc,none"] == pytest.approx(2 / 3)
    assert results["natural_plan_meeting"]["acc,none"] == pytest.approx(0.5)
    assert results["natural_plan"]["acc,none"] == pytest.approx(3 / 5)  # trip + calendar, micro-averaged
    assert "natural_plan_meeting" not in out["group_subtasks"]["natural_plan"]
    gen_kwargs = lm.requests[0].args[1]
    assert gen_kwargs["max_gen_toks"] == 350 and gen_kwargs["do_sample"] is False


def test_every_hub_task_name_resolves():
    from tests.support.built_data import task_manager

    tm = task_manager(include_defaults=False)
    expected = {
        "cladder",
        "simpletom_mental_state",
        "simpletom_behavior",
        "simpletom_judgment",
        "natural_plan_trip",
        "natural_plan_calendar",
        "natural_plan_meeting",
    }
    assert expected <= set(tm.all_subtasks)
    assert {"simpletom_attribution_judgment", "natural_plan"} <= set(tm.all_groups)
