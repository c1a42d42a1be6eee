"""The side runner's public entry points: all that ``triangulation`` (``score``, ``view``, ``report``, the suite's
plan) uses of ``multiturn``. An import-linter contract in ``pyproject.toml`` holds ``triangulation`` to this module;
``triangulate play`` itself is :mod:`multiturn.cli`, reached by name from ``triangulation.cli.main``. Model things
(loading, naming, model args, the chance player) are :mod:`models`, which both packages import directly.

- Tasks by name: :func:`get_task`, :func:`task_names`, :func:`group_names`, :func:`expand`, :func:`is_play_task`;
  what a task declares on its class, read without building it: :func:`task_facts` (roles, groups, its
  :class:`CostHints` for the suite's cost model).
- The game contract as readers see it: :class:`TaskSpec`, :class:`TurnView`, :class:`EpisodeSummary`,
  :func:`transcript_views`.
- Stored runs: :func:`read_episodes` (the one episodes reader; :func:`decode_episodes` for records read already), :func:`write_results`, :func:`add_group` (a group's
  mean over its members' results, the suite's split cells), :func:`rescore_run` /
  :func:`changed_metrics` / :func:`judge_agreement` / :func:`store_rescored` (``triangulate score``).
- clembench's games (:func:`clembench_games`: the tasks that join the ``clembench`` group) and its two model-level
  rules, for published tables: :func:`clem_aggregate` (seed 002's clemscore) and :func:`clem_episode_pooled` (seed
  003's code's episode-pooled variant).
- Playing: :func:`select_instances` (``--limit``), :func:`play_episodes` (the lockstep loop), :func:`merged_gen_kwargs`.
- Play's command line: :class:`PlayOptions` (a run's settings minus the model, as ``triangulate play`` flags: the
  suite's play cells), :func:`model_flags` / :func:`json_flag` (how a model and a mapping are passed), and
  :func:`option_problem` (the one check of ``limit``, ``seed`` and ``batch_size``).
"""

from __future__ import annotations

from multiturn.engine.flags import PlayOptions, json_flag, model_flags, option_problem, shared_flags
from multiturn.engine.record import decode_episodes, read_episodes
from multiturn.engine.rescore import changed_metrics, judge_agreement, rescore_run, rescore_runs, store_rescored
from multiturn.engine.results import add_group, write_results
from multiturn.engine.scheduler import merged_gen_kwargs, play_episodes
from multiturn.engine.settings import select_instances
from multiturn.game import DRY_RUN_COUNT, CostHints, EpisodeSummary, TaskSpec, TurnView, transcript_views
from multiturn.games.clem.scoring import aggregate as clem_aggregate
from multiturn.games.clem.scoring import episode_pooled as clem_episode_pooled
from multiturn.games.clem.task import CLEMBENCH
from multiturn.registry import TASKS, TaskFacts, expand, get_task, group_names, task_facts, task_names

__all__ = [
    "add_group",
    "CostHints",
    "DRY_RUN_COUNT",
    "TaskFacts",
    "task_facts",
    "EpisodeSummary",
    "PlayOptions",
    "TaskSpec",
    "TurnView",
    "changed_metrics",
    "clem_aggregate",
    "clem_episode_pooled",
    "clembench_games",
    "expand",
    "get_task",
    "group_names",
    "is_play_task",
    "json_flag",
    "shared_flags",
    "judge_agreement",
    "merged_gen_kwargs",
    "model_flags",
    "option_problem",
    "play_episodes",
    "read_episodes",
    "decode_episodes",
    "rescore_run",
    "rescore_runs",
    "select_instances",
    "store_rescored",
    "task_names",
    "transcript_views",
    "write_results",
]


def is_play_task(name: str) -> bool:
    """``name`` is a registered play task (not a group, not an lm-eval task)."""
    return name in TASKS


def clembench_games() -> tuple[str, ...]:
    """The games of the ``clembench`` group (clembench v1.6's seven): the play tasks that declare it
    (``groups = ("clembench",)`` on their class)."""
    return tuple(group_names()[CLEMBENCH])
