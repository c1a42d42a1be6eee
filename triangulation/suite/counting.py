"""The counts of ``triangulate suite --dry_run`` (:mod:`triangulation.suite.plan`): each cell's requests and
prompt tokens, counted from the data on this machine only (``HF_DATASETS_OFFLINE``/``HF_HUB_OFFLINE`` are forced;
nothing is downloaded), ``null`` where the data is not local (``note`` says why):

- an ``eval:`` cell: lm-eval builds the task's requests exactly as a run would (its few-shot examples,
  chat template, ``limit``); ``requests`` counts them, ``prompt_tokens`` sums the tokens of each
  request's context (plus the continuation of a log-likelihood request: the model reads both). A served
  model's cells also say ``served_requests``, the requests its ``local-completions-onepass`` client sends (a
  question's one-token choices in one: :mod:`models.onepass`), and which leaf tasks are ``one_pass`` and
  which ``per_choice`` (multi-token choices, generation).
- a ``play:`` cell: its episodes are played by the chance player (:mod:`models.chance`,
  well-formed random replies) and every request of every role is counted as the engine renders it. A
  real model's episodes can end earlier or later than chance's (a Wordle solved early, a game aborted
  on a format error), so this is an estimate of the same order, not an exact count.

Tokens are counted with the model's own tokenizer when it is local (``pretrained=`` of an ``hf`` /
``vllm`` / ``local-*`` model, its ``tokenizer=`` if given), else with the embedded SmolLM2's, and each
cell says which (``tokenizer``). The counts are also the cost model's: :func:`model_costs` makes each model's cost
once from its cells' work, counted here or by an earlier dry run, else the task table's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from models.choice_groups import served_requests
from models.default_model import GGUF_FILE, smollm2_dir
from plumbing.checks import DEFAULT_SEED
from triangulation.suite.calibration import measured_for, model_rates, with_start_ups
from triangulation.suite.cells import EvalOptions, eval_options
from triangulation.suite.estimate import ModelCost, suite_costs
from triangulation.suite.spec import Cell, ModelSpec, Suite, TaskEntry
from triangulation.suite.split import leaf_tasks as split_leaves
from triangulation.suite.task_index import leaf_tasks
from triangulation.suite.task_stats import CellWork, Counts, plan_counts, read_plan_counts, sum_counts, table_counts, table_path

SMOLLM2 = "SmolLM2-135M-Instruct (embedded)"
Tally = tuple[int | None, int | None, str]  # a cell's requests, prompt tokens, note
#: per subtask of a group cell: {leaf: {"requests", "prompt_tokens", "gen_tokens", "max_gen_tokens", "kind"}}
#: (filled by count_eval / count_play); the cell's own row sums them
Subtasks = dict[str, dict[str, Any]]
#: lm-eval's generation bound when neither the task nor the suite sets max_gen_toks (lm_eval.api.model)
LM_EVAL_MAX_GEN_TOKS = 256
#: the note of every cell when neither the model's tokenizer nor the embedded SmolLM2's is on this machine
NO_TOKENIZER = "not counted: no tokenizer on this machine (neither the model's nor the embedded SmolLM2's)"


class Tokenizers:
    """Each model's tokenizer (local files only) or the embedded SmolLM2's, loaded once each."""

    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    def for_model(self, model: ModelSpec) -> tuple[Any, str]:
        source = _tokenizer_source(model)
        if source is not None:
            tok = self._load(source)
            if tok is not None:
                return tok, source
        return self._load(SMOLLM2), SMOLLM2

    def _load(self, source: str) -> Any:
        if source not in self._cache:
            from transformers import AutoTokenizer

            try:
                if source == SMOLLM2:
                    self._cache[source] = AutoTokenizer.from_pretrained(smollm2_dir(), gguf_file=GGUF_FILE)
                else:
                    self._cache[source] = AutoTokenizer.from_pretrained(source, local_files_only=True)
            except Exception:  # noqa: BLE001  (not on this machine: the fallback says so)
                self._cache[source] = None
        return self._cache[source]


def _tokenizer_source(model: ModelSpec) -> str | None:
    if model.model is None and model.ref.given is None:
        return SMOLLM2
    args = model.ref.args  # parsed when the suite file was read
    if args.get("gguf_file"):
        return None  # a GGUF's tokenizer: SmolLM2's stands in (the only GGUF we embed)
    source = args.get("tokenizer") or args.get("pretrained") or args.get("model")
    return str(source) if source else None


def render(tok: Any, messages: list[dict[str, str]]) -> str:
    """A chat as the model reads it: its chat template when it has one, else the contents one per line."""
    if getattr(tok, "chat_template", None):
        try:
            return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception:  # noqa: BLE001  (a template refusing a role order: plain text is close enough)
            pass
    return "\n".join(m.get("content", "") for m in messages)


def n_tokens(tok: Any, text: str) -> int:
    return len(tok(text, add_special_tokens=False)["input_ids"])


def force_offline() -> None:
    """No downloads during a plan: the Hub and datasets read local caches only."""
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import datasets.config
        import huggingface_hub.constants

        datasets.config.HF_DATASETS_OFFLINE = True
        datasets.config.HF_HUB_OFFLINE = True
        huggingface_hub.constants.HF_HUB_OFFLINE = True
    except (ImportError, AttributeError):
        pass


def count_eval(task: TaskEntry, options: EvalOptions, tok: Any, subtasks: Subtasks | None = None) -> Tally:
    """Requests and prompt tokens of an lm-eval cell, built by lm-eval as a run builds them with the cell's own
    ``options`` (:func:`triangulation.suite.cells.eval_options`; per leaf task into ``subtasks``)."""
    from lm_eval.evaluator_utils import get_sample_size
    from lm_eval.tasks import get_task_dict

    if tok is None:
        return None, None, NO_TOKENIZER
    try:
        task_dict = get_task_dict(list(task.tasks), task.task_manager)
    except Exception as exc:  # noqa: BLE001  (data not local, unknown task: the plan says so and goes on)
        return None, None, f"not counted: {_one_line(exc)}"
    requests = tokens = 0
    chat = (lambda history, add_generation_prompt=True: render(tok, history)) if options.apply_chat_template else None
    for leaf in leaf_tasks(task_dict):
        if options.num_fewshot is not None:
            leaf.set_config(key="num_fewshot", value=options.num_fewshot)
        leaf.set_fewshot_seed(seed=DEFAULT_SEED if options.seed is None else options.seed)
        try:
            leaf.build_all_requests(
                limit=get_sample_size(leaf, options.limit),
                apply_chat_template=options.apply_chat_template,
                fewshot_as_multiturn=options.fewshot_as_multiturn,
                chat_template=chat,
                tokenizer_name="plan",
            )
        except Exception as exc:  # noqa: BLE001
            return None, None, f"not counted ({leaf.config.task}): {_one_line(exc)}"
        try:
            row = _count_instances(leaf, tok, options.gen_kwargs.get("max_gen_toks"))
        except Exception as exc:  # noqa: BLE001  (a tokenizer failing on a prompt: that cell is not counted)
            return None, None, f"not counted ({leaf.config.task}): {_one_line(exc)}"
        requests, tokens = requests + row["requests"], tokens + row["prompt_tokens"]
        if subtasks is not None:
            subtasks[str(leaf.config.task)] = row
    return requests, tokens, "lm-eval's requests"


def _count_instances(leaf: Any, tok: Any, max_gen: int | None = None) -> dict[str, Any]:
    """Requests, prompt tokens and generated tokens of one lm-eval task's instances (a context shared by several
    counted once), and ``served_requests``: what a served model's one-pass client sends
    (:func:`models.choice_groups.served_requests`: a question's one-token choices in one request). A generation's expected length is its gold answer's (``doc_to_target``), at most its bound
    (``max_gen``, else the request's ``max_gen_toks``, else lm-eval's default)."""
    seen: dict[str, int] = {}
    tokens = gen = bound = 0
    generates = False
    pairs: list = []
    other = 0
    for inst in leaf.instances:
        context = str(inst.arguments[0])
        if context not in seen:
            seen[context] = n_tokens(tok, context)
        tokens += seen[context]
        if inst.request_type == "loglikelihood":
            tokens += n_tokens(tok, str(inst.arguments[1]))
            pairs.append(([context], continuation_tokens(tok, context, str(inst.arguments[1]))))
        else:
            other += 1
        if inst.request_type == "generate_until":
            generates = True
            kwargs = inst.arguments[1] if len(inst.arguments) > 1 and isinstance(inst.arguments[1], dict) else {}
            most = int(max_gen or kwargs.get("max_gen_toks") or LM_EVAL_MAX_GEN_TOKS)
            target = leaf.doc_to_target(inst.doc)
            gen += min(most, n_tokens(tok, str(target))) if isinstance(target, str) else min(most, 1)
            bound += most
    kind = "generate" if generates else "loglikelihood"
    return {
        "kind": kind,
        "requests": len(leaf.instances),
        "prompt_tokens": tokens,
        "gen_tokens": gen,
        "max_gen_tokens": bound,
        "served_requests": served_requests(pairs) + other,
    }


def continuation_tokens(tok: Any, context: str, continuation: str) -> list[int]:
    """A continuation's tokens as lm-eval splits the pair (``TemplateLM._encode_pair``: the context's trailing
    spaces moved over, the whole encoded then split), read from the context's last 200 characters (the split
    never reaches further back in a tokenizer that pre-splits on whitespace; a plan's count, not a score)."""
    spaces = len(context) - len(context.rstrip())
    head, tail = context[: len(context) - spaces][-200:], context[len(context) - spaces :] + continuation
    ids = tok(head + tail, add_special_tokens=False)["input_ids"]
    return list(ids[len(tok(head, add_special_tokens=False)["input_ids"]) :])


