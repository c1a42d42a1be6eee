"""datasets_build.hub: deterministic parquet + dataset card, atomic folders, offline load_dataset."""

from __future__ import annotations

import datasets
import pytest
import yaml

from datasets_build import registry
from datasets_build.cli import build_all
from datasets_build.hub import CardInfo, atomic_dir, read_card_sizes, write_hub_folder
from plumbing.output_dirs import OWNER_MARKER

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "words": datasets.Sequence(datasets.Value("string")),
        "groups": [{"topic": datasets.Value("string"), "flag": datasets.Value("bool")}],
        "score": datasets.Value("float64"),
    }
)
ROWS = [
    {"id": "a", "words": ["x", "ü", "字"], "groups": [{"topic": "t", "flag": None}], "score": None},
    {"id": "b", "words": [], "groups": [], "score": 0.25},
    {"id": "c", "words": ["y"], "groups": [{"topic": "u", "flag": True}, {"topic": "v", "flag": False}], "score": 1.0},
]
CARD = CardInfo("Toy", "mit", "@misc{toy, title={Toy}}", "A toy dataset.", language=("en",), source="here")
CONFIGS = {"first": {"dev": ROWS[:2], "test": ROWS}, "second": {"test": ROWS[2:]}}


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_same_rows_give_byte_identical_folders(tmp_path):
    write_hub_folder(tmp_path / "one", CONFIGS, FEATURES, CARD)
    write_hub_folder(tmp_path / "two", CONFIGS, FEATURES, CARD)
    one, two = _files(tmp_path / "one"), _files(tmp_path / "two")
    assert sorted(one) == [
        "README.md",
        "data/first/dev-00000-of-00001.parquet",
        "data/first/test-00000-of-00001.parquet",
        "data/second/test-00000-of-00001.parquet",
    ]
    assert one == two
    changed = {"first": {"dev": ROWS[:2], "test": ROWS[::-1]}, "second": CONFIGS["second"]}
    write_hub_folder(tmp_path / "three", changed, FEATURES, CARD)
    three = _files(tmp_path / "three")
    assert three["data/first/test-00000-of-00001.parquet"] != one["data/first/test-00000-of-00001.parquet"]


def test_card_header_lists_configs_sizes_licence(tmp_path):
    summary = write_hub_folder(tmp_path, CONFIGS, FEATURES, CARD)
    assert summary["configs"] == 2 and summary["rows"] == 6
    text = (tmp_path / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(text.split("---\n")[1])
    assert header["pretty_name"] == "Toy" and header["license"] == "mit"
    assert [c["config_name"] for c in header["configs"]] == ["first", "second"]
    assert header["configs"][0]["data_files"][1] == {"split": "test", "path": "data/first/test-00000-of-00001.parquet"}
    assert read_card_sizes(tmp_path) == {"first": {"dev": 2, "test": 3}, "second": {"test": 1}}
    assert "@misc{toy" in text and "A toy dataset." in text and "&id" not in text


def test_load_dataset_offline_restores_rows_and_features(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    write_hub_folder(tmp_path / "toy", CONFIGS, FEATURES, CARD)
    ds = datasets.load_dataset(str(tmp_path / "toy"), "first", cache_dir=str(tmp_path / "cache"))
    assert set(ds) == {"dev", "test"}
    assert ds["test"].to_list() == ROWS
    assert ds["test"].features == FEATURES


def test_rows_that_do_not_match_features_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="do not match"):
        write_hub_folder(tmp_path, {"c": {"test": [{"id": "a", "words": "not a list", "groups": [], "score": "x"}]}}, FEATURES, CARD)


def test_atomic_dir_failure_leaves_nothing_and_keeps_previous(tmp_path):
    final = tmp_path / "ds"
    with pytest.raises(RuntimeError):
        with atomic_dir(final) as tmp:
            (tmp / "half.txt").write_text("half")
            raise RuntimeError("builder crashed")
    assert list(tmp_path.iterdir()) == []  # no final folder, no temporary left behind

    with atomic_dir(final) as tmp:
        (tmp / "good.txt").write_text("good")
    with pytest.raises(RuntimeError):
        with atomic_dir(final) as tmp:
            (tmp / "new.txt").write_text("new")
            raise RuntimeError("second build crashed")
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]
    assert sorted(p.name for p in final.iterdir()) == [OWNER_MARKER, "good.txt"]

    with atomic_dir(final) as tmp:
        (tmp / "new.txt").write_text("new")
    assert sorted(p.name for p in final.iterdir()) == [OWNER_MARKER, "new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]


def test_failing_builder_midway_keeps_previous_good_folder(tmp_path, monkeypatch):
    """The CLI's build loop: a builder that writes half a folder then fails changes nothing on disk."""

    def good(out):
        return write_hub_folder(out, CONFIGS, FEATURES, CARD)

    def failing(out):
        write_hub_folder(out, {"first": CONFIGS["first"]}, FEATURES, CARD)
        raise RuntimeError("source vanished midway")

    monkeypatch.setitem(registry.BUILDERS._items, "toy", good)
    build_all(["toy"], tmp_path)
    before = _files(tmp_path / "toy")
    monkeypatch.setitem(registry.BUILDERS._items, "toy", failing)
    with pytest.raises(RuntimeError, match="midway"):
        build_all(["toy"], tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["toy"]
    assert _files(tmp_path / "toy") == before


def test_push_uploads_the_folder_as_a_dataset_repo(tmp_path, monkeypatch):
    """--push-to-hub: one create_repo + upload_folder of the built folder (Hub replaced by a recorder)."""
    import huggingface_hub

    from datasets_build.hub import push_folder

    calls = []

    class FakeApi:
        def create_repo(self, repo_id, **kw):
            calls.append(("create", repo_id, kw))

        def upload_folder(self, **kw):
            calls.append(("upload", kw["repo_id"], kw))
            return type("Info", (), {"commit_url": f"https://hf.co/datasets/{kw['repo_id']}/commit/1"})()

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    write_hub_folder(tmp_path / "toy", CONFIGS, FEATURES, CARD)
    assert push_folder(tmp_path / "toy", "org/toy").endswith("org/toy/commit/1")
    assert calls[0][:2] == ("create", "org/toy") and calls[0][2]["repo_type"] == "dataset"
    assert calls[1][2] == {"folder_path": str(tmp_path / "toy"), "repo_id": "org/toy", "repo_type": "dataset"}
