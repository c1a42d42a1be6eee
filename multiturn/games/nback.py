"""n-back working-memory tests (Gong et al., AAAI 2024, "Working Memory Capacity of ChatGPT").

Protocol (the built ``nback`` dataset, :mod:`datasets_build.nback`: Daniel-Gong/ChatGPT-WM data and
the notebooks' system prompts): a system prompt, then one stimulus per user turn (a consonant, or
the notebook's 3x3 grid string); the model answers ``m`` (match with the stimulus n back) or
``-``; its replies stay in the history (as the notebook keeps them: a reply other than exactly ``m``/``-`` as its
first character, :func:`history_turn`); temperature 1. Base set: 50 blocks x 24 trials, 8 matches.

Metrics per block, averaged over blocks (Gong et al., Sec. "Metrics"): hit rate (``m`` on match
trials), false-alarm rate (any wrong answer on a non-match trial, an invalid one included, as their
notebook counts it; ``false_alarm_rate_valid`` / ``dprime_valid``: only ``m``, our variant), accuracy (right answers / trials), and
``dprime`` = z(hit rate) - z(false-alarm rate), signed, with both rates clipped to [0.01, 0.99]
(Gong et al., README "Metrics": "d' (detection sensitivity) is calculated as the z score of hit rate
minus the z score of false alarm rate. In the case where the hit rate or false alarm rate is equal
to either 0 or 1, they will be adjusted by 0.01"). A model that says "m" exactly on the non-matches
scores -4.65, a perfect one +4.65. ``abs_dprime_notebook`` = |z(H) - z(FA)| is what Gong et al.'s
analysis notebooks compute (``np.abs(norm.ppf(...) - norm.ppf(...))`` in ``experiments/verbal.ipynb``);
it is kept, under a name of its own, only to compare with their figures: it cannot tell the
perfect player from the inverted one.

Parse rule (``nback_*``, the default ``--task_args parse=notebook``): Gong et al.'s notebook
(``experiments/verbal.ipynb`` cells 5-7, ChatGPT-WM at 1c1467b): a reply that is exactly ``m`` or ``-``
is that answer; otherwise ("Rule violation! Extracting the first letter of the response.") its first
character decides, so ``m (match)`` is an ``m`` and ``- no`` a ``-``. Where that character is neither,
the notebook stops with ``ValueError``; here the trial is an invalid answer: wrong (a miss on a match
trial, a false alarm on the others, as in the notebook), counted in ``parse_rate``. No re-prompt.
``parse=strict`` (our variant, the rule before issue 31): the reply stripped of whitespace, quotes,
backticks and a final period and lower-cased must be exactly ``m`` or ``-``.

``nback_verbal_3_triangulating`` is the Triangulating paper's port (seed 003, App. E.2.1 and F: "Verbal
(Base) N-3" only): the model's replies are not appended (the history holds the system prompt and
the stimuli only) and each trial is scored by exact match of the reply (``correct += answer ==
t["target"]`` in playpen_eval ``frameworks/playpen_eval_benchmarks/tasks/wm/wm_task.py`` at 2deaf5a; we
strip surrounding whitespace): the notebook's first-character rule does not apply to it, so seed 003's
3-back scores are unaffected by issue 31.

Temperature: 1 by default, as Gong et al. sampled and seed 003 App. E.3 states ("we have applied a
temperature of 1 to WM"). The authors' code switched working memory to greedy decoding on 2025-03-13
(momentino/playpen_eval 91059d1b6378, "chore: changed WM temperature": ``do_sample: False``, ``#temperature:
1``; the ``wm/greedy`` task folder at 2deaf5a): ``--task_args greedy=true`` plays that setting.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

from datasets_build.nback_names import KINDS, MATCH, NON_MATCH
from multiturn.game import DRY_RUN_COUNT, CostHints, EpisodeSummary, Game, Request, TaskSpec, TurnView
from multiturn.registry import register, register_group
from plumbing.errors import UserError

CLIP = (0.01, 0.99)
#: Gong et al. sample at temperature 1; replies are one symbol, so a short cap keeps runs cheap.
GEN_KWARGS: dict[str, Any] = {"temperature": 1.0, "do_sample": True, "max_gen_toks": 16}
#: ``--task_args greedy=true``: the authors' code after 2025-03-13 (playpen_eval 91059d1, ``do_sample: False``)
GREEDY_GEN_KWARGS: dict[str, Any] = {"temperature": 0.0, "do_sample": False, "max_gen_toks": 16}


# ---------------------------------------------------------------- parsing and scoring (pure)


def parse_response(reply: str) -> str | None:
    """The strict rule (``--task_args parse=strict``, our variant): 'm' or '-' when the normalised reply is exactly
    one of them, else None (invalid)."""
    text = reply.strip().strip("`'\"").strip()
    if text.endswith("."):
        text = text[:-1].strip()
    text = text.lower()
    return text if text in (MATCH, NON_MATCH) else None


def parse_notebook(reply: str) -> str | None:
    """Gong et al.'s notebook rule (``experiments/verbal.ipynb``): exactly 'm' or '-' is that answer, else the
    first character when it is 'm' or '-' ("Extracting the first letter of the response"), else None (the
    notebook raises ``ValueError`` there)."""
    if reply in (MATCH, NON_MATCH):
        return reply
    first = reply[:1]
    return first if first in (MATCH, NON_MATCH) else None


def parse_exact(reply: str) -> str | None:
    """The Triangulating port's rule: the stripped reply, kept only when it is exactly 'm' or '-'."""
    text = reply.strip()
    return text if text in (MATCH, NON_MATCH) else None


