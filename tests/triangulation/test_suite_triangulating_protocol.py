"""Issue 31.2 and 31.6: suites/triangulating.yaml runs the clembench games with the authors' 250 new tokens; issue
41.2: the chat template follows App. G ("For text generation, we have been applying the default chat template"): on
for every generation task (the Open LLM Leaderboard tasks, CLadder, NATURAL PLAN, EQ-Bench), off for the
loglikelihood ones."""

from __future__ import annotations

from pathlib import Path

from triangulation.suite.cells import cell_argv
from triangulation.suite.spec import Cell, load_suite

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD = {"leaderboard_ifeval", "leaderboard_bbh"}
GENERATION = {"cladder", "natural_plan", "eq_bench"}  # the battery's generate_until tasks outside the leaderboard


def _suite():
    return load_suite(ROOT / "suites" / "triangulating.yaml")


def test_clembench_cell_plays_with_250_new_tokens():
    suite = _suite()
    clem = next(t for t in suite.tasks if t.tasks == ("clembench",))
    assert clem.options["task_args"] == {"max_tokens": 250}
    argv = cell_argv(Cell(suite.models[0], clem), Path("out"))
    assert argv[argv.index("--task_args") + 1] == '{"max_tokens": 250}'


def test_chat_template_on_the_generation_tasks_only():
    suite = _suite()
    model = suite.models[0]
    templated = {}
    for task in suite.tasks:
        if task.runner == "eval":
            argv = cell_argv(Cell(model, task), Path("out"))
            templated[task.tasks[0]] = "--apply_chat_template" in argv
    # before issue 41: LEADERBOARD only (CLadder, NATURAL PLAN and EQ-Bench generated without the template)
    assert {t for t, on in templated.items() if on} == LEADERBOARD | GENERATION
    # the loglikelihood tasks of the battery: no chat template
    for task in ("mmlu", "logiqa2", "winogrande", "lm_pragmatics", "social_iqa", "simpletom_mental_state"):
        assert templated[task] is False
    bbh = next(t for t in suite.tasks if t.tasks == ("leaderboard_bbh",))
    assert "--fewshot_as_multiturn" in cell_argv(Cell(model, bbh), Path("out"))


def test_the_templated_tasks_generate_and_the_others_score_loglikelihoods():
    """The split above is lm-eval's own output_type of the tasks (read from their configs, no dataset loaded)."""
    from lm_eval.tasks import TaskManager

    from lm_eval_tasks import TASKS_DIR

    manager = TaskManager(include_path=str(TASKS_DIR))
    kind = {
        name: manager.task_index[name].cfg["output_type"] for name in ("cladder", "eq_bench", "natural_plan_trip", "natural_plan_calendar")
    }
    assert set(kind.values()) == {"generate_until"}, kind
    for name in ("logiqa2", "winogrande", "social_iqa", "simpletom_mental_state", "mmlu_anatomy"):
        assert manager.task_index[name].cfg["output_type"] == "multiple_choice", name
