"""Split group cells (``split: true`` on a task entry): one cell per subtask, merged back into one results entry.

A group entry (``eval: mmlu``, ``leaderboard_bbh``, ``natural_plan``, ``play: clembench``, ...) with
``split: true`` runs as one cell per leaf task (lm-eval's task index, the play registry), each in
``DIR/runs/<model>/<entry>/<leaf>/`` with its own marker, so they run at once on a served model and resume
separately. Once every subtask cell is done, :func:`merge` writes one results file for the entry into
``DIR/runs/<model>/<entry>/merged/<model folder>/``: every subtask's entries plus the group's, computed as
the unsplit run computes it: lm-eval groups by lm-eval's own ``aggregate_groups`` over the group tree its
own factory builds (TAG members, inline and nested subgroups such as MMLU's categories, ``weight_by_size``
true or false with the matching stderr; :func:`_eval_groups`), play groups by
:func:`multiturn.engine.results.add_group` (the group's own rule or the members' mean). A group whose
leaves, run alone, would not compute what they compute inside it is refused at plan time
(:func:`triangulation.suite.task_index.split_refusal`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from plumbing import jsonio, run_folder
from plumbing.errors import UserError
from triangulation.suite.cells import MARKER, cell_dir
from triangulation.suite.spec import Cell, TaskEntry
from triangulation.suite.status import Outcome

SPLIT = "split"
MERGED = "merged"


def subtask_cells(cell: Cell) -> list[Cell]:
    """The subtask cells of a ``split: true`` group cell (none when it is not split or has one leaf)."""
    task = cell.task
    if not task.options.get(SPLIT):
        return []
    leaves = leaf_tasks(task)
    if len(leaves) <= 1:
        return []
    options = {k: v for k, v in task.options.items() if k != SPLIT}
    return [Cell(cell.model, replace(task, name=f"{task.name}/{leaf}", tasks=(leaf,), options=options)) for leaf in leaves]


def leaf_tasks(task: TaskEntry) -> list[str]:
    """A play entry's tasks expanded by the play registry; an eval entry's leaf tasks as the one task index resolved its
    names (:attr:`triangulation.suite.spec.TaskEntry.resolved`), each once, in lm-eval's order."""
    if task.runner == "play":
        from multiturn.api import expand

        return expand(list(task.tasks))
    for name, found in task.resolved.items() if task.options.get(SPLIT) else ():
        if why := found.split_refusal:
            raise UserError(
                f"suite task {task.name}: split: true cannot run {name} one subtask at a time as lm-eval runs it whole: {why}; drop split"
            )
    return list(dict.fromkeys(leaf.task_name for found in task.resolved.values() for leaf in found.leaves))


@dataclass(frozen=True)
class SplitGroup:
    """A ``split: true`` group cell run as its subtask cells (:func:`subtask_cells`), made once when the sweep is
    planned (:func:`split_group`): lm-eval's groups of its tree (what the merge aggregates; none for play, whose groups
    the play registry names)."""

    cell: Cell
    subs: tuple[Cell, ...]
    trees: Mapping[str, Any]


def split_group(cell: Cell) -> SplitGroup | None:
    """``cell`` as a split group (None when it is not split or has one leaf)."""
    subs = subtask_cells(cell)
    if not subs:
        return None
    task = cell.task
    trees: dict[str, Any] = {}
    for found in task.resolved.values():  # {} for play
        trees |= found.groups
    return SplitGroup(cell, tuple(subs), trees)


