"""Issue 43 item 3: `data build` writes the default fresh twins, so `triangulate eval --tasks globalgroup_zh_fresh`
reads built data only (it tried to download the upstream CSVs in a shell without TRIANGULATE_UPSTREAM)."""

from __future__ import annotations

import pytest

from datasets_build import matched
from plumbing.errors import UserError


def test_data_build_writes_the_default_twins_and_the_fresh_task_needs_no_upstream(upstream, tmp_path, monkeypatch):
    from datasets_build.cli import build_all

    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("TRIANGULATE_UPSTREAM", str(upstream))
    results = build_all(["globalgroup"], tmp_path / "data")
    written = matched.write_default_twins([n for n, _, _ in results], ["globalgroup"])
    assert {p.name for p in written} == {
        f"globalgroup_{s}_{matched.seed_label(matched.DEFAULT_SEED, False)}" for s in matched.FRESH_SUBSETS
    }
    assert matched.write_default_twins(["globalgroup"]) == []  # written once; a rebuild of the source writes them again

    # now no upstream at all: the fresh task's data comes from the built twin, never a download
    monkeypatch.delenv("TRIANGULATE_UPSTREAM")

    def refuse(*args, **kwargs):
        raise AssertionError("the fresh twin was generated again at run time")

    monkeypatch.setattr(matched, "write_matched", refuse)
    data = matched.load_globalgroup_fresh("zh_4x4")
    assert len(data["test"]) > 0


def test_a_twin_of_no_source_dataset_is_not_written(tmp_path, monkeypatch):
    monkeypatch.setenv("TRIANGULATE_DATA", str(tmp_path / "data"))
    assert matched.write_default_twins(["nback", "splat"]) == []
    with pytest.raises(UserError):
        matched.refuse_untwinned("wordle")
