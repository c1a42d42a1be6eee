"""Episodes per second of the runner's ``hf`` path on a GPU, on a randomly initialised 8B-shaped model.

Issue 21 asks how the three ways of playing multi-turn episodes compare on a GPU at 16 and 64 live
episodes; a GPU machine lent here has PyTorch and transformers but no model weights and no network, so
the model is built from a Llama-3.1-8B-shaped config (32 layers, hidden 4096, 32 heads, 8 KV heads,
MLP 14336) with random weights in bf16. Only speed is measured: a random model's replies are
noise, so every reply is forced to ``--gen_toks`` new tokens (a stop string that never occurs; the
EOS token has a 1 in vocab chance per step). The vocabulary is the tokenizer's (``--tokenizer``, a
folder with ``tokenizer.json`` and a chat template; default the embedded SmolLM2's, 49,152 tokens,
against Llama 3's 128,256: a smaller output layer, under 5% of the parameters).

Three ways, all through :func:`multiturn.engine.scheduler.play_episodes` on n-back (24 turns an episode):

- (a) full history recomputed at batch size 1, one episode at a time (clemcore's and the
  Triangulating code's way); at batch 1 the number of live episodes does not change its rate, so it
  runs ``--a_episodes`` episodes;
- (b) lockstep: all live episodes' next turns in one ``generate_until`` call (batch = live episodes);
- (c) the CPU default ``hf`` path: :class:`models.prefix_cache.PrefixCacheHFLM` (per-episode
  KV prefix reuse at batch 1, history drafts for greedy requests), all live episodes in flight;
- (d) the GPU default since issue 29: what ``triangulate play`` configures for an ``hf`` model on a GPU
  without ``--batch_size`` (:func:`models.loading.play_batch_size`: batch = live episodes, prefix
  reuse left on for the turns that reach the model alone).

    python benchmarks/gpu_runner_throughput.py --live 16,64 --gen_toks 4 --tokenizer DIR

Prints one line per mode and a last-line JSON with episodes/s per mode and live count.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from multiturn.engine.scheduler import play_episodes  # noqa: E402
from multiturn.games.nback import NBackTask  # noqa: E402
from multiturn.registry import get_task  # noqa: E402

LLAMA_8B = dict(
    hidden_size=4096,
    intermediate_size=14336,
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=8,
    max_position_embeddings=8192,
    rope_theta=500000.0,
    rms_norm_eps=1e-5,
)
NEVER = "\u2403never-stop\u2403"


def build_lm(tokenizer_dir: str, layers: int | None, device: str) -> Any:
    """A ``PrefixCacheHFLM`` around a random Llama-8B-shaped model (bf16 on ``device``)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from models.prefix_cache import PrefixCacheHFLM

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    shape = dict(LLAMA_8B, num_hidden_layers=layers or LLAMA_8B["num_hidden_layers"])
    config = LlamaConfig(vocab_size=len(tok), bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, **shape)
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    torch.manual_seed(0)
    torch.set_default_dtype(dtype)  # build in bf16 directly: no fp32 copy of 8B weights
    with torch.device(device):
        model = LlamaForCausalLM(config).eval()
    torch.set_default_dtype(torch.float32)
    params = sum(p.numel() for p in model.parameters())
    print(f"random Llama-8B-shaped model: {params / 1e9:.2f} B parameters, {dtype}, {device}", flush=True)
    return PrefixCacheHFLM(pretrained=model, tokenizer=tok, batch_size=1, device=device)


def configure(lm: Any, mode: str, live: int) -> int:
    """Switch ``lm`` to ``mode``; returns the engine's ``max_live``."""
    from models.args import prefix_cache_enabled
    from models.loading import play_batch_size

    lm.prefix_pool.clear()
    if mode == "d_gpu_default":  # exactly what `triangulate play` picks for `--model hf` on a GPU
        lm.prefix_cache_enabled = prefix_cache_enabled(None)
        lm.batch_size_per_gpu = play_batch_size("hf", {}, "cuda", live)
        return live
    lm.prefix_cache_enabled = mode == "c_default"
    lm.batch_size_per_gpu = live if mode == "b_lockstep" else 1
    return 1 if mode == "a_recompute_batch1" else live


def run(lm: Any, task: NBackTask, instances: list[dict[str, Any]], mode: str, live: int, gen_toks: int) -> float:
    """Wall seconds to play ``instances`` in ``mode``."""
    import torch

    max_live = configure(lm, mode, live)
    override = {"temperature": 0.0, "do_sample": False, "max_gen_toks": gen_toks, "until": [NEVER]}
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    records = play_episodes(task, instances, {"player": lm}, seed=0, gen_kwargs_override=override, max_live=max_live, progress=False)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    failed = [r["id"] for r in records if r.get("failed")]
    if failed:
        raise SystemExit(f"{mode}: episodes failed: {failed[:3]}")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", required=True, help="folder with tokenizer.json and a chat template")
    parser.add_argument("--live", default="16,64", help="live-episode counts for (b) and (c)")
    parser.add_argument("--a_episodes", type=int, default=4, help="episodes for (a), one at a time")
    parser.add_argument("--gen_toks", type=int, default=4, help="new tokens forced per reply")
    parser.add_argument("--layers", type=int, default=None, help="fewer layers (a smoke test off the GPU)")
    parser.add_argument("--task", default="nback_verbal_3")
    parser.add_argument("--device", default="cuda")
    parser.add_argument(
        "--repeats", type=int, default=1, help="runs per mode and live count; the fastest counts (the first run of a shape warms kernels)"
    )
    parser.add_argument("--modes", default="a_recompute_batch1,b_lockstep,c_default,d_gpu_default")
    args = parser.parse_args(argv)
    lm = build_lm(args.tokenizer, args.layers, args.device)
    task = get_task(args.task)
    pool = task.instances(0)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    run(lm, task, pool[:1], "c_default", 1, args.gen_toks)  # warm-up: CUDA kernels, allocator
    rates: dict[str, float] = {}
    for live in [int(x) for x in args.live.split(",")]:
        instances = [dict(pool[i % len(pool)], id=f"{pool[i % len(pool)]['id']}_{i}") for i in range(live)]
        for mode in modes:
            subset = instances[: args.a_episodes] if mode == "a_recompute_batch1" else instances
            key = f"{mode}@{live}"
            if mode == "a_recompute_batch1" and any(k.startswith(mode) for k in rates):
                rates[key] = next(v for k, v in rates.items() if k.startswith(mode))
                continue
            secs = min(run(lm, task, subset, mode, live, args.gen_toks) for _ in range(max(args.repeats, 1)))
            rates[key] = round(len(subset) / secs, 4)
            print(
                f"{args.task} live {live:3d} {mode:20s} {len(subset):3d} episodes in {secs:8.1f} s: {rates[key]:.4f} episodes/s", flush=True
            )
    print(json.dumps({"task": args.task, "gen_toks": args.gen_toks, "episodes_per_s": rates}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