def merge(folder: Path, group: SplitGroup, subs: Sequence[tuple[Path, Sequence[str]]]) -> list[str]:
    """Write the merged results of ``group``'s subtask cells ``subs`` (each its folder and the results files its marker
    names) under ``folder``; returns the written file relative to ``folder`` (the group cell's marker lists it)."""
    files = [marked_results(sub_folder, named) for sub_folder, named in subs]
    out = _union([dict(run_folder.ResultsFile.read(f).data) for f in files])
    if group.cell.task.runner == "play":
        _play_groups(out, group.cell.task)
    else:
        _eval_groups(out, group.trees)
    model_folder = files[0].parent.name if files[0].parent != subs[0][0] else "model"
    target = run_folder.new_results_path(folder / MERGED / model_folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    jsonio.write_json(target, out, indent=1, default=str)  # the one atomic writer
    return [str(target.relative_to(folder))]


def marked_results(folder: Path, named: Sequence[str]) -> Path:
    """The results file a finished subtask cell's done-marker names (``named``; the newest by name when it names
    several): what that cell's configuration wrote, whatever other results files the folder holds and whatever their mtimes."""
    paths = [folder / f for f in named]
    if not paths or not all(p.is_file() for p in paths):
        raise UserError(f"{folder / MARKER} names no results file that is there; run the suite again to rerun the subtask")
    return run_folder.oldest_first(paths)[-1]


def _union(payloads: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out = {k: v for k, v in payloads[0].items() if not isinstance(v, dict) or k == "config"}
    for key in (
        "results",
        "groups",
        "group_subtasks",
        "configs",
        "versions",
        "n-shot",
        "higher_is_better",
        "n-samples",
        run_folder.EPISODE_IDS_KEY,
    ):
        out[key] = {}
        for p in payloads:
            out[key].update(p.get(key) or {})
    if not out[run_folder.EPISODE_IDS_KEY]:  # lm-eval's subtasks: no episodes
        del out[run_folder.EPISODE_IDS_KEY]
    return out


def _play_groups(out: dict[str, Any], task: TaskEntry) -> None:
    from multiturn.api import add_group, group_names

    groups = group_names()
    for name in task.tasks:
        members = [m for m in groups.get(name, []) if m in out["results"]]
        if not members:
            continue
        summaries = {
            m: {
                "metrics": _metrics(out["results"][m]),
                "n_samples": out["n-samples"].get(m, {}),
                "higher_is_better": out["higher_is_better"].get(m, {}),
            }
            for m in members
        }
        add_group(out, name, members, summaries)
    if not out["groups"]:
        del out["groups"]


def _metrics(entry: dict[str, Any]) -> dict[str, Any]:
    return {k.split(",")[0]: v for k, v in entry.items() if k.endswith(",none") and "_stderr" not in k}


def _eval_groups(out: dict[str, Any], trees: Mapping[str, Any]) -> None:
    """The group entries of ``out`` (the union of the leaf cells' results) computed by lm-eval 0.4.13's own
    code over the groups of the tree it builds for the entry (``trees``, :mod:`triangulation.suite.task_index`): ``aggregate_groups``
    (``Group.aggregate``: every leaf below the group, size-weighted or not, the matching stderr) and
    ``EvalAcc._to_eval_results`` (``groups``, ``group_subtasks``, ``versions``, ``n-shot``,
    ``higher_is_better`` propagated to the groups)."""
    from lm_eval.evaluator_utils import EvalAcc, aggregate_groups

    metrics = {name: _with_sample_len(entry, out["n-samples"].get(name)) for name, entry in out["results"].items() if name not in trees}
    acc = EvalAcc(
        metrics=metrics,
        configs=out["configs"],
        versions={k: v for k, v in out["versions"].items() if k not in trees},
        num_fewshot={k: v for k, v in out["n-shot"].items() if k not in trees},
        higher_is_better={k: v for k, v in out["higher_is_better"].items() if k not in trees},
        n_samples=out["n-samples"],
        groups=trees,
    )
    merged = aggregate_groups(acc)._to_eval_results()
    for key in ("results", "groups", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better", "n-samples"):
        out.pop(key, None)
        if key in merged:
            out[key] = merged[key]


def _with_sample_len(entry: dict[str, Any], n_samples: dict[str, Any] | None) -> dict[str, Any]:
    """A leaf's results entry as lm-eval holds it before aggregating (``sample_len``: the samples scored)."""
    if "sample_len" in entry or not n_samples:
        return dict(entry)
    return {**entry, "sample_len": int(n_samples.get("effective", 0))}


def merge_outcomes(
    root: Path, todo: Sequence[Cell], groups: Mapping[str, SplitGroup], outcomes: Sequence[Outcome], finished: Mapping[str, Sequence[str]]
) -> list[Outcome]:
    """One outcome per cell of ``todo``: a split group cell is done (merged; the sweep writes its marker as it writes
    every cell's, :meth:`triangulation.suite.runner.Sweep.run`) when every subtask cell is, this run (its outcome names its results files) or earlier (``finished``: the results files its marker
    named when the sweep was planned), else failed naming the subtasks left."""
    by_label = {o.cell.label: o for o in outcomes}
    out = []
    for cell in todo:
        group = groups.get(cell.label)
        if group is None:
            out.append(by_label[cell.label])
            continue
        own = [by_label.get(s.label) for s in group.subs]
        named = {s.label: (o.results if o is not None else ()) or tuple(finished.get(s.label, ())) for s, o in zip(group.subs, own)}
        left = [s.task.name for s in group.subs if not named[s.label]]
        seconds = sum(o.seconds for o in own if o is not None)
        attempts = max([o.attempts for o in own if o is not None] or [0])
        if left:
            details = "; ".join(f"{o.cell.task.name}: {o.detail}" for o in own if o is not None and o.status != "done")
            out.append(Outcome(cell, "failed", attempts, seconds, f"subtasks not finished: {', '.join(left)} ({details})"))
            continue
        results = merge(cell_dir(root, cell), group, [(cell_dir(root, s), named[s.label]) for s in group.subs])
        out.append(Outcome(cell, "done", attempts, seconds, f"merged from {len(group.subs)} subtask cells", tuple(results)))
    return out
