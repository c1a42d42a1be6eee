"""lm-eval's task index kept between processes (:class:`triangulation.suite.index_cache.CachedTaskIndex`): the
kept index is the index lm-eval builds, read back instead of re-parsing every YAML, and rebuilt whenever a task
file is added, removed or edited."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lm_eval.tasks import _index as lm_index

from lm_eval_tasks import TASKS_DIR, index_cache

ROOT = Path(__file__).resolve().parents[2]

TASK = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files: {{test: rows.jsonl}}
test_split: test
output_type: generate_until
doc_to_text: "{{{{q}}}}"
doc_to_target: "{{{{a}}}}"
tag: my_tag
"""


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "my_tasks"
    (folder / "sub").mkdir(parents=True)
    (folder / "one.yaml").write_text(TASK.format(name="my_one"), encoding="utf-8")
    (folder / "sub" / "two.yaml").write_text(TASK.format(name="my_two"), encoding="utf-8")
    (folder / "group.yaml").write_text("group: my_group\ntask: [my_one, my_tag]\n", encoding="utf-8")
    return folder


def _plain(index: dict) -> dict:
    return {k: (e.name, e.kind, str(e.yaml_path), e.cfg, sorted(e.tags)) for k, e in index.items()}


@pytest.fixture
def builds(tmp_path, monkeypatch) -> list[list[Path]]:
    """The folder lists lm-eval itself indexed (a kept index read back adds none)."""
    monkeypatch.setenv("TRIANGULATE_CACHE", str(tmp_path / "cache"))
    calls: list[list[Path]] = []
    build = lm_index.TaskIndex.build

    def counted(paths, **kw):
        calls.append(list(paths))
        return build(paths, **kw)

    monkeypatch.setattr(lm_index.TaskIndex, "build", staticmethod(counted))
    return calls


def test_the_kept_index_is_lm_evals_own_and_is_read_back_without_parsing(tmp_path, builds):
    roots = [TASKS_DIR, _folder(tmp_path)]
    first = index_cache.CachedTaskIndex.build(roots)
    assert len(builds) == 1
    again = index_cache.CachedTaskIndex.build(roots)
    assert len(builds) == 1, "the second process parsed every YAML again"
    assert _plain(again) == _plain(first) == _plain(lm_index.TaskIndex.build(roots))
    assert {"my_one", "my_two", "my_group", "my_tag"} <= set(again) and again["my_tag"].tags == {"my_one", "my_two"}
    assert len(list((tmp_path / "cache" / "lm_eval_index").glob("*.pickle"))) == 1


@pytest.mark.parametrize("change", ["edit", "add", "remove"])
def test_a_task_file_added_removed_or_edited_rebuilds_the_index(tmp_path, builds, change):
    folder = _folder(tmp_path)
    index_cache.CachedTaskIndex.build([folder])
    if change == "edit":  # same size, new content and time: the task's name changes
        path = folder / "sub" / "two.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace("my_two", "my_2wo"), encoding="utf-8")
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    elif change == "add":
        (folder / "sub" / "three.yaml").write_text(TASK.format(name="my_three"), encoding="utf-8")
    else:
        (folder / "sub" / "two.yaml").unlink()
    index = index_cache.CachedTaskIndex.build([folder])
    assert len(builds) == 2
    assert _plain(index) == _plain(lm_index.TaskIndex.build([folder]))
    assert len(list((tmp_path / "cache" / "lm_eval_index").glob("*.pickle"))) == 1, "the stale index is kept"


def test_a_broken_kept_index_is_rebuilt_and_an_unwritable_cache_only_costs_time(tmp_path, builds, monkeypatch):
    folder = _folder(tmp_path)
    index_cache.CachedTaskIndex.build([folder])
    (kept,) = (tmp_path / "cache" / "lm_eval_index").glob("*.pickle")
    kept.write_bytes(kept.read_bytes()[:100])  # cut short: a crash mid-write on a filesystem without rename
    assert "my_one" in index_cache.CachedTaskIndex.build([folder]) and len(builds) == 2
    blocked = tmp_path / "not_a_folder"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("TRIANGULATE_CACHE", str(blocked))
    assert "my_one" in index_cache.CachedTaskIndex.build([folder]) and len(builds) == 3


@pytest.mark.slow
def test_triangulate_eval_keeps_lm_evals_index_for_the_next_process(tmp_path):
    """The real command twice (lm-eval's CLI makes its own TaskManager; a user's folder means lm-eval's whole tree
    is indexed too): the first run writes the kept index, the second reads it and evaluates the same task."""
    env = dict(os.environ, TRIANGULATE_CACHE=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    folder = _folder(tmp_path)
    (folder / "rows.jsonl").write_text('{"q": "2+2=", "a": "4"}\n{"q": "1+1=", "a": "2"}\n', encoding="utf-8")
    (folder / "one.yaml").write_text(
        TASK.format(name="my_one").replace("rows.jsonl", str(folder / "rows.jsonl"))
        + "metric_list:\n  - metric: exact_match\ngeneration_kwargs: {until: ['\\n'], max_gen_toks: 4}\n",
        encoding="utf-8",
    )
    for run in ("a", "b"):
        argv = [sys.executable, "-m", "triangulation", "eval", "--model", "random", "--tasks", "my_one"]
        argv += ["--include_path", str(folder), "--limit", "1", "--output_path", str(tmp_path / run)]
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert list((tmp_path / run).rglob("results_*.json")), "no results file"
        kept = list((tmp_path / "cache" / "lm_eval_index").glob("*.pickle"))
        assert len(kept) == 1, kept
        if run == "a":
            written = kept[0].stat().st_mtime_ns
    assert kept[0].stat().st_mtime_ns == written, "the second process wrote the index again"
