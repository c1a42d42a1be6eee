"""Small, realistic results folders for the report tests, written as lm_eval and triangulate play write them.

Two scripted models answer real-looking GlobalGroup / Connections games: ``oracle`` gives the gold
groups, ``chunker`` cuts the shuffled pool into consecutive chunks. Their per-sample metrics are
computed with the project's own scorers (custom_metrics), so the files hold what a real run would.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from custom_metrics.connections import score_connections
from custom_metrics.globalgroup import score_groups
from custom_metrics.parsing import parse_groups
from triangulation.runs.results_io import read_run

DATE = "2026-11-21T10-00-00.000000"
COLOURS = ["yellow", "green", "blue", "purple"]
SUBSETS = {"en": "en", "zh": "zh", "zh_en": "en", "nyt_shuf": "en"}
TAGS = ["Everyday", "Pop culture", "Linguistic", "Everyday"]


def gg_doc(subset: str, k: int) -> dict[str, Any]:
    """A 4x4 GlobalGroup game in the agreed schema (words are synthetic but unique)."""
    rng = random.Random(f"{subset}{k}")
    groups = []
    for g in range(4):
        topic = f"{subset.upper()} TOPIC {k}-{g}"
        groups.append(
            {
                "topic": topic,
                "words": [f"{subset}w{k}{g}{i}" for i in range(4)],
                "tags": [] if subset.startswith("nyt") else [TAGS[g]],
                "culturally_related": None if subset.startswith("nyt") else g % 2 == 0,
            }
        )
    words = [w for g in groups for w in g["words"]]
    rng.shuffle(words)
    return {
        "id": f"{subset}_4x4_test_{k:03d}",
        "subset": subset,
        "language": SUBSETS[subset],
        "culture": subset.split("_")[0],
        "split": "test",
        "game_number": k,
        "n_groups": 4,
        "group_size": 4,
        "words": words,
        "groups": groups,
        "repeat_of": None,
        "canprop_overlap": 0.1 + 0.2 * k,
        "canprop_length": 4.0,
        "ari": 0.05 + 0.3 * k,
        "canprop_response": None,
    }


def conn_doc(k: int, topics_from: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Connections game; with ``topics_from`` (a nyt_shuf GlobalGroup doc) it reuses those groups."""
    src = (
        topics_from["groups"] if topics_from else [{"topic": f"CONN {k}-{g}", "words": [f"c{k}{g}{i}" for i in range(4)]} for g in range(4)]
    )
    groups = [
        {
            "topic": g["topic"],
            "words": list(g["words"]),
            "level": i,
            "color": COLOURS[i],
            "knowledge": [["Semantic"], ["Encyclopedic"], ["Semantic", "Associative"], ["Word form"]][i],
        }
        for i, g in enumerate(src)
    ]
    words = [w for g in groups for w in g["words"]]
    random.Random(f"conn{k}").shuffle(words)
    return {"id": f"conn_{k}", "game_id": k, "date": None, "words": words, "groups": groups}


def oracle(doc: dict[str, Any]) -> str:
    return "\n".join(f"{g['topic']}: {json.dumps(g['words'], ensure_ascii=False)}" for g in doc["groups"])


def chunker(doc: dict[str, Any]) -> str:
    words = doc["words"]
    return "\n".join(f"Group {i + 1}: {json.dumps(words[4 * i : 4 * i + 4], ensure_ascii=False)}" for i in range(4))


def half_oracle(doc: dict[str, Any]) -> str:
    """Gold groups for the first half of the games' groups, chunks for the rest."""
    gold = doc["groups"]
    rest = [w for g in gold[2:] for w in g["words"]]
    rest = rest[1:] + rest[:1]
    lines = [f"{g['topic']}: {json.dumps(g['words'], ensure_ascii=False)}" for g in gold[:2]]
    lines += [f"Guess: {json.dumps(rest[4 * i : 4 * i + 4], ensure_ascii=False)}" for i in range(2)]
    return "\n".join(lines)


def gg_metrics(response: str, doc: dict[str, Any]) -> dict[str, float]:
    scores = score_groups(parse_groups(response, doc["words"], n_groups=4), doc["groups"], doc["words"], None)
    scores["topic_achieved"] = 1.0 if scores["solved"] else 0.0  # stands in for fastText vectors
    return scores


