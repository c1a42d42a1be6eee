"""Split group cells (``split: true`` on a task entry): one cell per subtask, merged back into one results entry.

A group entry (``eval: mmlu``, ``leaderboard_bbh``, ``natural_plan``, ``play: clembench``, ...) with
``split: true`` runs as one cell per leaf task (lm-eval's task index, the play registry), each in
``DIR/runs/<model>/<entry>/<leaf>/`` with its own marker, so they run at once on a served model and resume
separately. Once every subtask cell is done, :func:`merge` writes one results file for the entry into
``DIR/runs/<model>/<entry>/merged/<model folder>/``: every subtask's entries plus the group's, computed as
the unsplit run computes it: lm-eval groups by their ``aggregate_metric_list`` (``weight_by_size``: the
mean weighted by each subtask's sample count, stderr pooled, lm-eval's ``aggregate_subtask_metrics`` and
``pooled_sample_stderr``; nested groups such as MMLU's categories bottom up), play groups by
:func:`multiturn.engine.results.add_group` (the group's own rule or the members' mean).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plumbing import jsonio, run_folder
from triangulation.suite.cells import Outcome, cell_dir, is_done, write_marker
from triangulation.suite.spec import Cell, TaskSpec
from triangulation.suite.task_index import eval_leaves, task_manager

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
    return [Cell(cell.model, TaskSpec(f"{task.name}/{leaf}", task.runner, (leaf,), options)) for leaf in leaves]


def leaf_tasks(task: TaskSpec) -> list[str]:
    if task.runner == "play":
        from multiturn.api import expand

        return expand(list(task.tasks))
    return eval_leaves(task.tasks)


def merge(folder: Path, cell: Cell, subcells: Sequence[Cell], sub_folder) -> list[str]:
    """Write the merged results of ``subcells`` (each in ``sub_folder(subcell)``) under ``folder``; returns
    the written file relative to ``folder`` (the group cell's marker lists it)."""
    payloads = [_latest(Path(sub_folder(c))) for c in subcells]
    out = _union(payloads)
    if cell.task.runner == "play":
        _play_groups(out, cell.task)
    else:
        _eval_groups(out, cell.task)
    model_folder = _model_folder(Path(sub_folder(subcells[0])))
    target = run_folder.new_results_path(folder / MERGED / model_folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    jsonio.write_json(target, out, indent=1, default=str)  # the one atomic writer
    return [str(target.relative_to(folder))]


def _latest(folder: Path) -> dict[str, Any]:
    files = sorted(folder.rglob(run_folder.RESULTS_GLOB), key=lambda p: p.stat().st_mtime)
    return run_folder.read_results(files[-1])


def _model_folder(folder: Path) -> str:
    files = sorted(folder.rglob(run_folder.RESULTS_GLOB), key=lambda p: p.stat().st_mtime)
    return files[-1].parent.name if files[-1].parent != folder else "model"


def _union(payloads: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out = {k: v for k, v in payloads[0].items() if not isinstance(v, dict) or k == "config"}
    for key in ("results", "groups", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better", "n-samples"):
        out[key] = {}
        for p in payloads:
            out[key].update(p.get(key) or {})
    return out


def _play_groups(out: dict[str, Any], task: TaskSpec) -> None:
    from multiturn.api import add_group, group_names

    groups = group_names()
    for name in task.tasks:
        members = [m for m in groups.get(name, []) if m in out["results"]]
        if not members:
            continue
        summaries = {m: {"metrics": _metrics(out["results"][m]), "n_samples": out["n-samples"].get(m, {})} for m in members}
        add_group(out, name, members, summaries)
    if not out["groups"]:
        del out["groups"]


def _metrics(entry: dict[str, Any]) -> dict[str, Any]:
    return {k.split(",")[0]: v for k, v in entry.items() if k.endswith(",none") and "_stderr" not in k}


def _eval_groups(out: dict[str, Any], task: TaskSpec) -> None:
    index = task_manager().task_index
    for name in task.tasks:
        _eval_group(out, name, index, 0)
    if not out["groups"]:
        del out["groups"]


def _eval_group(out: dict[str, Any], name: str, index: Any, depth: int) -> int:
    """Aggregate group ``name`` into ``out`` (members first); returns its sample count."""
    entry = index.get(name)
    if entry is None or entry.kind.name != "GROUP" or depth > 8:
        return int((out["n-samples"].get(name) or {}).get("effective", 0))
    cfg = entry.cfg or {}
    members = [t if isinstance(t, str) else t.get("task") for t in cfg.get("task", [])]
    members = [m for m in members if isinstance(m, str)]
    sizes = [_eval_group(out, m, index, depth + 1) for m in members]
    row: dict[str, Any] = {"alias": cfg.get("group_alias") or name, "name": name, "sample_len": sum(sizes)}
    for spec in cfg.get("aggregate_metric_list") or []:
        _aggregate(out, row, members, sizes, spec)
    out["results"][name] = row
    out["group_subtasks"][name] = members
    if len(row) > 3:
        out["groups"][name] = dict(row)
    return sum(sizes)


def _aggregate(out: dict[str, Any], row: dict[str, Any], members: list[str], sizes: list[int], spec: dict[str, Any]) -> None:
    """One ``aggregate_metric_list`` entry over ``members``, per filter, as lm-eval's ``consolidate_group_results``."""
    from lm_eval.api.metrics import aggregate_subtask_metrics, pooled_sample_stderr

    metric = spec["metric"]
    keys = {k for m in members for k in out["results"].get(m, {}) if k.split(",")[0] == metric and "," in k}
    for key in sorted(keys):
        stderr_key = key.replace(f"{metric},", f"{metric}_stderr,")
        have = [
            (out["results"][m][key], out["results"][m].get(stderr_key), s)
            for m, s in zip(members, sizes)
            if key in out["results"].get(m, {})
        ]
        values, stderrs, counts = zip(*have)
        row[key] = aggregate_subtask_metrics(list(values), list(counts), bool(spec.get("weight_by_size", True)))
        if all(isinstance(e, (int, float)) for e in stderrs):
            row[stderr_key] = pooled_sample_stderr(list(stderrs), list(counts))
        else:
            row[stderr_key] = "N/A"


def expand(root: Path, todo: Sequence[Cell]) -> tuple[list[Cell], dict[str, list[Cell]]]:
    """The cells to run for ``todo``: each split group cell replaced by its unfinished subtask cells; and
    per split group cell (by label) all its subtask cells."""
    work: list[Cell] = []
    groups: dict[str, list[Cell]] = {}
    for cell in todo:
        subs = subtask_cells(cell)
        if subs:
            groups[cell.label] = subs
            work += [s for s in subs if not is_done(root, s)]
        else:
            work.append(cell)
    return work, groups


def merge_outcomes(root: Path, todo: Sequence[Cell], groups: dict[str, list[Cell]], outcomes: Sequence[Any]) -> list[Any]:
    """One outcome per cell of ``todo``: a split group cell is done (merged, its marker written) when every
    subtask cell is, else failed naming the subtasks left."""
    by_label = {o.cell.label: o for o in outcomes}
    out = []
    for cell in todo:
        if cell.label not in groups:
            out.append(by_label[cell.label])
            continue
        subs = groups[cell.label]
        own = [by_label.get(s.label) for s in subs]
        left = [s.task.name for s, o in zip(subs, own) if not is_done(root, s)]
        seconds = sum(o.seconds for o in own if o is not None)
        attempts = max([o.attempts for o in own if o is not None] or [0])
        if left:
            details = "; ".join(f"{o.cell.task.name}: {o.detail}" for o in own if o is not None and o.status != "done")
            out.append(Outcome(cell, "failed", attempts, seconds, f"subtasks not finished: {', '.join(left)} ({details})"))
            continue
        results = merge(cell_dir(root, cell), cell, subs, lambda s: cell_dir(root, s))
        write_marker(root, cell, results, seconds, attempts)
        out.append(Outcome(cell, "done", attempts, seconds, f"merged from {len(subs)} subtask cells"))
    return out
