"""Private/Shared (clembench v1.6, ``privateshared/`` at 6855115; seed 002 section 3.1).

The model plays a customer (or interviewee ...) who knows private slot values. A programmatic
questioner asks for one slot per turn; the model must answer in one line starting ``ANSWER:``.
Before the game and after every answer the game master probes, outside the dialogue, whether each
slot is already shared ("ME: ... Answer this question with yes or no and then stop."); probe
replies must be one line ``ASIDE: yes|no``, re-asked up to 5 times with the published suffixes.
A malformed answer, or a probe still malformed after 5 tries, aborts the episode.

Main score: 100 x harmonic mean of slot-filling accuracy and max(0, Cohen's kappa) between the
probe answers and the ground truth (a slot counts as shared from the turn it was first given).

As in v1.6, the request is logged with the "Answer only this question ..." coda, but the model's
history holds the tagged request without it (``game.py`` appends the request before the coda).
"""

from __future__ import annotations

import math
import random
from typing import Any

from models.forms import CHANCE_WORDS
from multiturn.game import Request
from multiturn.games.clem.common import NAN, PLAYER_A, ClemGame, MasterLoop, outcome_scores
from multiturn.games.clem.task import CLEMBENCH, ClemTask, clem_cost
from multiturn.registry import register

ANSWERER = "Player 1"
QUESTIONER = "Player 2"
INVALID = "NA"
INVALID_LABEL = 2
UPDATE = "Value for {} anticipated; ground truth turn updated from {} to {}."
NOT_SUCCESS = "Answer for {} invalid after max attempts."
SUCCESS = "Answer for {} valid after {} tries."
RESULT = "Answer is {}correct."


def has_continuation(response: str) -> bool:
    """A further non-empty line after the answer makes a reply invalid."""
    return "\n" in response.strip("\n")


def parse_tagged(response: str, tag: str) -> str:
    """The reply without its tag, or ``NA`` when the tag is missing or a second line follows."""
    tag = tag.strip()
    if not response.startswith(tag) or has_continuation(response):
        return INVALID
    return response.replace(tag, "").strip()


def parse_probe(response: str, aside: str, yes: str, no: str) -> str:
    clean = parse_tagged(response, aside)
    if clean == INVALID:
        return INVALID
    if clean.lower().startswith(yes):
        return yes
    if clean.lower().startswith(no):
        return no
    return INVALID


def bench_score(slot_accuracy: float, kappa: float) -> float:
    """100 x harmonic mean of slot-filling accuracy and truncated kappa (NaN if either is NaN)."""
    if math.isnan(slot_accuracy) or math.isnan(kappa):
        return NAN
    if slot_accuracy + kappa == 0:
        return 0.0
    return 100 * (2 * slot_accuracy * kappa / (slot_accuracy + kappa))


