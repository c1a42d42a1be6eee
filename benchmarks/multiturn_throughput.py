"""Episodes per second of the multi-turn engine: one episode at a time vs lockstep batching.

Same model (default: the embedded SmolLM2 on CPU), same episodes (the first N blocks of
``nback_verbal_3``), greedy decoding so both modes must produce identical replies:

- sequential: ``max_live=1`` and backend batch size 1 (one request per ``generate_until`` call);
- lockstep:   ``max_live=N`` and backend batch size N (all episodes' next turns in one call).

Prints the wall time, episodes/s and generate calls of each mode and whether the replies agree.
Usage: ``python benchmarks/multiturn_throughput.py [--episodes 4] [--task nback_verbal_3]
[--model hf --model_args pretrained=...] [--threads 1]``. On a GPU pass ``--device cuda``; there batching is
expected to pay, on a 2-core CPU it does not (prefill is compute-bound).
"""

from __future__ import annotations

import argparse
import time

from multiturn import registry
from multiturn.backends import load_lm
from multiturn.engine import play_episodes

GREEDY = {"temperature": 0.0, "do_sample": False}


class CountingLM:
    """Wraps an LM to count generate_until calls and requests."""

    def __init__(self, lm):
        self.lm, self.calls, self.requests = lm, 0, 0

    def apply_chat_template(self, messages, add_generation_prompt: bool = True):
        return self.lm.apply_chat_template(messages)

    def generate_until(self, requests, disable_tqdm: bool = False):
        self.calls += 1
        self.requests += len(requests)
        return self.lm.generate_until(requests, disable_tqdm=True)


def run_mode(task, instances, lm, batch: int, max_gen_toks: int) -> tuple[float, list[dict], CountingLM]:
    if hasattr(lm, "batch_size_per_gpu"):
        lm.batch_size_per_gpu = batch  # HFLM's batch size, without loading the model twice
    counting = CountingLM(lm)
    start = time.perf_counter()
    records = play_episodes(
        task,
        instances,
        {"player": counting},
        seed=0,
        gen_kwargs_override={**GREEDY, "max_gen_toks": max_gen_toks},
        max_live=batch,
        progress=False,
    )
    return time.perf_counter() - start, records, counting


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="nback_verbal_3")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--model", default=None)
    parser.add_argument("--model_args", default=None)
    parser.add_argument("--device", default=None)
    parser.add_argument("--max_gen_toks", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (1 avoids thrashing on a busy machine)")
    args = parser.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)

    task = registry.get_task(args.task)
    instances = task.instances(0)[: args.episodes]
    t0 = time.perf_counter()
    lm, model, _ = load_lm(args.model, args.model_args, batch_size=1, device=args.device)
    print(f"model {model} loaded in {time.perf_counter() - t0:.1f} s; task {args.task}, {len(instances)} episodes", flush=True)

    results = {}
    for label, batch in (("sequential (batch 1)", 1), (f"lockstep (batch {len(instances)})", len(instances))):
        seconds, records, counting = run_mode(task, instances, lm, batch, args.max_gen_toks)
        results[label] = records
        print(
            f"{label:24s} {seconds:7.1f} s  {len(records) / seconds:.4f} episodes/s  "
            f"{counting.requests / seconds:.2f} requests/s  {counting.calls} generate calls",
            flush=True,
        )
    a, b = results.values()
    replies = lambda recs: {r["id"]: [t["response"] for t in r["transcript"]] for r in recs}  # noqa: E731
    print("identical replies in both modes:", replies(a) == replies(b))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
