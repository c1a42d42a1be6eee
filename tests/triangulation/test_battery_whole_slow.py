"""Issue 37 item 2: the shipped battery (``suites/triangulating.yaml`` itself: every task entry, lm-eval's real
task configs and group/tag trees, split as shipped) run whole by ``triangulate suite`` with the chance player
at ``limit`` 1, then the report: every entry of its static, interactive and cognitive sides is there. Each
split group is also run unsplit, and its merged results must equal the unsplit run's.

The Hub is out of reach: schema-matched stand-in rows are placed where ``datasets`` finds them offline
(tests/support/battery_standins.py); the task configs are not touched. The suite is the shipped file with
only its models (the chance player, in process: no engine, no GPU) and ``limit`` overridden.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from plumbing import run_folder
from tests.support import battery_standins
from tests.support.built_data import built_data_root
from triangulation.suite.cells import FIRST_REQUEST, MARKER

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "suites" / "triangulating.yaml"
LIMIT = 1
CHANCE = {"name": "chance", "model": "random"}

#: the whole battery is about 120 cell processes (86 lm-eval cells, 7 of our tasks' cells, 10 play cells, then the
#: groups again unsplit) and two reports; the chance player's cells run two at a time on 2 cores, and lm-eval's task
#: index is kept between them (lm_eval_tasks/index_cache.py). 23.7 min at load 5-10 (other work on the cores).
pytestmark = pytest.mark.slow


def _shipped() -> dict:
    return yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))


def _entry_name(entry: dict) -> str:
    """A task entry's name as the suite names it (``name:``, else its tasks joined by ``+``)."""
    tasks = entry.get("eval") or entry.get("play")
    return entry.get("name") or (tasks if isinstance(tasks, str) else "+".join(tasks))


def battery(tmp: Path, entries: list[dict] | None = None, split: bool = True) -> Path:
    """The shipped suite with the chance player and ``limit`` (and, with ``split=False``, its groups whole)."""
    data = _shipped()
    data["models"] = [CHANCE]
    data["defaults"] = {**(data.get("defaults") or {}), "limit": LIMIT}
    data.get("report", {}).pop("pairs", None)  # Figure 2's pairs name the shipped models, which this run replaces
    tasks = data["tasks"] if entries is None else entries
    data["tasks"] = [dict(t, split=False) if not split and "split" in t else t for t in tasks]
    path = tmp / ("battery.yaml" if split else "battery_whole.yaml")
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _leaf_configs() -> list[dict]:
    from lm_eval.tasks._yaml_loader import load_yaml

    from triangulation.suite import task_index
    from triangulation.suite.spec import load_suite

    index = task_index.task_manager(True).task_index
    out = []
    for task in load_suite(SHIPPED).tasks:
        if task.runner == "eval":
            out += [dict(load_yaml(index[leaf].yaml_path, resolve_func=False), task=leaf) for leaf in task_index.eval_leaves(task.tasks)]
    return out


@pytest.fixture(scope="module")
def battery_env(tmp_path_factory, upstream) -> dict[str, str]:
    """The environment a lab's offline node would have: every dataset of the battery in the caches."""
    root = tmp_path_factory.mktemp("battery_caches")
    hf, cache = root / "hf_datasets", root / "triangulate_cache"
    written = battery_standins.build(_leaf_configs(), hf, cache)
    assert written, "no stand-in written"
    env = dict(os.environ)
    env.update(
        HF_DATASETS_CACHE=str(hf),
        TRIANGULATE_CACHE=str(cache),
        TRIANGULATE_DATA=str(built_data_root(str(upstream))),
        TRIANGULATE_UPSTREAM=str(upstream),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        OMP_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


def run_suite(suite: Path, out: Path, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "triangulation", "suite", str(suite), "--output_path", str(out), *flags]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)


def _expected_sides(taxonomy, entries: list[str]) -> dict[str, set[str]]:
    """Each shipped entry's task on the side the report's taxonomy puts it: static, interactive, an ability, a control."""
    out: dict[str, set[str]] = {"static": set(), "interactive": set(), "cognitive": set()}
    for name in entries:
        side = taxonomy.assessment_of(name) or ("cognitive" if taxonomy.ability_of(name) else None)
        if side:
            out[side].add(name)
    return out


def _report_sides(report: Path, runs: Path) -> dict[str, set[str]]:
    """The sides as the report computes them, from its own score table and the runs' groups."""
    from triangulation.report.abilities import ability_benchmarks, assessment_members, group_members, load_taxonomy
    from triangulation.runs.results_io import read_run

    taxonomy = load_taxonomy()
    scores = pd.read_csv(report / "scores.csv", index_col=0)
    scores = scores.loc[:, scores.notna().any()]
    groups = group_members([read_run(f) for f in run_folder.results_files(runs)])
    sides = {side: set(members) for side, members in assessment_members(scores, taxonomy, groups).items()}
    sides["cognitive"] = {b for members in ability_benchmarks(scores, taxonomy, groups).values() for b in members}
    sides["scored"] = set(scores.columns)
    return sides


