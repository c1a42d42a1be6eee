"""Log a ``triangulate play`` run where lm-eval users look: Weights & Biases and the Hugging Face Hub,
through lm-eval's own loggers (``--wandb_args``, ``--wandb_config_args``, ``--hf_hub_log_args`` as in ``lm_eval``).

- W&B: :class:`lm_eval.loggers.WandbLogger` logs the results JSON (summary metrics, the results table,
  the results artifact) exactly as for an lm-eval run, plus one ``<task>_episodes`` table per task
  (id, failed, scores, turns, transcript as JSON).
- Hub: :class:`lm_eval.loggers.EvaluationTracker` pushes the results JSON and, with
  ``push_samples_to_hub=True``, every episode as a sample row (its transcript as the response).
  It writes its copies to a temporary folder (the run's own files are already in ``--output_path``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from typing import Any

EPISODE_COLUMNS = ["id", "failed", "scores", "turns", "transcript"]


def episode_row(record: Mapping[str, Any]) -> list[Any]:
    transcript = record.get("transcript") or []
    return [
        str(record.get("id", "")),
        bool(record.get("failed")),
        json.dumps(record.get("scores") or {}, ensure_ascii=False, default=str),
        len(transcript),
        json.dumps(transcript, ensure_ascii=False, default=str),
    ]


def log_wandb(
    payload: Mapping[str, Any],
    episodes: Mapping[str, list[Mapping[str, Any]]],
    init_args: Mapping[str, Any],
    config_args: Mapping[str, Any] | None = None,
) -> None:
    """Results through lm-eval's WandbLogger, episodes as one W&B table per task; finishes the run."""
    import wandb
    from lm_eval.loggers import WandbLogger

    logger = WandbLogger(dict(init_args), dict(config_args or {}))
    logger.post_init(dict(payload))
    logger.log_eval_result()
    for task, records in episodes.items():
        table = wandb.Table(columns=EPISODE_COLUMNS, data=[episode_row(r) for r in records])
        logger.run.log({f"{task}_episodes": table})
    logger.run.finish()


def episode_sample(record: Mapping[str, Any]) -> dict[str, Any]:
    """An episode in lm-eval's sample shape (what EvaluationTracker.save_results_samples writes and pushes)."""
    transcript = json.dumps(record.get("transcript") or [], ensure_ascii=False, default=str)
    return {
        "doc_id": str(record.get("id", "")),
        "doc": record.get("instance") or {},
        "target": "",
        "arguments": [[str(record.get("id", ""))]],
        "resps": [[transcript]],
        "filtered_resps": [transcript],
        "failed": bool(record.get("failed")),
        **{k: v for k, v in (record.get("scores") or {}).items()},
    }


def log_hub(
    payload: Mapping[str, Any], episodes: Mapping[str, list[Mapping[str, Any]]], hub_args: Mapping[str, Any], model: str, model_args: str
) -> None:
    """Results (and, with ``push_samples_to_hub``, episodes) to the Hub through lm-eval's EvaluationTracker."""
    from lm_eval.loggers import EvaluationTracker

    hub_args = dict(hub_args)
    hub_args.setdefault("token", os.environ.get("HF_TOKEN"))  # as lm_eval's CLI does
    with tempfile.TemporaryDirectory(prefix="triangulate-hub-") as folder:
        tracker = EvaluationTracker(**{**hub_args, "output_path": folder})
        tracker.general_config_tracker.log_experiment_args(
            model_source=model, model_args=model_args, system_instruction=None, chat_template=None, fewshot_as_multiturn=False
        )
        tracker.save_results_aggregated(results=json.loads(json.dumps(payload, default=str)), samples=None)
        if tracker.push_samples_to_hub:
            for task, records in episodes.items():
                tracker.save_results_samples(task_name=task, samples=[episode_sample(r) for r in records])
        if tracker.push_results_to_hub or tracker.push_samples_to_hub:
            tracker.recreate_metadata_card()