def count_play(task: TaskEntry, tok: Any, subtasks: Subtasks | None = None) -> Tally:
    """Requests and prompt tokens of a play cell, its episodes played by the chance player (per play task
    into ``subtasks``)."""
    from models.chance import RandomLM
    from multiturn.api import expand, get_task, play_episodes, select_instances

    o = task.options
    if tok is None:
        return None, None, NO_TOKENIZER
    seed = int(o.get("seed", DEFAULT_SEED))
    tally = {"requests": 0, "tokens": 0, "gen": 0, "bound": 0}
    most = int((o.get("task_args") or {}).get("max_tokens") or (o.get("gen_kwargs") or {}).get("max_tokens") or LM_EVAL_MAX_GEN_TOKS)

    class Counting(RandomLM):
        def apply_chat_template(self, chat_history: list[dict], add_generation_prompt: bool = True) -> str:
            tally["requests"] += 1
            tally["tokens"] += n_tokens(tok, render(tok, chat_history))
            return super().apply_chat_template(chat_history, add_generation_prompt)

        def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
            replies = super().generate_until(requests, disable_tqdm)
            tally["gen"] += sum(min(most, n_tokens(tok, r)) for r in replies)  # the game's well-formed reply
            tally["bound"] += most * len(replies)
            return replies

    lm = Counting(seed=seed)
    try:
        for name in expand(list(task.tasks)):
            before = dict(tally)
            spec = get_task(name, o.get("task_args"))
            episodes = select_instances(spec.instances(seed), o.get("limit"))
            play_episodes(spec, episodes, {"player": lm}, seed=seed, gen_kwargs_override=o.get("gen_kwargs"), max_live=None, progress=False)
            if subtasks is not None:
                d = {k: tally[k] - before[k] for k in tally}
                subtasks[name] = {
                    "kind": "play",
                    "requests": d["requests"],
                    "prompt_tokens": d["tokens"],
                    "gen_tokens": d["gen"],
                    "max_gen_tokens": d["bound"],
                }
    except Exception as exc:  # noqa: BLE001  (data not local, unknown task)
        return None, None, f"not counted: {_one_line(exc)}"
    return tally["requests"], tally["tokens"], "episodes played by the chance player (an estimate)"


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def count_cells(suite: Suite, progress: Callable[[str], None] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Each model's cell rows of the plan, counted (requests, tokens, kind, ``note``, ``subtasks``, a served cell's
    one-pass share; ``command`` and ``done`` are :func:`build_plan`'s), in the suite's order; a task entry is
    counted once per tokenizer and chat template, with the data on this machine only (:func:`force_offline`)."""
    force_offline()
    tokenizers = Tokenizers()
    memo: dict[tuple[str, str, bool], tuple[Tally, Subtasks]] = {}
    out: dict[str, list[dict[str, Any]]] = {}
    for m in suite.models:
        tok, tok_name = tokenizers.for_model(m)
        rows: list[dict[str, Any]] = []
        for task in suite.tasks:
            key = (task.name, tok_name, m.apply_chat_template)
            if key not in memo:
                cell = Cell(m, task)
                if progress is not None:
                    progress(f"counting {cell.label} ({tok_name})")
                subs: Subtasks = {}
                counts = count_eval(task, eval_options(cell), tok, subs) if task.runner == "eval" else count_play(task, tok, subs)
                memo[key] = (counts, subs)
            (requests, tokens, note), subs = memo[key]
            gen = {k: sum(v.get(k) or 0 for v in subs.values()) if tokens is not None else None for k in ("gen_tokens", "max_gen_tokens")}
            rows.append(
                {
                    "name": task.name,
                    "command": None,
                    "kind": _kind(task.runner, subs),
                    "requests": requests,
                    "prompt_tokens": tokens,
                    **gen,
                    "tokenizer": tok_name if tokens is not None else None,
                    "done": None,
                    "note": note,
                    "subtasks": subs if len(subs) > 1 else {},
                    **(one_pass(subs) if m.served and requests is not None else {}),
                }
            )
        out[m.name] = rows
    return out


def entry_leaves(tasks: Sequence[TaskEntry]) -> dict[str, list[str]]:
    """Each split entry's and play group's leaves (lm-eval's index, the play registry): each its own cell's work."""
    return {t.name: split_leaves(t) for t in tasks if t.runner == "play" or t.options.get("split")}


def model_costs(
    suite: Suite,
    n_gpus: int,
    root: Path | None = None,
    counted: Mapping[str, list[dict[str, Any]]] | None = None,
    counts: Mapping[str, Mapping[str, Mapping[str, Counts]]] | None = None,
    leaves: Mapping[str, Sequence[str]] | None = None,
    split: bool | None = None,
    gpu: str | None = None,
) -> list[ModelCost]:
    """Each model's cost, made once (:func:`triangulation.suite.estimate.suite_costs`) from its cells' work: the counts of
    this dry run (``counted``: :func:`count_cells`), else ``counts`` (per model, task entry and leaf), else those of a dry
    run into ``root`` (``suite_plan.json``), else the task table's; each split entry's and play group's leaves as
    counted, else ``leaves``, else lm-eval's index and the play registry (a split entry, ``split``'s default, is one
    cell per leaf); the rates and start-ups measured by earlier runs into ``root`` (:mod:`triangulation.suite.calibration`)."""
    own = {c["name"]: list(c["subtasks"]) for c in next(iter(counted.values()), []) if c["subtasks"]} if counted else {}
    if leaves is None:
        leaves = {**entry_leaves([t for t in suite.tasks if t.name not in own]), **own}
    if counts is None and counted is not None:
        counts = plan_counts({"models": [{"name": name, "cells": rows} for name, rows in counted.items()]})
    if counts is None:
        counts = read_plan_counts(root) if root is not None else {}
    work: dict[str, list[CellWork]] = {}
    for m in suite.models:
        cells = work[m.name] = []
        for t in suite.tasks:
            parts = list(leaves.get(t.name) or [t.name])
            found = dict(counts.get(m.name, {}).get(t.name) or {})
            if set(found) != set(parts) and not (len(parts) == 1 and found):
                found = table_counts(t.name, parts, path=table_path(m.served, t.runner), limit=t.options.get("limit"))
            batch = t.options.get("batch_size") or m.batch_size
            batch = batch if isinstance(batch, int) else 0
            if split if split is not None else bool(t.options.get("split")):
                cells += [CellWork(f"{t.name}/{leaf}", t.name, t.runner, c, batch) for leaf, c in found.items()]
            else:
                cells.append(CellWork(t.name, t.name, t.runner, sum_counts(list(found.values())), batch))
    keys = {m.name: m.key for m in suite.models}
    measured = measured_for(keys, root)
    work = with_start_ups(work, measured)
    rates = model_rates(suite.models, measured, gpu)
    return suite_costs(suite.models, work, rates, measured, n_gpus)


def _kind(runner: str, subs: Subtasks) -> str:
    if runner == "play":
        return "play"
    return "generate" if any(v.get("kind") == "generate" for v in subs.values()) else "loglikelihood"


def one_pass(subs: Subtasks) -> dict[str, Any]:
    """A served cell's ``served_requests`` (what ``local-completions-onepass`` sends) and which of its leaf tasks
    are scored one request per question (``one_pass``) and which per choice or by generation (``per_choice``)."""
    served = {leaf: s.get("served_requests", s["requests"]) for leaf, s in subs.items()}
    faster = sorted(leaf for leaf, n in served.items() if n < subs[leaf]["requests"])
    return {"served_requests": sum(served.values()), "one_pass": faster, "per_choice": sorted(set(subs) - set(faster))}
