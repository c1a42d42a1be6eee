"""WCST and LNT as the Triangulating paper (seed 003) ran them: ``wcst_triangulating``, ``lnt_triangulating``.

Seed 003's port (``llm_cognitive_flexibility_original_task.py`` in momentino/playpen_eval) differs from
Kennedy & Nowak's protocol that :mod:`multiturn.games.flexibility` follows in one point: the history
only ever grows by *user* messages. Each trial appends its prompt; the model's reply is read and
dropped; when the reply parses, the feedback ("Correct!" / "Incorrect!") is appended as another user
message and no reply to it is asked for; an unparsed reply leaves the trial's prompt in the history
with no feedback, so the next prompt follows it directly. One model call per trial.

Everything else is seed 003's App. E settings and the stimuli, rules and parse rules of
:mod:`multiturn.games.flexibility`: "we ran each subtask 8 times with 25 trials each, and computed the
average of the accuracy obtained in each run. In this case, the accuracy was computed only on the
trials for which response parsing was successful. We then averaged the accuracy obtained on both
subtasks to compute the final score" (App. E.2.1); "we have applied ... 0.7 to
LLM-Cognitive-Flexibility" (App. E.3). ``accuracy`` is that text rule (correct / parsed trials).

Not copied from their code, on purpose (FIDELITY.md): their WCST divides by all 25 trials (the text
says parsed ones), and their LNT loop appends a result after *every* trial and returns after the first
run (``results.append`` inside the trial loop, ``return`` inside the run loop), so their LNT score is
the mean of one run's running accuracies; their WCST checks the answer after switching the rule
(``Incorrect!`` after every 6th correct answer); here feedback is always right, as in ``wcst``/``lnt``.

Group ``cognitive_flexibility_triangulating`` = the mean of the two parsed-only accuracies (App. E.2.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from multiturn.game import DRY_RUN_COUNT, CostHints, Request
from multiturn.games.flexibility import SwitchingGame, cognitive_flexibility
from multiturn.games.lnt import LNTGame, LNTTask
from multiturn.games.wcst import WCSTGame, WCSTTask
from multiturn.registry import register, register_group

MEMBERS: tuple[str, str] = ("wcst_triangulating", "lnt_triangulating")


class UserOnlyHistory(SwitchingGame):
    """Seed 003's loop: prompt (user), reply read and dropped, feedback (user) when it parsed."""

    def __init__(self, instance: Mapping[str, Any], seed: int):
        super().__init__(instance, seed)
        self._shown = False

    @property
    def done(self) -> bool:
        return self.trial >= self.n_trials

    def next_request(self) -> Request | None:
        if self.done:
            return None
        if not self._shown:  # idempotent: asking twice does not show the trial twice
            self.history.append({"role": "user", "content": self.prompt(self.instance["trials"][self.trial])})
            self._shown = True
        return Request(messages=list(self.history))

    def on_reply(self, reply: str) -> None:
        entry = self.score_trial(reply)
        if entry["feedback"] is not None:
            self.history.append({"role": "user", "content": entry["feedback"]})
        self._shown = False


class WCSTTriangulatingGame(UserOnlyHistory, WCSTGame):
    pass


class LNTTriangulatingGame(UserOnlyHistory, LNTGame):
    pass


def _protocol(cfg: dict[str, Any]) -> dict[str, Any]:
    cfg["protocol"] = "seed 003 (playpen_eval): user-only history, no reply to the feedback"
    return cfg


#: the flexibility games' replies, for the cost model
_CARD_REPLY = "expected reply 10 tokens (a card choice), at most 100: assumed"


class WCSTTriangulatingTask(WCSTTask):
    game_class = WCSTTriangulatingGame
    cost = CostHints(8, 200, 205_564, 10, 100, f"{DRY_RUN_COUNT}; {_CARD_REPLY}")

    def config(self) -> dict[str, Any]:
        return _protocol(super().config())


class LNTTriangulatingTask(LNTTask):
    game_class = LNTTriangulatingGame
    cost = CostHints(8, 200, 79_054, 10, 100, f"{DRY_RUN_COUNT}; {_CARD_REPLY}")

    def config(self) -> dict[str, Any]:
        return _protocol(super().config())


register("wcst_triangulating")(WCSTTriangulatingTask)
register("lnt_triangulating")(LNTTriangulatingTask)
register_group("cognitive_flexibility_triangulating", list(MEMBERS), aggregate=partial(cognitive_flexibility, members=MEMBERS))