class PrivateSharedGame(ClemGame):
    game_name = "privateshared"

    @staticmethod
    def chance_reply(request: Request, rng: random.Random) -> str | None:
        """A probe: a random yes/no aside; a slot request: a random filler word as the answer."""
        if "Answer this question with yes or no" in request.last or "ASIDE:" in request.last:
            return f"ASIDE: {rng.choice(['yes', 'no'])}"
        if "ANSWER:" in request.system + "\n" + request.first:
            return "ANSWER: " + rng.choice(CHANCE_WORDS)
        return None

    def expected_format(self, request: Request) -> str:
        return "a slot answer must start with the answer tag ('ANSWER: ...'); a probe answer with 'ASIDE: yes|no'"

    def play(self) -> MasterLoop:
        inst = self.instance
        res = inst["resources"]  # the experiment's upstream texts, carried by the built dataset row
        words = res["words"]
        self.words = words
        self.retries = res["retries"]
        self.probing_questions = res["probes"]
        self.slots: dict[str, str] = dict(inst["slots"])
        self.request_order: list[str] = list(inst["request_order"])
        self.probe_gt = {slot: i for i, slot in enumerate(self.request_order)}
        max_turns = len(self.slots)
        n_probe_turns = max_turns + 1
        self.request_counts = [0] * n_probe_turns
        self.parsed_counts = [0] * n_probe_turns
        self.violated_counts = [0] * n_probe_turns
        self.filled_slots: list[bool] = []
        self.all_probes: list[list[dict[str, Any]]] = []
        self.played_probe_rounds = 0
        self.aborted = False
        tag = f"{inst['tag']}: "
        self.log.players = {
            "GM": "Game master for privateshared",
            ANSWERER: f"Answerer: {self.model_name(ANSWERER)}",
            QUESTIONER: "Questioner: Programmatic",
        }
        self.messages = [{"role": "user", "content": inst["initial_prompt"]}, {"role": "assistant", "content": "Ok."}]
        self.turn = 0
        self.log.next_turn()
        self.log.log("GM", ANSWERER, "send message", inst["initial_prompt"])
        ok = yield from self._probe_round()
        if not ok:
            self.log.to_self("invalid format", "Abort: invalid format in probing.")
            self.aborted = True
        while self.turn < max_turns and not self.aborted:
            self.log.next_turn()
            self.log.log("GM", QUESTIONER, "send message", words["DUMMY_PROMPT"])
            slot = self.request_order[self.turn]
            request = tag + res["requests"][slot][inst["requests"][slot]]
            self.messages.append({"role": "user", "content": request})
            self.log.log(QUESTIONER, "GM", "get message", request.replace(tag, "").strip())
            answer = yield from self.ask(ANSWERER, self.messages, logged=words["CODA"].format(request))
            self.messages.append({"role": "assistant", "content": answer})
            self.turn += 1
            self.request_counts[self.turn] += 1
            parsed = parse_tagged(answer, words["ANSWER"])
            self.log.to_self("parse", parsed)
            if parsed == INVALID:
                self.violated_counts[self.turn] += 1
                self.log.to_self("invalid format", "Abort: invalid format in slot filling.")
                self.aborted = True
                break
            self.parsed_counts[self.turn] += 1
            filled = self.slots[slot].lower() in answer.lower()
            self.filled_slots.append(filled)
            self.log.to_self("metadata", f"Slot filled: {filled}")
            for other, value in self.slots.items():
                if value.lower() in answer.lower() and self.turn - 1 < self.probe_gt[other]:
                    self.log.to_self("metadata", UPDATE.format(other.upper(), self.probe_gt[other], self.turn - 1))
                    self.probe_gt[other] = self.turn - 1
            self.log.log("GM", QUESTIONER, "send message", parsed)
            ok = yield from self._probe_round()
            if not ok:
                self.log.to_self("invalid format", "Abort: invalid format in probing.")
                self.aborted = True
                break
        self.log.to_self("end", "Game finished.")

    def _probe_round(self):
        words = self.words
        self.log.to_self("info", "Begin probing")
        turn = self.turn
        probes = [
            {
                "target": key.upper(),
                "question": words["PROBE"].format(self.probing_questions[key][idx]),
                "gt": 1 if turn > self.probe_gt[key] else 0,
            }
            for key, idx in self.instance["probes"][str(turn)].items()
        ]
        outcomes = []
        for probe in probes:
            history = self.messages.copy() + [{"role": "user", "content": ""}]
            tries, successful, answer, parsed = 1, False, "", INVALID
            while tries <= len(self.retries):
                question = probe["question"].replace(words["ME"], f"{words['ME']}{self.retries[tries - 1]} ")
                history[-1] = {"role": "user", "content": question}
                answer = yield from self.ask(ANSWERER, history, send_type="probe question", reply_type="probe answer")
                self.request_counts[turn] += 1
                parsed = parse_probe(answer, words["ASIDE"], words["YES"], words["NO"])
                self.log.to_self("parse", parsed)
                if parsed in (words["YES"], words["NO"]):
                    successful = True
                    self.parsed_counts[turn] += 1
                    break
                self.violated_counts[turn] += 1
                tries += 1
            probe["answer"] = answer
            probe["value"] = 1 if parsed == words["YES"] else 0 if parsed == words["NO"] else INVALID_LABEL
            probe["tries"] = tries
            self.log.to_self("metadata", SUCCESS.format(probe["target"], tries) if successful else NOT_SUCCESS.format(probe["target"]))
            self.log.to_self("check", RESULT.format("" if probe["value"] == probe["gt"] else "in"))
            outcomes.append(successful)
            if not successful:
                break
        self.all_probes.append(probes)
        ok = all(outcomes)
        if ok:
            self.played_probe_rounds += 1
        self.log.to_self("info", "End probing")
        return ok

    def record(self) -> dict[str, Any]:
        return {**super().record(), "probes": getattr(self, "all_probes", []), "realised_slots": getattr(self, "probe_gt", {})}

    def episode_scores(self) -> dict[str, float]:
        from sklearn.metrics import accuracy_score, cohen_kappa_score

        gold: list[int] = []
        pred: list[int] = []
        for probes in self.all_probes[: self.played_probe_rounds]:
            gold += [p["gt"] for p in probes]
            pred += [p["value"] for p in probes]
        requests, parsed = sum(self.request_counts), sum(self.parsed_counts)
        violated = sum(self.violated_counts)
        if self.aborted:
            return outcome_scores(True, False, NAN, requests, parsed, violated)
        acc = accuracy_score(gold, pred)
        kappa = cohen_kappa_score(gold, pred) if len(set(gold) | set(pred)) > 1 else NAN
        trunc = max(0.0, kappa) if not math.isnan(kappa) else 0.0
        sf_acc = sum(self.filled_slots) / len(self.filled_slots)
        success = acc == 1.0 and sf_acc == 1.0
        scores = outcome_scores(False, success, bench_score(sf_acc, trunc), requests, parsed, violated)
        scores.update(accuracy=float(acc), kappa=float(kappa), slot_filling_accuracy=float(sf_acc))
        return scores


@register("privateshared")
class PrivateSharedTask(ClemTask):
    """clembench's Private/Shared: the answerer fills a form while a programmatic questioner probes what it knows."""

    game = PrivateSharedGame
    roles = (PLAYER_A,)
    groups = (CLEMBENCH,)
    cost = clem_cost(episodes=50, turns=4_800, prompt_tokens=1_938_648)