def conn_metrics(response: str, doc: dict[str, Any]) -> dict[str, float]:
    s = score_connections(response, [g["words"] for g in doc["groups"]], doc["words"])
    return {
        "unweighted_clustering": float(s["unweighted"]),
        "weighted_clustering": float(s["weighted"]),
        "perfect_solve": float(s["perfect_solve"]),
        "category_reasoning": math.nan,
    }


def _sample(i: int, doc: dict[str, Any], response: str, metrics: dict[str, float]) -> dict[str, Any]:
    return {
        "doc_id": i,
        "doc": doc,
        "target": "",
        "arguments": {"gen_args_0": {"arg_0": "prompt", "arg_1": {}}},
        "resps": [[response]],
        "filtered_resps": [response],
        "filter": "none",
        "metrics": list(metrics),
        **metrics,
    }


def _mean(rows: list[dict[str, float]], key: str) -> float:
    vals = [r[key] for r in rows if not math.isnan(r[key])]
    return sum(vals) / len(vals) if vals else math.nan


def write_lm_eval_run(
    root: Path,
    model_args: Any,
    respond: Callable[[dict], str],
    extra: dict[str, dict[str, float]] | None = None,
    games: int = 3,
    folder: str = "model",
) -> Path:
    """``root/<folder>/results_<DATE>.json`` + samples files, as ``lm_eval --log_samples`` writes them."""
    out = root / folder
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    configs: dict[str, dict[str, Any]] = {}
    for subset in SUBSETS:
        task = f"globalgroup_{subset}"
        docs = [gg_doc(subset, k) for k in range(games)]
        rows = [gg_metrics(respond(d), d) for d in docs]
        with open(out / f"samples_{task}_{DATE}.jsonl", "w", encoding="utf-8") as fh:
            for i, (d, m) in enumerate(zip(docs, rows)):
                fh.write(json.dumps(_sample(i, d, respond(d), m), ensure_ascii=False) + "\n")
        results[task] = {"alias": task, **{f"{k},none": _mean(rows, k) for k in rows[0]}, **{f"{k}_stderr,none": "N/A" for k in rows[0]}}
        configs[task] = {"task": task, "metric_list": [{"metric": k} for k in ("group_f1", "ctd", "solved", "topic_achieved", "parsed")]}
    nyt = [gg_doc("nyt_shuf", k) for k in range(games)]
    docs = [conn_doc(k, nyt[k]) for k in range(games)]
    rows = [conn_metrics(respond(d), d) for d in docs]
    with open(out / f"samples_connections_{DATE}.jsonl", "w", encoding="utf-8") as fh:
        for i, (d, m) in enumerate(zip(docs, rows)):
            fh.write(json.dumps(_sample(i, d, respond(d), m)) + "\n")
    results["connections"] = {"alias": "connections", **{f"{k},none": _mean(rows, k) for k in rows[0]}}
    configs["connections"] = {"task": "connections", "metric_list": [{"metric": k} for k in rows[0]]}
    for task, metrics in (extra or {}).items():
        results[task] = {"alias": task, **{f"{k},none": v for k, v in metrics.items()}, **{f"{k}_stderr,none": 0.01 for k in metrics}}
    payload = {
        "results": results,
        "group_subtasks": {t: [] for t in results},
        "configs": configs,
        "config": {"model": "hf", "model_args": model_args, "batch_size": 1},
        "model_name": "ignored-by-report",
    }
    path = out / f"results_{DATE}.json"
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=1))
    return path


def write_play_run(root: Path, model_args: str, metrics: dict[str, dict[str, float]], folder: str = "play") -> Path:
    """``root/<folder>/results_<ts>.json`` in the shape multiturn.engine.results.results_payload writes."""
    from multiturn.engine.results import results_payload, write_results

    task_results = {t: {"metrics": m, "config": {"task": t}} for t, m in metrics.items()}
    games = [t for t in metrics if t in ("taboo", "wordle", "referencegame", "imagegame", "privateshared")]
    payload = results_payload(
        task_results,
        groups={"clembench": games} if games else None,
        config={"model": "hf", "model_args": model_args},
        model_name=folder,
        model_name_sanitized=folder,
    )
    path = write_results(root / folder, payload)
    for task in metrics:
        (root / folder / f"episodes_{task}.jsonl").write_text(json.dumps({"id": f"{task}_0", "scores": metrics[task]}) + "\n")
    return path


