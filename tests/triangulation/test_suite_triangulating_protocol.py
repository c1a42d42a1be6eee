"""Issue 31.2 and 31.6: suites/triangulating.yaml runs the clembench games with the authors' 250 new tokens and
follows the authors' evaluator on the chat template (on for the Open LLM Leaderboard tasks only)."""

from __future__ import annotations

from pathlib import Path

from triangulation.suite.cells import cell_argv
from triangulation.suite.spec import Cell, load_suite

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD = {"leaderboard_ifeval", "leaderboard_bbh"}


def _suite():
    return load_suite(ROOT / "suites" / "triangulating.yaml")


def test_clembench_cell_plays_with_250_new_tokens():
    suite = _suite()
    clem = next(t for t in suite.tasks if t.tasks == ("clembench",))
    assert clem.options["task_args"] == {"max_tokens": 250}
    argv = cell_argv(Cell(suite.models[0], clem), Path("out"))
    assert argv[argv.index("--task_args") + 1] == '{"max_tokens": 250}'


def test_chat_template_only_on_the_leaderboard_tasks():
    suite = _suite()
    model = suite.models[0]
    templated = {}
    for task in suite.tasks:
        if task.runner == "eval":
            argv = cell_argv(Cell(model, task), Path("out"))
            templated[task.tasks[0]] = "--apply_chat_template" in argv
    assert {t for t, on in templated.items() if on} == LEADERBOARD
    # the loglikelihood tasks of the battery: no chat template
    for task in ("mmlu", "logiqa2", "winogrande", "lm_pragmatics", "social_iqa", "simpletom_mental_state"):
        assert templated[task] is False
    bbh = next(t for t in suite.tasks if t.tasks == ("leaderboard_bbh",))
    assert "--fewshot_as_multiturn" in cell_argv(Cell(model, bbh), Path("out"))
