"""The prompts Wordle's game master sends, as clembench v1.6 wrote them (seed 002 section 3.1).

The opening prompts are data: the instance's ``system_definition`` and ``guesser_prompt`` /
``guesser_critic_prompt`` (upstream ``wordle/resources`` at f8d61d6, copied into every instance).
What v1.6 added in code (``wordle/utils/promptgenerator.py``, read at clembench commit c027d50, the
version the v1.6 run used) is kept here as v1.6 wrote it: the clue line ``clue:<clue>`` with no
space, the history entries ``guess:<word>\nexplanation:<text>\n`` and the re-prompts below (issue
13 records the guesser's four; the published v1.6 episodes show the clue line and the invalid-word
one). Later clembench versions put a space after each colon and reworded the re-prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Message = dict[str, str]

#: v1.6's re-prompt after a refused guess, by the error that refused it
REPROMPTS: dict[str, str] = {
    "INVALID_WORD_LENGTH": "the word should have exactly 5 letters. Please try again",
    "INVALID_WORD": "the word should contain only alphabets. Please try again",
    "NOT_VALID_ENGLISH_WORD": "your guess is not a valid word for this game. Please try again",
    "INVALID_FORMAT": "Provide your response only in this format:\nguess:word\nexplanation:details.\nPlease try again",
}
#: v1.6's re-prompt after a critic reply without ``agreement: yes|no``
CRITIC_REPROMPT = "Provide your response only in this format:\nagreement:yes or no\nexplanation:details\nPlease try again"


def guess_entry(guess: str, explanation: str) -> str:
    """The guesser's own turn as v1.6 keeps it in the guesser's history."""
    return f"guess:{guess}\nexplanation:{explanation}\n"


def agreement_entry(agreement: str | None, explanation: str | None) -> str:
    """The critic's own turn as v1.6 keeps it in the critic's history."""
    return f"agreement:{agreement}\nexplanation:{explanation}\n"


class WordlePrompts:
    """The guesser's and the critic's message histories, grown as v1.6's ``PromptGenerator`` grows them."""

    def __init__(self, instance: Mapping[str, Any], use_clue: bool, use_critic: bool, clue: str):
        self.instance = instance
        self.use_clue = use_clue
        self.use_critic = use_critic
        self.clue = clue
        self.guesser: list[Message] = []
        self.critic: list[Message] = []

    def guesser_turn(self, guess: str, explanation: str, feedback: str | None, agreement: str | None, agreement_expl: str | None) -> None:
        """The next guesser prompt after an accepted guess (the opening prompt when the history is empty)."""
        if not self.guesser:
            text = self.instance["system_definition"] + self.instance["guesser_prompt"][0]["content"]
            if self.use_clue:
                text += "clue:" + self.clue + "\n"
            self.guesser.append({"role": "user", "content": text})
            return
        self.guesser.append({"role": "assistant", "content": guess_entry(guess, explanation)})
        if not self.use_critic:
            self.guesser.append({"role": "user", "content": "guess_feedback: " + str(feedback)})
            return
        content = (
            ""
            if agreement == "do_not_use"
            else (f"clue:{self.clue}\nguess_agreement:{agreement}\nagreement_explanation:{agreement_expl}\n")
        )
        if feedback:
            content += "guess_feedback: " + feedback
        self.guesser.append({"role": "user", "content": content})

    def guesser_retry(self, error: str, guess: str, explanation: str) -> None:
        """The re-prompt after a refused guess (an unknown error gets the format re-prompt)."""
        own = guess_entry(guess, explanation)
        if self.use_critic:
            own = f"clue:{self.clue}\n" + own
        self.guesser.append({"role": "assistant", "content": own})
        self.guesser.append({"role": "user", "content": REPROMPTS.get(error, REPROMPTS["INVALID_FORMAT"])})

    def critic_turn(self, guess: str, explanation: str, feedback: str | None, agreement: str | None, agreement_expl: str | None) -> None:
        """The next critic prompt: the guess to judge (with the opening prompt when the history is empty)."""
        case = f"clue:{self.clue}\nguess:{guess}\nexplanation:{explanation}\n"
        if not self.critic:
            self.critic.append({"role": "user", "content": self.instance["guesser_critic_prompt"][0]["content"] + case})
            return
        if agreement == "do_not_use":
            self.critic.append({"role": "user", "content": ""})
        else:
            self.critic.append({"role": "assistant", "content": agreement_entry(agreement, agreement_expl)})
        if feedback:
            case += "guess_feedback: " + feedback
        self.critic.append({"role": "user", "content": case})

    def critic_retry(self, agreement: str | None, agreement_expl: str | None) -> None:
        """The re-prompt after a critic reply without a yes/no agreement."""
        self.critic.append({"role": "assistant", "content": agreement_entry(agreement, agreement_expl)})
        self.critic.append({"role": "user", "content": CRITIC_REPROMPT})
