"""Who judges seed 001's categorical reasoning in the report (Sec. 4.3.2, Sec. 6.1, Table 6, Figure 7).

The paper: "we can evaluate whether the reasoning in its response is semantically analogous to the gold
NYT Connections-provided category name. The decision of semantic equivalence ... is done manually by a
human judge." We have no human, so the report uses one of two stand-ins, and names it:

- :class:`LLMJudge` (``triangulate report --judge_model M --judge_model_args ...``, as ``triangulate
  play`` does for SPLAT's judge): any lm-eval model answers our prompt
  (``datasets_build/templates/connections/reasoning_judge.json``) Yes or No for each correctly clustered
  group, shown the group's words, the gold name, the model's name for the group and its whole response
  (as the human judged "the reasoning in its response"; models often name groups in their reasoning
  and answer with placeholders such as ``Category1``), greedy, one batched ``generate_until`` call;
- :class:`FastTextProxy` (the default when fastText vectors are installed): seed 000's Topic Achieved
  rule on the model's group name, the same proxy as lm-eval's ``category_reasoning`` metric.

Without either, the report shows clustering-only shares, labelled as not being Figure 7.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from custom_metrics.connections import parse_yes_no
from datasets_build.prompts import reasoning_judge_prompt
from models.loading import load_lm, resolve_model
from models.ref import ModelRef
from plumbing.errors import UserError

#: greedy and short: the judge answers one word
JUDGE_GEN_KWARGS: dict[str, Any] = {"max_gen_toks": 16, "do_sample": False, "temperature": 0.0, "until": ["\n\n"]}


class FastTextProxy:
    """Topic Achieved (fastText cosine >= 0.3 and closest among the game's gold names) standing in for the
    human judge; a :data:`custom_metrics.connections.ReasoningCheck` over one game's names."""

    def __init__(self, scorer: Any):
        self.scorer = scorer
        self.name = "fastText proxy (Topic Achieved rule of seed 000), not the paper's human judge"

    def __call__(self, names: Sequence[str | None], topics: Sequence[str]) -> list[bool]:
        return [bool(v) for v in self.scorer.achieved(list(names), list(topics))]


@dataclass(frozen=True)
class GroupToJudge:
    """One correctly clustered group: what the judge is shown."""

    predicted: str | None  # the model's name for the group (None: it gave none, or a placeholder)
    gold: str
    words: tuple[str, ...]
    response: str


class LLMJudge:
    """An lm-eval model asked, per correctly clustered group, whether the model's reasoning for it is
    semantically analogous to the gold category name; Yes/No verdicts cached per :class:`GroupToJudge`."""

    def __init__(self, lm: Any, model: str, gen_kwargs: dict[str, Any] | None = None, loader: Any = None):
        """``lm`` is an lm-eval model, or None with ``loader`` (called once, at the first question)."""
        self.lm = lm
        self.loader = loader
        self.name = f"LLM judge {model}, our stand-in for the paper's human judge"
        self.gen_kwargs = dict(gen_kwargs or JUDGE_GEN_KWARGS)
        self.verdicts: dict[GroupToJudge, bool] = {}
        self.unparsed = 0

    def judge_groups(self, items: Iterable[GroupToJudge]) -> list[bool]:
        """Verdicts for ``items``; every new one is asked in one batched call (retried on backend errors).
        A reply with no Yes/No counts as not analogous (:attr:`unparsed` counts them)."""
        from models.retry import BackendFailure, RetryPolicy, call_backend

        items = list(items)
        todo = list(dict.fromkeys(i for i in items if i not in self.verdicts))
        if todo:
            if self.lm is None:
                self.lm = self.loader()  # only a report with Connections samples loads the judge
            prompts = [
                self.lm.apply_chat_template([{"role": "user", "content": reasoning_judge_prompt(i.predicted, i.gold, i.words, i.response)}])
                for i in todo
            ]
            replies = call_backend(self.lm, prompts, self.gen_kwargs, RetryPolicy())
            failed = sum(isinstance(r, BackendFailure) for r in replies)
            if failed:
                raise UserError(f"--judge_model failed on {failed} of {len(todo)} reasoning checks; run the report again")
            for item, reply in zip(todo, replies):
                verdict = parse_yes_no(str(reply))
                self.unparsed += verdict is None
                self.verdicts[item] = bool(verdict)
        return [self.verdicts[i] for i in items]


def load_llm_judge(model: str | None, model_args: Any = None) -> LLMJudge:
    """``--judge_model`` (an lm-eval registry name; None with ``--judge_model_args`` = SmolLM2), loaded
    when the first reasoning check is asked."""
    return LLMJudge(None, model or "SmolLM2 (embedded)", loader=lambda: load_lm(resolve_model(ModelRef.parse(model, model_args))))


def default_judge() -> FastTextProxy | None:
    """The fastText proxy when English vectors are installed, else None."""
    from custom_metrics.topics import get_topic_scorer

    scorer = get_topic_scorer("en")
    return FastTextProxy(scorer) if scorer is not None else None
