"""What a local sweep will run, decided once before anything runs (:func:`plan_sweep`); the runner only executes it.

Per model (:class:`ModelRun`): its placement, its suite cells, which of them a marker says are finished with this
very configuration, and the processes left to run (:class:`CellRun`): each unfinished cell, a ``split: true`` group
cell as its unfinished subtask cells (:func:`triangulation.suite.split.subtask_cells`), each with its folder, its
log, its time limit and, for an eval client of a served model, whether it calls ``/v1/completions``
(:func:`triangulation.suite.cells.calls_completions`: lm-eval's task index read here, once, in one thread). The
runner (:mod:`triangulation.suite.runner`) starts the model's server when it is served, runs the processes, merges
each split group (:func:`triangulation.suite.split.merge_outcomes`) and writes the status; a cell's marker is read
again under its lock when it runs (another suite on the same folder may have finished it meanwhile).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from triangulation.suite.cells import calls_completions, cell_dir, is_done
from triangulation.suite.placement import Placement, place
from triangulation.suite.spec import Cell, Suite, cells
from triangulation.suite.split import MERGED, subtask_cells


@dataclass(frozen=True)
class CellRun:
    """One process of the sweep: a cell (a split group's subtask cell included), the folder it writes, the log its
    attempts append to, its time limit (seconds; None: none) and, for a client of a served model, whether it calls
    ``/v1/completions`` (loglikelihoods) rather than ``/v1/chat/completions``."""

    cell: Cell
    folder: Path
    log: Path
    timeout: float | None
    completions: bool = False


@dataclass(frozen=True)
class ModelRun:
    """One model's part of the sweep, as it stood when the plan was made."""

    placement: Placement
    cells: tuple[Cell, ...]  # the model's suite cells, in the suite's order
    done: frozenset[str]  # labels of those finished with this very configuration: skipped
    work: tuple[CellRun, ...]  # the processes to run: unfinished cells, a split group as its unfinished subtask cells
    groups: Mapping[str, tuple[Cell, ...]]  # per unfinished split group cell (label): all its subtask cells
    finished_subtasks: int  # subtask cells of those groups finished earlier (counted at once by the progress bar)
    stale_merges: tuple[Path, ...]  # merged results of those groups' earlier configurations: removed before they run
    server_log: Path  # a served model's server log (``engine: vllm``)

    @property
    def todo(self) -> list[Cell]:
        return [c for c in self.cells if c.label not in self.done]

    @property
    def size(self) -> int:
        """The cells the progress bar counts: a split group cell as many as its subtasks."""
        return len(self.cells) + sum(len(subs) - 1 for subs in self.groups.values())


@dataclass(frozen=True)
class SweepPlan:
    suite: Suite
    root: Path
    models: tuple[ModelRun, ...]  # in the placements' order (the suite's)

    @property
    def size(self) -> int:
        return sum(m.size for m in self.models)


def plan_sweep(suite: Suite, root: Path, placements: Sequence[Placement] | None = None) -> SweepPlan:
    """The sweep of ``suite`` into ``root``: ``placements`` as the command placed the models (default: one after another)."""
    plan = cells(suite)
    placed = place(suite.models, []) if placements is None else placements
    return SweepPlan(suite, root, tuple(plan_model(root, p, [c for c in plan if c.model is p.model], suite.timeout) for p in placed))


def plan_model(root: Path, placement: Placement, model_cells: Sequence[Cell], timeout: float | None = None) -> ModelRun:
    """One model's run of ``model_cells`` (``timeout``: the suite's, a task entry's own wins)."""
    done = frozenset(c.label for c in model_cells if is_done(root, c))
    todo = [c for c in model_cells if c.label not in done]
    groups = {c.label: subs for c in todo if (subs := tuple(subtask_cells(c)))}
    left = {label: [s for s in subs if not is_done(root, s)] for label, subs in groups.items()}
    served = placement.model.served
    runs = tuple(
        CellRun(
            s,
            cell_dir(root, s),
            root / "logs" / s.model.name / f"{s.task.name}.log",
            s.task.options.get("timeout", timeout),
            served and calls_completions(s),
        )
        for c in todo
        for s in left.get(c.label, [c])
    )
    finished = sum(len(subs) - len(left[label]) for label, subs in groups.items())
    stale = tuple(
        cell_dir(root, c) / MERGED for c in todo if c.label in groups
    )  # an earlier configuration's: never shown beside new subtasks
    server_log = root / "logs" / placement.model.name / "server.log"
    return ModelRun(placement, tuple(model_cells), done, runs, groups, finished, stale, server_log)
