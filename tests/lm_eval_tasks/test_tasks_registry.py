"""Every GlobalGroup/Connections task name resolves in lm-eval, and the YAMLs are what the generator writes.

lm-eval skips unparseable YAMLs silently, so the full list of expected names is asserted here.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from lm_eval_tasks import TASKS_DIR
from tests.support.built_data import task_manager

SUBSETS = ["en", "es", "es_en", "zh", "zh_en", "hi", "hi_en", "ar", "ar_en", "nyt_shuf", "nyt_seq"]
SETTING_TASKS = [f"globalgroup_{s}_{g}x{w}" for s in SUBSETS for g in (2, 3, 4) for w in (2, 3, 4) if s != "nyt_seq" or g == 4]
HEADLINE_TASKS = [f"globalgroup_{s}" for s in SUBSETS]
OVERLAP_TASKS = [f"globalgroup_overlap_{s}" for s in SUBSETS]
FRESH_TASKS = [f"globalgroup_{s}_fresh" for s in ("en", "zh", "nyt_shuf")]  # twins of new word sets (issue 42: thesaurus)
SAMPLED_TASKS = [f"globalgroup_{s}_sampled" for s in SUBSETS]  # seed 000 App. B's decoding (issue 41)


@pytest.fixture(scope="module")
def tm():
    return task_manager()


def test_expected_counts():
    assert len(SETTING_TASKS) == 93 and len(HEADLINE_TASKS) == 11 and len(OVERLAP_TASKS) == 11


def test_every_task_name_resolves(tm):
    expected = set(SETTING_TASKS + HEADLINE_TASKS + OVERLAP_TASKS + FRESH_TASKS + SAMPLED_TASKS + ["connections"])
    ours = {n for n in tm.all_subtasks if n.startswith(("globalgroup", "connections"))}
    assert expected - ours == set(), "tasks missing from lm-eval's index (unparseable YAML?)"
    assert ours - expected == set(), "unexpected task names"
    assert "globalgroup" in tm.all_groups and "globalgroup_sampled" in tm.all_groups
    assert {"globalgroup_4x4", "globalgroup_settings", "globalgroup_overlap", "globalgroup_zh_settings", "globalgroup_fresh"} <= set(
        tm.all_tags
    )


def _config(tm, name: str) -> dict:
    from lm_eval.tasks._yaml_loader import load_yaml

    entry = tm.task_index[name]
    return load_yaml(entry.yaml_path, resolve_func=True, recursive=True)


@pytest.mark.parametrize("name", ["globalgroup_zh", "globalgroup_nyt_seq_4x2", "globalgroup_overlap_hi", "connections"])
def test_yaml_functions_resolve(tm, name):
    cfg = _config(tm, name)
    assert cfg["task"] == name
    for key in ("custom_dataset", "doc_to_text", "doc_to_target", "process_results"):
        assert callable(cfg[key]), key
    assert cfg["output_type"] == "generate_until"
    gen = cfg["generation_kwargs"]
    assert gen["do_sample"] is False and gen["until"] == [] and gen["max_gen_toks"] >= 512


def test_every_globalgroup_task_points_at_its_config(tm):
    for name in SETTING_TASKS + HEADLINE_TASKS + OVERLAP_TASKS:
        cfg = _config(tm, name)
        tail = name.removeprefix("globalgroup_").removeprefix("overlap_")
        config = tail if re.search(r"_\dx\d$", tail) else f"{tail}_4x4"
        assert cfg["dataset_kwargs"] == {"config": config}, name
        if name in SETTING_TASKS + HEADLINE_TASKS:
            assert cfg["fewshot_split"] == "dev" and cfg["test_split"] == "test"
            assert [m["metric"] for m in cfg["metric_list"]] == ["group_f1", "ctd", "solved", "topic_achieved", "parsed"]


def test_group_is_the_eleven_headline_tasks(tm):
    from lm_eval.tasks._yaml_loader import load_yaml

    cfg = load_yaml(tm.task_index["globalgroup"].yaml_path, resolve_func=False)
    assert cfg["task"] == HEADLINE_TASKS
    assert {m["metric"] for m in cfg["aggregate_metric_list"]} == {"group_f1", "ctd", "solved", "topic_achieved", "parsed"}
    assert all(m["aggregation"] == "mean" for m in cfg["aggregate_metric_list"])


def test_sampled_tasks_decode_as_seed_000_app_b(tm):
    """App. B, Llama-3-8B-Instruct and Mistral-7B-Instruct-v0.2: do_sample True, top_k 50, top_p 0.9, temperature 0.6."""
    from lm_eval.tasks._yaml_loader import load_yaml

    for name in SAMPLED_TASKS:
        cfg = _config(tm, name)
        greedy = _config(tm, name.removesuffix("_sampled"))
        assert cfg["dataset_kwargs"] == greedy["dataset_kwargs"] and cfg["doc_to_text"] is greedy["doc_to_text"]
        gen = cfg["generation_kwargs"]
        assert (gen["do_sample"], gen["temperature"], gen["top_k"], gen["top_p"]) == (True, 0.6, 50, 0.9), name
        assert gen["until"] == [] and gen["max_gen_toks"] == greedy["generation_kwargs"]["max_gen_toks"]
    group = load_yaml(tm.task_index["globalgroup_sampled"].yaml_path, resolve_func=False)
    assert group["task"] == SAMPLED_TASKS


def test_committed_yamls_equal_generator_output(tmp_path):
    path = TASKS_DIR / "globalgroup" / "_generate.py"
    spec = importlib.util.spec_from_file_location("_gg_generate", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    expected = gen.expected_files()
    folder = TASKS_DIR / "globalgroup"
    committed = {p.relative_to(folder).as_posix() for p in [*folder.glob("globalgroup*.yaml"), *folder.glob("overlap/globalgroup*.yaml")]}
    assert committed == set(expected)
    for name, text in expected.items():
        assert (folder / name).read_text(encoding="utf-8") == text, f"{name}: rerun _generate.py"
    # and the generator writes exactly that into an empty folder
    (tmp_path / "overlap").mkdir()
    gen.main(tmp_path)
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.yaml")}
    assert written == set(expected)
