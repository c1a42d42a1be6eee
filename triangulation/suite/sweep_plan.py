"""What a local sweep will run, decided once before anything runs (:func:`plan_sweep`); the runner only executes it.

Per model (:class:`ModelRun`): its placement, its suite cells, which of them a marker says are finished with this
very configuration (and the results files it names), the unfinished ``split: true`` group cells
(:func:`triangulation.suite.split.split_group`: their subtask cells and lm-eval's groups the merge aggregates), and the
processes left to run (:class:`CellRun`): each unfinished cell, a split group as its unfinished subtask cells, each with
its folder, its log, its time limit, what its marker will record (:class:`triangulation.suite.cells.MarkerFacts`: the
``--dry_run`` counts read once) and, for an eval client of a served model, whether it calls ``/v1/completions``
(:func:`triangulation.suite.cells.calls_completions`: lm-eval's task index read here, once, in one thread). The
runner (:mod:`triangulation.suite.runner`) starts the model's server when it is served, runs the processes, merges
each split group (:func:`triangulation.suite.split.merge_outcomes`) and writes the status; a cell's marker is read
again under its lock when it runs (another suite on the same folder may have finished it meanwhile).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from triangulation.suite.cells import MarkerFacts, calls_completions, cell_dir, marker_facts, marker_state
from triangulation.suite.placement import Placement
from triangulation.suite.spec import Cell, ModelSpec, Suite
from triangulation.suite.split import MERGED, SplitGroup, split_group
from triangulation.suite.task_stats import Counts, cells_work


@dataclass(frozen=True)
class CellRun:
    """One process of the sweep: a cell (a split group's subtask cell included), the folder it writes, the log its
    attempts append to, its time limit (seconds; None: none), for a client of a served model whether it calls
    ``/v1/completions`` (loglikelihoods) rather than ``/v1/chat/completions``, and what its marker records besides its run."""

    cell: Cell
    folder: Path
    log: Path
    timeout: float | None
    completions: bool
    facts: MarkerFacts


@dataclass(frozen=True)
class ModelRun:
    """One model's part of the sweep, as it stood when the plan was made."""

    placement: Placement
    root: Path  # the sweep's folder
    cells: tuple[Cell, ...]  # the model's suite cells, in the suite's order
    #: every cell and subtask cell a marker says finished with this very configuration -> the results files it names
    finished: Mapping[str, tuple[str, ...]]
    work: tuple[CellRun, ...]  # the processes to run: unfinished cells, a split group as its unfinished subtask cells
    groups: Mapping[str, SplitGroup]  # the unfinished split group cells, by label
    #: what each unfinished split group's marker records besides its run, once its subtasks are merged
    group_facts: Mapping[str, MarkerFacts]

    @property
    def model(self) -> ModelSpec:
        return self.placement.model

    @property
    def todo(self) -> list[Cell]:
        return [c for c in self.cells if c.label not in self.finished]

    @property
    def counted(self) -> int:
        """Cells the progress bar counts at once: the finished ones, a split group's finished subtask cells included."""
        return len(self.cells) - len(self.todo) + sum(s.label in self.finished for g in self.groups.values() for s in g.subs)

    @property
    def size(self) -> int:
        """The cells the progress bar counts: a split group cell as many as its subtasks."""
        return len(self.cells) + sum(len(g.subs) - 1 for g in self.groups.values())

    @property
    def stale_merges(self) -> list[Path]:
        """The merged results of the unfinished groups' earlier configurations: removed before their subtasks run
        (never shown beside new subtasks)."""
        return [cell_dir(self.root, g.cell) / MERGED for g in self.groups.values()]

    @property
    def server_log(self) -> Path:
        """A served model's server log (``engine: vllm``)."""
        return self.root / "logs" / self.model.name / "server.log"


@dataclass(frozen=True)
class SweepPlan:
    suite: Suite
    root: Path
    models: tuple[ModelRun, ...]  # in the placements' order (the suite's)
    #: names that several models' results share in the report (the same model_args name): it keeps the latest run
    duplicate_names: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return sum(m.size for m in self.models)


def plan_sweep(suite: Suite, root: Path, placements: Sequence[Placement]) -> SweepPlan:
    """The sweep of ``suite`` into ``root``, each model as the command placed it (:mod:`triangulation.suite.placement`)
    with its cells in the suite's task order (all of one model's tasks, then the next model's: loads stay warm)."""
    cells = {p.model.name: [Cell(p.model, t) for t in suite.tasks] for p in placements}
    names = suite.report_names  # models whose paths only end alike get unique names
    return SweepPlan(
        suite, root, plan_models(root, placements, cells, suite.timeout), tuple(sorted({n for n in names if names.count(n) > 1}))
    )


def plan_models(
    root: Path, placements: Sequence[Placement], cells: Mapping[str, Sequence[Cell]], timeout: float | None
) -> tuple[ModelRun, ...]:
    """Each placed model's run of its ``cells`` (by model name; ``timeout``: the suite's, a task entry's own wins): first
    what the suite alone says (a ``split: true`` group as its subtask cells), then every cell's work read once
    (:func:`triangulation.suite.task_stats.cells_work`), then each model's markers (:func:`plan_model`)."""
    every = [c for p in placements for c in cells[p.model.name]]
    split = {c.label: g for c in every if (g := split_group(c)) is not None}
    work = cells_work(root, [*every, *(s for g in split.values() for s in g.subs)])
    return tuple(plan_model(root, p, cells[p.model.name], timeout, split, work) for p in placements)


def plan_model(
    root: Path,
    placement: Placement,
    model_cells: Sequence[Cell],
    timeout: float | None,
    split: Mapping[str, SplitGroup],
    work: Mapping[str, Counts],
) -> ModelRun:
    """One model's run of ``model_cells`` (``split``: the split group cells among them, by label; ``work``: each cell's
    and subtask cell's work, by label): every cell's marker read once, the unfinished ones to run."""
    states = {
        c.label: marker_state(root, c) for c in [*model_cells, *(s for c in model_cells if c.label in split for s in split[c.label].subs)]
    }
    todo = [c for c in model_cells if not states[c.label].done]
    groups = {c.label: split[c.label] for c in todo if c.label in split}
    runs = [s for c in todo for s in (groups[c.label].subs if c.label in groups else (c,)) if not states[s.label].done]
    served = placement.model.served
    processes = tuple(
        CellRun(
            s,
            cell_dir(root, s),
            root / "logs" / s.model.name / f"{s.task.name}.log",
            s.task.options.get("timeout", timeout),
            served and calls_completions(s),
            marker_facts(s, work[s.label]),
        )
        for s in runs
    )
    group_facts = {label: marker_facts(g.cell, work[label]) for label, g in groups.items()}
    finished = {label: state.results for label, state in states.items() if state.done}
    return ModelRun(placement, root, tuple(model_cells), finished, processes, groups, group_facts)