def clem(played: float, quality: float) -> dict[str, float]:
    return {"played": played, "quality": quality, "clemscore": played / 100 * quality}


def three_model_results(root: Path) -> list[Path]:
    """Results of three scripted models: lm_eval runs (dict and string model_args) and play runs."""
    paths = []
    for name, respond, args, static, games in (
        (
            "oracle",
            oracle,
            {"pretrained": "scripted/oracle"},
            {
                "mmlu": {"acc": 0.71},
                "winogrande": {"acc": 0.80},
                "logiqa2": {"acc": 0.52},
                "ifeval": {"prompt_level_strict_acc": 0.8, "inst_level_strict_acc": 0.86},
            },
            {
                "taboo": clem(100, 80),
                "wordle": clem(100, 10),
                "referencegame": clem(100, 90),
                "nback_verbal_3_triangulating": {"accuracy": 0.9},
                "wcst_triangulating": {"accuracy": 0.7},
            },
        ),
        (
            "chunker",
            chunker,
            "pretrained=scripted/chunker,dtype=float32",
            {
                "mmlu": {"acc": 0.40},
                "winogrande": {"acc": 0.55},
                "logiqa2": {"acc": 0.30},
                "ifeval": {"prompt_level_strict_acc": 0.3, "inst_level_strict_acc": 0.4},
            },
            {
                "taboo": clem(50, 20),
                "wordle": clem(80, 0),
                "referencegame": clem(100, 40),
                "nback_verbal_3_triangulating": {"accuracy": 0.5},
                "wcst_triangulating": {"accuracy": 0.3},
            },
        ),
        (
            "half",
            half_oracle,
            "pretrained=/models/local/scripted-half",
            {
                "mmlu": {"acc": 0.55},
                "winogrande": {"acc": 0.60},
                "logiqa2": {"acc": 0.41},
                "ifeval": {"prompt_level_strict_acc": 0.5, "inst_level_strict_acc": 0.6},
            },
            {
                "taboo": clem(90, 50),
                "wordle": clem(90, 5),
                "referencegame": clem(100, 60),
                "nback_verbal_3_triangulating": {"accuracy": 0.6},
                "wcst_triangulating": {"accuracy": 0.5},
            },
        ),
    ):
        paths.append(write_lm_eval_run(root / "lm_eval", args, respond, static, folder=f"folder-{name}"))
        play_args = ",".join(f"{k}={v}" for k, v in args.items()) if isinstance(args, dict) else args
        paths.append(write_play_run(root / "play", play_args, games, folder=f"dir{len(paths)}"))
    return paths


def test_fake_runs_read_back_with_models_from_config(tmp_path):
    paths = three_model_results(tmp_path)
    models = [read_run(p).model for p in paths]
    assert models == ["scripted/oracle", "scripted/oracle", "scripted/chunker", "scripted/chunker", "scripted-half", "scripted-half"]


def test_fake_scores_come_from_the_real_scorers():
    doc = gg_doc("zh", 0)
    assert gg_metrics(oracle(doc), doc)["group_f1"] == 1.0
    assert gg_metrics(chunker(doc), doc)["group_f1"] < 1.0
    half = gg_metrics(half_oracle(doc), doc)
    assert 0.5 <= half["group_f1"] < 1.0 and half["ctd"] == 0.5


def run_report(argv: list[str]) -> int:
    """``triangulate report ARGV`` through the report sub-command alone (the dispatcher's error guard
    included), so a half-built sibling sub-command cannot break these tests."""
    import argparse

    from triangulation.cli import report as report_cli
    from triangulation.cli.main import _guard

    parser = argparse.ArgumentParser(prog="triangulate")
    report_cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["report", *argv])
    return _guard(lambda: args.func(args))
