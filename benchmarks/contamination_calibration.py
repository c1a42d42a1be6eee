"""Calibrating the contamination check on a real model (issue 42, Build 5): the embedded SmolLM2-135M before and
after a few minutes of fine-tuning on published ``globalgroup_zh`` test games (a memoriser made on purpose), each
measured by both signals on the first ``--pairs`` published games and their seed-0 fresh twins:

1. the paired delta of group F1 (published - fresh; greedy generation with the task's prompt, scored by the task's
   own ``process_results``), its 95% paired-bootstrap interval, the sign-flip p and the Benjamini-Hochberg q over
   the rows of this run (:mod:`triangulation.report.analyses.contamination`'s statistic);
2. the Min-K% Prob membership probe (k = 20%) on the games' text (prompt + gold answer), its AUC and interval
   (:mod:`triangulation.membership`, checked against lm-eval's ``loglikelihood_rolling``).

The fine-tuned weights go to ``--weights`` (default ``/tmp/triangulate_memoriser``, a ``state_dict.pt``), never into
the repository. The model runs in float32 (GGUF weights dequantised). On a shared 2-core CPU one forward pass over a
4x4 game's text (~830 tokens) takes 20-80 s, so the recorded run used the 2x2 games (~440 tokens):
``OMP_NUM_THREADS=2 nice python benchmarks/contamination_calibration.py --pairs 8 --setting 2x2 --epochs 3 --lr 5e-4
--max_gen_toks 64`` (benchmarks/README.md). Prints each model's row as soon as it is measured, then the rows with
their q-values and a last-line JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from datasets_build import matched
from datasets_build.prompts import globalgroup_doc_to_text, globalgroup_item_text
from datasets_build.sources import source_dir
from plumbing.stats import benjamini_hochberg, paired_delta
from triangulation import membership


def load_lm():
    import lm_eval.models  # noqa: F401  (fills the registry)
    from lm_eval.api.registry import get_model

    from models.default_model import default_model_args

    # float32: the GGUF weights are dequantised on load; half precision is slow on a CPU and cannot be trained well
    return get_model("hf").create_from_arg_string(default_model_args(device="cpu") + ",dtype=float32", {"batch_size": 1})


def group_f1(lm, docs: list[dict], max_gen_toks: int) -> list[float]:
    from lm_eval.api.instance import Instance

    from custom_metrics.globalgroup import process_results

    kwargs = {"until": [], "do_sample": False, "max_gen_toks": max_gen_toks}
    requests = [
        Instance(request_type="generate_until", doc=d, arguments=(globalgroup_doc_to_text(d), kwargs), idx=i) for i, d in enumerate(docs)
    ]
    replies = lm.generate_until(requests, disable_tqdm=True)
    return [float(process_results(d, [r])["group_f1"]) for d, r in zip(docs, replies)]


def fine_tune(lm, texts: list[str], epochs: int, lr: float, out: Path) -> float:
    """Causal-LM fine-tuning on ``texts`` (batch 1, AdamW), in place; returns the last epoch's mean loss."""
    import torch

    model = lm.model
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    loss_sum = 0.0
    for _ in range(epochs):
        loss_sum = 0.0
        for text in texts:
            ids = torch.tensor([[lm.prefix_token_id, *lm.tok_encode(text)]])
            loss = model(ids, labels=ids).loss
            loss.backward()
            optimiser.step()
            optimiser.zero_grad()
            loss_sum += float(loss.detach())
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out / "state_dict.pt")  # a GGUF-loaded model refuses save_pretrained
    return loss_sum / len(texts)


def measure(lm, name: str, pub: list[dict], fresh: list[dict], max_gen_toks: int, generate: bool = True, probe: bool = True) -> dict:
    """Both signals, or one (``generate``: the delta; ``probe``: the Min-K% AUC)."""
    start = time.perf_counter()
    row: dict = {"model": name, "pairs": len(pub)}
    if generate:
        d = paired_delta(group_f1(lm, pub, max_gen_toks), group_f1(lm, fresh, max_gen_toks))
        row.update(
            pairs=d.pairs,
            delta=round(d.delta, 4),
            low=round(d.low, 4) if d.estimable else "not estimable",
            high=round(d.high, 4) if d.estimable else "not estimable",
            p=round(d.p, 5),
        )
    if probe:
        found = membership.probe(lm, [globalgroup_item_text(x) for x in pub], [globalgroup_item_text(x) for x in fresh])
        row.update(auc=round(found.auc, 3), auc_low=round(found.low, 3), auc_high=round(found.high, 3))
    return {**row, "seconds": round(time.perf_counter() - start, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--setting", default="4x4", help="<groups>x<words> of the globalgroup_zh config (2x2: shorter texts)")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--max_gen_toks", type=int, default=96)
    parser.add_argument("--weights", type=Path, default=Path("/tmp/triangulate_memoriser"))
    parser.add_argument(
        "--saved", action="store_true", help="measure the weights saved in --weights: the Min-K%% probe first, then the delta"
    )
    args = parser.parse_args()
    root = source_dir("globalgroup")
    g, _, w = args.setting.partition("x")
    published, _ = matched.published_games(root, "zh", int(g), int(w))
    pub = published[: args.pairs]
    task = "globalgroup_zh" if args.setting == "4x4" else f"globalgroup_zh_{args.setting}"
    fresh = matched.matched_globalgroup(root, task, seed=matched.DEFAULT_SEED, count=args.pairs).rows
    lm = load_lm()
    if args.saved:  # a run whose time limit cut the fine-tuned row off: the probe first, so a second cut keeps it
        import torch

        lm.model.load_state_dict(torch.load(args.weights / "state_dict.pt"))
        lm.model.eval()
        print(json.dumps(measure(lm, f"saved {args.weights}", pub, fresh, 0, generate=False), ensure_ascii=False), flush=True)
        print(json.dumps(measure(lm, f"saved {args.weights}", pub, fresh, args.max_gen_toks, probe=False), ensure_ascii=False), flush=True)
        return
    rows = [measure(lm, "SmolLM2-135M (base)", pub, fresh, args.max_gen_toks)]
    print(rows[0], flush=True)  # a run cut short by its time limit keeps what it measured
    start = time.perf_counter()
    loss = fine_tune(lm, [globalgroup_item_text(x) for x in pub], args.epochs, args.lr, args.weights)
    print(f"fine-tuned: {args.epochs} epochs in {time.perf_counter() - start:.0f} s, last epoch's mean loss {loss:.3f}", flush=True)
    tuned = f"SmolLM2-135M fine-tuned on the {len(pub)} published games ({args.epochs} epochs, {time.perf_counter() - start:.0f} s, last loss {loss:.3f})"
    rows.append(measure(lm, tuned, pub, fresh, args.max_gen_toks))
    print(rows[1], flush=True)
    for row, q in zip(rows, benjamini_hochberg([r["p"] for r in rows])):
        row["q"] = round(q, 5)
        row["flagged"] = bool(q <= 0.05 and row["delta"] > 0)
        print(row)
    print(json.dumps(rows, ensure_ascii=False))


if __name__ == "__main__":
    main()