def _merged(root: Path, entry: str) -> dict:
    """The results file of a (split or whole) group cell of the chance player."""
    folder = root / "runs" / CHANCE["name"] / entry
    files = [folder / f for f in json.loads((folder / MARKER).read_text(encoding="utf-8"))["results"]]
    assert len(files) == 1, files
    return dict(run_folder.ResultsFile.read(files[0]).data)


COMPARED = ("results", "groups", "group_subtasks", "n-samples", "higher_is_better", "versions")


def test_the_shipped_battery_runs_whole_and_every_entry_reaches_the_report(tmp_path, battery_env):
    from triangulation.report.abilities import load_taxonomy
    from triangulation.suite.spec import load_suite

    entries = _shipped()["tasks"]
    out = tmp_path / "split"
    done = run_suite(battery(tmp_path, entries), out, battery_env)  # the preflight first: IFEval needs triangulate[battery]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    status = json.loads((out / "suite_status.json").read_text(encoding="utf-8"))
    assert {row["status"] for row in status["cells"]} == {"done"}, status
    # every eval cell recorded when its work began (the calibration's start-up apart from its work), inside its span
    markers = [json.loads(p.read_text(encoding="utf-8")) for p in (out / "runs").rglob(MARKER)]
    timed = [m for m in markers if m.get("first_request") is not None]
    assert len(timed) >= 86 and all(m["started"] < m["first_request"] <= m["started"] + m["seconds"] + 0.5 for m in timed)
    assert not list((out / "runs").rglob(FIRST_REQUEST)), "a first-request stamp was left in a cell folder"

    names = [_entry_name(t) for t in entries]
    assert names == [t.name for t in load_suite(SHIPPED).tasks]
    expected = _expected_sides(load_taxonomy(), names)
    assert expected["static"] == {"mmlu", "leaderboard_bbh"} and expected["interactive"] == {"clembench"}
    assert len(expected["cognitive"]) == 11  # Tables 1-2: every ability with a dataset (abilities.yaml `tasks`)
    sides = _report_sides(out / "report", out / "runs")
    assert {side: sides[side] for side in expected} == expected
    assert set(names) <= sides["scored"], f"entries with no score in the report: {sorted(set(names) - sides['scored'])}"

    # each split group, run whole, gives the very results its merged subtask cells give
    groups = [t for t in entries if t.get("split")]
    assert {_entry_name(t) for t in groups} >= {"mmlu", "leaderboard_bbh", "clembench", "natural_plan"}
    whole_out = tmp_path / "whole"
    whole = run_suite(battery(tmp_path, groups, split=False), whole_out, battery_env, "--no_report", "--no_check")
    assert whole.returncode == 0, whole.stdout[-3000:] + whole.stderr[-3000:]
    for entry in map(_entry_name, groups):
        merged, unsplit = _merged(out, entry), _merged(whole_out, entry)
        for key in COMPARED:
            assert _comparable(merged.get(key)) == _comparable(unsplit.get(key)), f"{entry}: {key} differs split vs whole"


def _comparable(value):
    """JSON values with floats rounded to 12 digits (summation order) and lists kept in order."""
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, float):
        return round(value, 12)
    return value


def test_every_dataset_of_the_shipped_battery_has_a_stand_in_that_loads_offline(tmp_path, monkeypatch):
    """Every lm-eval leaf of the shipped battery finds its data offline where the stand-ins put it (a battery
    entry added without a stand-in fails here by name, in seconds, not 20 minutes into the whole run)."""
    import datasets

    from datasets_build.cladder import load_cladder
    from datasets_build.natural_plan import load_natural_plan
    from datasets_build.simpletom import load_simpletom

    configs = _leaf_configs()
    hf, cache = tmp_path / "hf", tmp_path / "cache"
    written = battery_standins.build(configs, hf, cache)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("TRIANGULATE_CACHE", str(cache))
    loaders = {"load_cladder": load_cladder, "load_simpletom": load_simpletom, "load_natural_plan": load_natural_plan}
    checked = 0
    for cfg in configs:
        custom = cfg.get("custom_dataset")
        if custom is not None:
            name = str(custom).rsplit(".", 1)[-1]
            if name == "load_lm_pragmatics":
                continue  # built from the upstream snapshot, as the other tests do
            data = loaders[name](**(cfg.get("dataset_kwargs") or {}))
        else:
            data = datasets.load_dataset(cfg["dataset_path"], cfg.get("dataset_name"))
        splits = {str(cfg[k]) for k in ("test_split", "validation_split", "fewshot_split") if cfg.get(k)}
        assert splits <= set(data), (cfg["task"], splits, list(data))
        assert all(len(data[s]) >= battery_standins.ROWS for s in splits), cfg["task"]
        checked += 1
    assert checked >= 57 + 24 + 9 and len(written) >= checked
