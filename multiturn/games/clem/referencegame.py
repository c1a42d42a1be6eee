"""Reference game (clembench v1.6, ``referencegame/master.py`` at 9cd1254; seed 002 section 3.1).

One round: Player 1 sees three 5x5 grids (the first is the target) and must reply with one line
``Expression: <referring expression>``; Player 2 sees the grids in another order with that
expression and must reply ``Answer: first|second|third`` (or 1/2/3, 1st/2nd/3rd). The instance's
regular expressions decide validity (case-insensitive; nothing may follow on a further line). A
malformed expression aborts; a malformed answer is logged as ``invalid format`` but, as v1.6's
scorer does, re-matched without the one-line rule before the episode counts as aborted.
Main score: 100 when Player 2 picks the target, else 0; NaN when aborted.

The multilingual instances (``referencegame_<lang>``) carry no regular expressions: we build them
from the tags their prompts ask for (the quoted ``Ausdruck:`` / ``Antwort:`` ...) and the answer
labels their instances use (``erstes``, ``zweites``, ``drittes``, 1, 2, 3):
:func:`multiturn.games.clem.catalog.multilingual_patterns`.
"""

from __future__ import annotations

import random
import re
from functools import partial

from datasets_build.clembench_names import MULTILINGUAL_LANGUAGES
from multiturn.game import Request
from multiturn.games.clem.common import NAN, PLAYER_A, PLAYER_B, ClemGame, MasterLoop, outcome_scores
from multiturn.games.clem.task import CLEMBENCH, ClemTask, clem_cost
from multiturn.registry import register

GIVER = "Player 1"
FOLLOWER = "Player 2"


def match(pattern: str, text: str) -> re.Match | None:
    return re.match(re.compile(pattern, re.IGNORECASE), text)


class ReferenceGame(ClemGame):
    game_name = "referencegame"

    @staticmethod
    def chance_reply(request: Request, rng: random.Random) -> str | None:
        """The follower: a random one of the three grids; the giver: a random expression (English prompts)."""
        if 'tag "Answer: "' in request.last:
            return "Answer: " + rng.choice(["first", "second", "third"])
        if 'tag "Expression: "' in request.last:
            return "Expression: the grid with " + rng.choice(["more", "fewer", "the most", "no"]) + " X"
        return None

    def expected_format(self, request: Request) -> str:
        return "one line starting with the tag the prompt names (e.g. 'Expression: ...' or 'Answer: first|second|third'), nothing after it"

    def play(self) -> MasterLoop:
        inst = self.instance
        self.log.players = {
            "GM": "Game master for referencegame",
            "Player_1": self.model_name(GIVER),
            "Player_2": self.model_name(FOLLOWER),
        }
        self.p1_valid = self.p2_valid = self.p2_rematched = False
        self.answer: str | None = None
        self.log.next_turn()
        giver = [{"role": "system", "content": ""}, {"role": "user", "content": inst["player_1_prompt_header"]}]
        expression = yield from self.ask(GIVER, giver, role=PLAYER_A)
        m1 = match(inst["player_1_response_pattern"], expression)
        if not (m1 and m1.group("remainder") == ""):
            self.log.to_self("invalid format", "Invalid generated expression", original_content=expression)
            return
        self.p1_valid = True
        self.log.to_self("parse", expression, expression=m1.group("content"))
        follower_prompt = inst["player_2_prompt_header"].replace("TARGET_EXPRESSION", expression)
        follower = [{"role": "system", "content": ""}, {"role": "user", "content": follower_prompt}]
        answer = yield from self.ask(FOLLOWER, follower, role=PLAYER_B)
        m2 = match(inst["player_2_response_pattern"], answer)
        if m2 and m2.group("remainder") == "":
            self.p2_valid = True
            self.answer = m2.group("content")
            self.log.to_self("parse", answer, answer=self.answer)
        else:
            self.log.to_self("invalid format", "Invalid generated choice", original_content=answer)
            if m2:  # v1.6's scorer accepts the answer without the one-line rule
                self.p2_rematched = True
                self.answer = m2.group("content")

    def episode_scores(self) -> dict[str, float]:
        requests = 1 + int(self.p1_valid)
        parsed = int(self.p1_valid) + int(self.p2_valid or self.p2_rematched)
        aborted = not self.p1_valid or not (self.p2_valid or self.p2_rematched)
        success = self.answer is not None and self.answer.lower() in self.instance["target_grid_name"]
        return outcome_scores(aborted, success, NAN if aborted else 100.0 * success, requests, parsed)


@register("referencegame")
class ReferenceGameTask(ClemTask):
    """clembench's reference game: the describer refers to one of three grids, the chooser picks it."""

    game = ReferenceGame
    roles = (PLAYER_A, PLAYER_B)
    groups = (CLEMBENCH,)
    cost = clem_cost(episodes=180, turns=360, prompt_tokens=104_631)


class MultilingualReferenceTask(ReferenceGameTask):
    """The multilingual reference game (seed 002 Table 2), one task per language, outside the clembench group."""

    groups = ()
    cost = None


for _lang in MULTILINGUAL_LANGUAGES:
    register(f"referencegame_{_lang}")(partial(MultilingualReferenceTask, f"referencegame_{_lang}"))