def history_turn(reply: str, rule: str) -> str:
    """The assistant turn kept in the history. Gong et al.'s notebook (``experiments/verbal.ipynb`` cells 5-7,
    ChatGPT-WM 1c1467b) appends ``chat_response`` after "Rule violation! Extracting the first letter of the
    response." set ``chat_response = chat_response[0]``: a reply other than exactly ``m`` / ``-`` enters the
    history as its first character. So with ``parse=notebook`` (``nback_*``); ``strict`` (our variant) and
    ``exact`` keep the whole reply (seed 003's port keeps none: ``keep_replies=False``)."""
    if rule != "notebook" or reply in (MATCH, NON_MATCH):
        return reply
    return reply[:1]


#: parse rules by name: the notebook's (``nback_*``), ours before issue 31, seed 003's port (exact match)
PARSERS = {"notebook": parse_notebook, "strict": parse_response, "exact": parse_exact}


def clip_rate(rate: float, bounds: tuple[float, float] = CLIP) -> float:
    return min(max(rate, bounds[0]), bounds[1])


def dprime(hit_rate: float, false_alarm_rate: float) -> float:
    """d' = z(H) - z(FA), rates clipped to [0.01, 0.99] (Gong et al. 2024, README "Metrics": "the z score
    of hit rate minus the z score of false alarm rate", rates of 0 or 1 "adjusted by 0.01"); negative
    when false alarms outnumber hits."""
    z = NormalDist().inv_cdf
    return z(clip_rate(hit_rate)) - z(clip_rate(false_alarm_rate))


def abs_dprime_notebook(hit_rate: float, false_alarm_rate: float) -> float:
    """|z(H) - z(FA)|, as Gong et al.'s analysis notebooks compute it (``np.abs``); not a sensitivity
    measure (H = 0, FA = 1 scores like a perfect player): only for comparing with their figures."""
    return abs(dprime(hit_rate, false_alarm_rate))


def score_trials(targets: Sequence[str], responses: Sequence[str | None]) -> dict[str, float]:
    """Block metrics from targets and parsed responses (None = invalid answer).

    Gong et al.'s notebook (``compute_summary_stats`` in ``experiments/verbal.ipynb``): a hit is a
    correct answer on a target trial, and on the other trials "``else: total_lures += 1; if not
    trial['correct']: false_alarms += 1``": ANY wrong answer on a non-target trial, an invalid reply
    included, is a false alarm. ``false_alarm_rate`` and ``dprime`` follow that rule;
    ``false_alarm_rate_valid`` / ``dprime_valid`` (our variant) count only an explicit ``m`` as a false
    alarm, so an invalid reply is neither a hit nor a false alarm."""
    if len(targets) != len(responses) or not targets:
        raise ValueError("targets and responses must be non-empty and of equal length")
    matches = [r for t, r in zip(targets, responses) if t == MATCH]
    others = [(t, r) for t, r in zip(targets, responses) if t != MATCH]
    both = bool(matches and others)
    hit_rate = sum(r == MATCH for r in matches) / len(matches) if matches else float("nan")
    fa_rate = sum(r != t for t, r in others) / len(others) if others else float("nan")
    fa_valid = sum(r == MATCH for _, r in others) / len(others) if others else float("nan")
    return {
        "accuracy": sum(t == r for t, r in zip(targets, responses)) / len(targets),
        "hit_rate": hit_rate,
        "false_alarm_rate": fa_rate,
        "dprime": dprime(hit_rate, fa_rate) if both else float("nan"),
        "abs_dprime_notebook": abs_dprime_notebook(hit_rate, fa_rate) if both else float("nan"),
        "false_alarm_rate_valid": fa_valid,
        "dprime_valid": dprime(hit_rate, fa_valid) if both else float("nan"),
        "parse_rate": sum(r is not None for r in responses) / len(responses),
    }


