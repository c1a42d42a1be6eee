"""abilities.yaml `tasks`: every ability of seed 003 Tables 1-2 that has a dataset maps to a task that exists
(an lm-eval task or group, ours or lm-eval's, or a `triangulate play` task or group)."""

from __future__ import annotations

from importlib import resources

import yaml

from lm_eval_tasks import TASKS_DIR

# seed 003 Tables 1-2: abilities with a dataset (Inhibitory Control has none; Emotion Regulation,
# Self-Awareness, Empathy and Social Problem-Solving need human evaluation, Sec. 4.1 footnote 2)
WITH_DATASET = {
    "working_memory", "cognitive_flexibility", "logical_reasoning", "causal_reasoning", "commonsense_reasoning",
    "planning", "pragmatics", "theory_of_mind", "attribution_and_judgement", "social_commonsense_reasoning",
    "emotional_intelligence",
}  # fmt: skip


def _abilities() -> dict:
    return yaml.safe_load(resources.files("triangulation.report").joinpath("abilities.yaml").read_text(encoding="utf-8"))


def test_every_ability_with_a_dataset_has_a_task():
    data = _abilities()
    assert set(data["tasks"]) == WITH_DATASET
    assert set(data["tasks"]) <= set(data["abilities"])
    for ability, entry in data["tasks"].items():
        assert len(entry) == 1 and set(entry) <= {"lm_eval", "play"}, ability


def test_every_mapped_task_exists():
    from lm_eval.tasks import TaskManager

    from multiturn import registry

    manager = TaskManager(include_path=str(TASKS_DIR))
    lm_eval_names = set(manager.all_subtasks) | set(manager.all_groups)
    play_names = set(registry.task_names()) | set(registry.group_names())
    for ability, entry in _abilities()["tasks"].items():
        runner, name = next(iter(entry.items()))
        known = lm_eval_names if runner == "lm_eval" else play_names
        assert name in known, f"{ability}: {runner} task {name!r} does not exist"


def test_each_mapped_task_is_attributed_back_to_its_ability():
    from triangulation.report.abilities import load_taxonomy

    taxonomy = load_taxonomy()
    for ability, entry in _abilities()["tasks"].items():
        assert taxonomy.ability_of(next(iter(entry.values()))) == ability, ability


def test_the_batterys_ifeval_is_a_control_as_the_papers_ifeval_is():
    """Seed 003 Sec. 2 uses IFEval as a filter on the models, on neither side; the battery runs lm-eval's
    ``leaderboard_ifeval``, which was counted as a benchmark of no side before."""
    from fnmatch import fnmatchcase

    from triangulation.report.abilities import load_taxonomy

    taxonomy = load_taxonomy()
    for name in ("ifeval", "leaderboard_ifeval", "chance/leaderboard_ifeval"):
        assert any(fnmatchcase(name, p) for p in taxonomy.controls), name
        assert taxonomy.assessment_of(name) is None