# ---------------------------------------------------------------- the game


RULE_TEXT = {
    "notebook": "'m' or '-', or a reply whose first character is one of them (Gong et al.'s notebook)",
    "strict": "'m' or '-' (spaces, quotes, backticks and a final period ignored)",
    "exact": "exactly 'm' or '-'",
}


class NBackGame(Game):
    """One block: a system prompt, then one stimulus per turn."""

    def __init__(self, instance: Mapping[str, Any], *, keep_replies: bool = True, parse: str = "notebook"):
        super().__init__(instance)
        self.keep_replies = keep_replies
        self.rule = parse
        self.parse = PARSERS[parse]
        self.history: list[dict[str, str]] = [{"role": "system", "content": self.instance["system_prompt"]}]
        self.trial = 0
        self._shown = False

    @property
    def n_trials(self) -> int:
        return len(self.instance["targets"])

    @property
    def done(self) -> bool:
        return self.trial >= self.n_trials

    def next_request(self) -> Request | None:
        if self.done:
            return None
        if not self._shown:  # idempotent: asking twice does not show the stimulus twice
            self.history.append({"role": "user", "content": self.instance["messages"][self.trial]})
            self._shown = True
        return Request(messages=list(self.history))

    def on_reply(self, reply: str) -> None:
        if self.keep_replies:
            self.history.append({"role": "assistant", "content": history_turn(reply, self.rule)})
        target = self.instance["targets"][self.trial]
        parsed = self.parse(reply)
        self.transcript.append(
            {
                "trial": self.trial,
                "stimulus": self.instance["stimuli"][self.trial],
                "target": target,
                "response": reply,
                "parsed": parsed,
                "correct": parsed == target,
            }
        )
        self._shown = False
        self.trial += 1

    def scores(self) -> dict[str, float]:
        return score_trials(self.instance["targets"], [t["parsed"] for t in self.transcript])

    def record(self) -> dict[str, Any]:
        return {"trials": [{k: t[k] for k in ("stimulus", "target", "parsed", "correct")} for t in self.transcript]}

    def reply_view(self, request: Request, reply: str) -> TurnView:
        t = self.transcript[-1]
        rule = RULE_TEXT[self.rule]
        why = f"trial {t['trial'] + 1}: letter {t['stimulus']}, expected {t['target']}"
        if t["parsed"] is None:
            why = f"unparsed: the parser expects {rule}; {why}"
        return TurnView(request.role, reply, reading=t["parsed"], verdict=bool(t["correct"]), why=why)


class NBackTask(TaskSpec):
    """``nback_<kind>_<n>``: Gong et al.'s base blocks for one variant."""

    gen_kwargs = dict(GEN_KWARGS)
    version = 1.0

    def __init__(
        self,
        kind: str,
        n: int,
        *,
        keep_replies: bool = True,
        parse: str = "notebook",
        greedy: bool = False,
    ):
        """``parse`` (task option): ``notebook`` (Gong et al.'s rule, default), ``strict`` (our variant) or
        ``exact`` (seed 003's port); ``greedy`` (task option): the authors' code's greedy decoding instead of
        the paper's temperature 1."""
        if kind not in KINDS or n not in (1, 2, 3):
            raise ValueError(f"no n-back variant {kind} {n}")
        if parse not in PARSERS:
            raise UserError(f"--task_args parse: one of {', '.join(PARSERS)}, got {parse!r}")
        if not isinstance(greedy, bool):
            raise UserError(f"--task_args greedy: true or false, got {greedy!r}")
        self.kind, self.n = kind, n
        self.keep_replies, self.parse = keep_replies, parse
        self.gen_kwargs = dict(GREEDY_GEN_KWARGS if greedy else GEN_KWARGS)

    def instances(self, seed: int) -> list[dict[str, Any]]:
        """The 50 blocks of the built ``nback`` dataset in upstream order (stimuli are fixed data; the seed
        only drives sampling)."""
        from datasets_build.nback import load_nback  # the data loader (datasets) only when episodes are read

        return [{"id": f"{self.name}_block{row['block']:02d}", **row} for row in load_nback(self.kind, self.n)]

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return NBackGame(instance, keep_replies=self.keep_replies, parse=self.parse)

    def summary(self, record: Mapping[str, Any]) -> EpisodeSummary:
        """Trials right, hits and false alarms; the block's stimuli, targets and parsed replies above."""
        instance, trials = record.get("instance") or {}, list(record.get("trials") or record.get("transcript") or [])
        right = sum(bool(t.get("correct")) for t in trials)
        targets = [t.get("target") for t in trials]
        hits = sum(1 for t in trials if t.get("target") == MATCH and t.get("parsed") == MATCH)
        fas = sum(1 for t in trials if t.get("target") != MATCH and t.get("parsed") == MATCH)
        why = (
            f"{right} of {len(trials)} trials answered as expected (m when the letter equals the one "
            f"{instance.get('n', 'n')} back, - otherwise); hits {hits} of {targets.count(MATCH)} targets, "
            f"false alarms {fas} of {len(targets) - targets.count(MATCH)} non-targets."
        )
        facts = [
            ("stimuli", str(instance.get("stimuli", ""))),
            ("targets", str(instance.get("targets", ""))),
            ("replies", "".join(str(t.get("parsed") or "?") for t in trials)),
        ]
        return EpisodeSummary(why, facts, "the block", target="\n".join(f"{k}: {v}" for k, v in facts[:2]))

    def chance_reply(self, request: Request, rng: random.Random) -> str:
        """A fair coin between the two answers."""
        return rng.choice([MATCH, NON_MATCH])

    def higher_is_better(self) -> dict[str, bool]:
        return {
            "accuracy": True,
            "hit_rate": True,
            "false_alarm_rate": False,
            "dprime": True,
            "abs_dprime_notebook": True,
            "false_alarm_rate_valid": False,
            "dprime_valid": True,
            "parse_rate": True,
        }

    def config(self) -> dict[str, Any]:
        cfg = super().config()
        cfg.update(
            kind=self.kind,
            n=self.n,
            keep_replies=self.keep_replies,
            scoring=f"parse={self.parse}: {RULE_TEXT[self.parse]}",
            source="Daniel-Gong/ChatGPT-WM datasets (base set, 50 blocks x 24 trials)",
        )
        return cfg


def _factory(kind: str, n: int, **fixed):
    """A task factory whose keyword-only parameters are the task options (``--task_args parse=..., greedy=...``)."""

    def make(*, parse: str = fixed.pop("parse", "notebook"), greedy: bool = False) -> NBackTask:
        return NBackTask(kind, n, parse=parse, greedy=greedy, **fixed)

    return make


for _kind in KINDS:
    for _n in (1, 2, 3):
        register(f"nback_{_kind}_{_n}")(_factory(_kind, _n))


@register("nback_verbal_3_triangulating")
class NBackTriangulatingTask(NBackTask):
    """The verbal 3-back as seed 003 ran it: its exact-match parse, the model's replies dropped from the history."""

    cost = CostHints(50, 1_200, 229_200, 3, 10, f"{DRY_RUN_COUNT}; expected reply 3 tokens (one letter or 'no'), at most 10: assumed")

    def __init__(self, *, parse: str = "exact", greedy: bool = False):
        super().__init__("verbal", 3, keep_replies=False, parse=parse, greedy=greedy)


register_group("nback_verbal", [f"nback_verbal_{n}" for n in (1, 2, 3)])
register_group("nback_spatial", [f"nback_spatial_{n}" for n in (1, 2, 3)])
register_group("nback", [f"nback_{k}_{n}" for k in KINDS for n in (1, 2, 3)])
