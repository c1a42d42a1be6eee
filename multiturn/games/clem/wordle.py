"""Wordle and its two variants (clembench v1.6, ``wordle/`` at f8d61d6; seed 002 section 3.1).

The guesser replies ``guess: <word>`` and ``explanation: ...`` (each up to its line end); the game
gives letter feedback (green / yellow / red) and allows 6 guesses. A reply without the ``guess:``
keyword, with non-letters or not five letters is re-prompted up to 2 times in a row, a word not in
the allowed list up to 5 times; one more failure aborts the episode. ``wordle_withclue`` adds a
crossword clue to the first prompt; ``wordle_withcritic`` lets a second player (the critic) agree or
disagree with each first guess before the guesser commits to a guess (``agreement: yes|no``).

Main score (clembench's "speed"): for ``wordle`` 100 / 50 / 30 / 20 when solved in <=3 / 4 / 5 / 6
guesses; for the variants round(100 / guesses, 2); 0 when lost; NaN when aborted. Task option
``--task_args speed=v1.5``: clembench v1.5's rule (round(100 / guesses, 2) for standard Wordle too),
the version seed 003 ran (App. E).

The letter feedback is v1.6's, not standard Wordle's (:func:`~multiturn.games.clem.wordle_rules.first_unmarked_occurrence_feedback`);
the prompts and re-prompts are v1.6's (:mod:`multiturn.games.clem.wordle_prompts`).

Differences from v1.6, documented: v1.6 loops forever when the critic never answers in format
(``while game.proceeds:`` is always true); we abort after 2 re-prompts, as ``proceeds()`` intends.
The token-count prompt truncation v1.6 applies to OpenAI models only is not applied.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from multiturn.game import Request, TurnView
from multiturn.games.clem.common import CLEMBENCH_MAX_TOKENS, NAN, PLAYER_A, PLAYER_B, ClemGame, MasterLoop, outcome_scores
from multiturn.games.clem.task import CLEMBENCH, ClemTask, clem_cost
from multiturn.games.clem.wordle_prompts import WordlePrompts
from multiturn.games.clem.wordle_rules import (
    SPEED_VERSIONS,
    feedback_tiles,
    find_keyword,
    first_unmarked_occurrence_feedback,
    guess_error,
    speed_score,
)
from multiturn.registry import register
from plumbing.errors import UserError

GUESSER = "Player 1"
CRITIC = "Player 2"

ABORTING_STATUSES = ("INVALID_FORMAT", "INVALID_WORD", "INVALID_WORD_LENGTH", "NOT_VALID_ENGLISH_WORD", "CONTEXT_EXCEEDED_ERROR")


_WORDS: list[str] = []


def legal_words() -> list[str]:
    """The legal Wordle words (clembench's recognised list, carried by the built ``clembench`` dataset's
    Wordle rows), sorted so that a seeded choice is reproducible."""
    if not _WORDS:
        from datasets_build.clembench import load_clembench

        _WORDS.extend(sorted(load_clembench("wordle")[0]["english_words"]))
    return _WORDS


class WordleGame(ClemGame):
    game_name = "wordle"

    @staticmethod
    def chance_reply(request: Request, rng: random.Random) -> str:
        """The critic: a random yes/no; the guesser: a random legal word."""
        if request.role == PLAYER_B:
            return f"agreement: {rng.choice(['yes', 'no'])}\nexplanation: a random opinion"
        return f"guess: {rng.choice(legal_words())}\nexplanation: a random legal word"

    def expected_format(self, request: Request) -> str:
        if request.role == PLAYER_B:
            return "the critic must reply 'agreement: yes|no' and 'explanation: ...', each on its own line"
        return "the guesser must reply 'guess: <a 5-letter English word>' and 'explanation: ...', each on its own line"

    def reply_view(self, request: Request, reply: str) -> TurnView:
        """The generic view, with the guesser's error (re-prompted) and the letter feedback as tiles."""
        view = super().reply_view(request, reply)
        error = self.critic_error if request.role == PLAYER_B else self.guesser_error
        if error and not view.why:
            view.verdict, view.why = False, f"{error}: {self.expected_format(request)} (re-prompted)"
        shown = getattr(self, "_tiles_shown", 0)
        if len(self.turn_results) > shown:
            self._tiles_shown = len(self.turn_results)
            view.tiles = feedback_tiles(self.turn_results[-1][1])
            view.verdict = all(colour == "green" for _, colour in view.tiles)
        return view

    def __init__(
        self,
        instance: Mapping[str, Any],
        model_names: Mapping[str, str] | None = None,
        words: frozenset[str] | None = None,
        speed: str = "v1.6",
    ):
        self.speed_version = speed
        # the allowed-word list travels with each built Wordle row (``english_words``)
        self.words = words if words is not None else frozenset(instance["english_words"])
        super().__init__(instance, model_names)

    # -- the master loop -------------------------------------------------------------------------
    def _proceeds(self) -> bool:
        if self.terminate:
            return False
        if self.use_critic and self.critic_error:
            return self.critic_retry < self.max_retry
        if self.guesser_error:
            if self.guesser_error in ("NO_CLUE_FOUND", "CONTEXT_EXCEEDED_ERROR"):
                return False
            if self.guesser_error == "NOT_VALID_ENGLISH_WORD":
                return self.guesser_retry_invalid < self.max_retry_invalid
            return self.guesser_retry < self.max_retry
        return self.attempts < self.max_attempts

    def _guesser_turn(self, guess, explanation, feedback, agreement, agreement_expl, error):
        if not error:
            self.prompts.guesser_turn(guess, explanation, feedback, agreement, agreement_expl)
        else:
            if error != "NOT_VALID_ENGLISH_WORD":
                self.guesser_retry += 1
            else:
                self.guesser_retry_invalid += 1
            self.prompts.guesser_retry(error, guess, explanation)
        self.guesser_req_count += 1
        response = yield from self.ask(GUESSER, self.prompts.guesser, role=PLAYER_A)
        text = response + "\n"
        result = {self.kw["guess"]: find_keyword(text, self.kw["guess"]), "explanation": find_keyword(text, self.kw["explanation"])}
        self.log.to_self("parse", result)
        error = guess_error(result[self.kw["guess"]], self.words, self.word_length)
        self.guesser_error = error
        if not error:
            self.guesser_retry = 0
            self.guesser_retry_invalid = 0
            self.guesser_parsed_req_count += 1
        elif error == "NOT_VALID_ENGLISH_WORD":
            self.guesser_retry = 0
            self.guesser_parsed_req_count += 1
        return result[self.kw["guess"]], result["explanation"], error

    def _critic_turn(self, guess, explanation, feedback, agreement, agreement_expl, error):
        if not error:
            self.prompts.critic_turn(guess, explanation, feedback, agreement, agreement_expl)
        else:
            self.critic_retry += 1
            self.prompts.critic_retry(agreement, agreement_expl)
        self.critic_req_count += 1
        response = yield from self.ask(CRITIC, self.prompts.critic, role=PLAYER_B)
        text = response + "\n"
        found = find_keyword(text, self.kw["agreement"])
        result = {
            self.kw["agreement"]: found if found in self.kw["agreement_match_keywords"] else "INVALID_FORMAT",
            "explanation": find_keyword(text, self.kw["explanation"]),
        }
        self.log.to_self("parse", result)
        word = result[self.kw["agreement"]]
        error = word if word in ("INVALID_FORMAT", "CONTEXT_EXCEEDED_ERROR") else None
        self.critic_error = error
        if not error:
            self.critic_retry = 0
            self.critic_parsed_req_count += 1
        return result[self.kw["agreement"]], result["explanation"], error

    def _log_guess(self, guess, explanation, agreement, agreement_expl, error, feedback=None) -> None:
        attempts = self.attempts if error else self.attempts + 1
        if error:
            content = f"Guesser Error: {error} while parsing Player 1's (model: {self.model_name(GUESSER)}) response"
        elif self.use_clue:
            content = (
                f"attempts: {attempts}\ntarget_word = {self.target}\ntarget_word_clue = {self.clue}\n"
                f"guess: {guess}\nguess_feedback: {feedback}"
            )
        else:
            content = f"attempts: {attempts}\ntarget_word = {self.target}\nguess: {guess}\nguess_feedback: {feedback}"
        info: dict[str, Any] = {
            "attempts": attempts,
            "target_word": self.target,
            "target_word_difficulty": self.difficulty,
            "guesser": self.log.players[GUESSER],
            "guess": guess,
            "explanation": explanation,
            "error": error,
        }
        if self.use_clue:
            info["target_word_clue"] = self.clue
        if self.use_critic:
            info.update(critic_agreement=agreement, critic_explanation=agreement_expl, guess_critic=self.log.players[CRITIC])
        self.log.to_self("metadata", content, game_info=info)

    def _validate(self, guess: str) -> str:
        feedback = first_unmarked_occurrence_feedback(guess, self.target)
        if all("green" in part for part in feedback.split(" ")):
            self.terminate = True
        self.turn_results.append([guess, feedback])
        extra_req = self.critic_req_count if self.use_critic else 0
        extra_parsed = self.critic_parsed_req_count if self.use_critic else 0
        self.turn_req_count.append(self.guesser_req_count + extra_req)
        self.turn_parse_count.append(self.guesser_parsed_req_count + extra_parsed)
        return feedback

    def play(self) -> MasterLoop:
        self._setup()
        guess, explanation, feedback = "", "", None
        agreement = agreement_expl = None
        opinions = 0
        guess_before = ""
        ignore_critic = not self.use_critic
        while self._proceeds():
            self.log.next_turn()
            guess, explanation, error = yield from self._guesser_turn(
                guess, explanation, feedback, agreement, agreement_expl, self.guesser_error
            )
            if error:
                self._log_guess(guess, explanation, agreement, agreement_expl, error)
                continue
            if self.use_critic and not ignore_critic:
                guess_before = guess
                while True:
                    agreement, agreement_expl, critic_error = yield from self._critic_turn(
                        guess, explanation, feedback, agreement, agreement_expl, self.critic_error
                    )
                    if not critic_error or self.critic_retry >= self.max_retry:
                        break
                if self.critic_error:
                    self.log.log(CRITIC, "GM", "error", self.critic_error)
                    break
                verb = "disagrees" if agreement == "no" else "agrees"
                self.log.to_self("metadata", f"Critic {verb} with the Guesser -- Sharing the critic's explanation with the guesser")
                opinions += 1
                if opinions == self.max_critic_opinions:
                    ignore_critic = True
                    feedback = ""
                continue
            if self.use_critic:
                self.change_guess_words.append([guess_before, guess, agreement])
                changed = "Change" if guess_before != guess else "No change"
                self.log.to_self(
                    "metadata",
                    f"{changed} in player1's guess\nguess_before_critic_opinion: {guess_before}\n"
                    f"critic_agreement: {agreement}\nguess_after_critic_opinion: {guess}\n"
                    "Proceeding with guess validation",
                )
            feedback = self._validate(guess)
            self._log_guess(guess, explanation, agreement, agreement_expl, self.critic_error if self.use_critic else None, feedback)
            self.attempts += 1
            if self.use_critic:
                agreement = agreement_expl = "do_not_use"
                ignore_critic = False
                opinions = 0

        self._finish(guess, explanation, agreement, agreement_expl)

    def _setup(self) -> None:
        """The instance's settings and the game's counters (clembench's ``_on_setup``)."""
        inst = self.instance
        config = inst["common_config"]
        self.kw = inst["response_format_keywords"]
        self.use_clue = bool(inst["use_clue"])
        self.use_critic = bool(inst["use_critic"])
        self.target = inst["target_word"].strip()
        self.clue = str(inst.get("target_word_clue", "")).strip()
        self.difficulty = inst.get("target_word_difficulty")
        self.max_attempts = int(config["max_attempts_per_game"])
        self.max_retry = int(config["max_retry_per_error"])
        self.max_retry_invalid = int(config["max_retry_invalid_word"])
        self.word_length = int(config["max_word_length"])
        self.max_critic_opinions = int(config["max_critic_opinion_count"])
        second = self.model_names.get(CRITIC)
        self.log.players = {"GM": "Game master for wordle", GUESSER: f"Word Guesser ({self.model_name(GUESSER)})"}
        if self.use_critic:
            self.log.players[CRITIC] = f"Word Guesser Critic ({second or self.model_name(GUESSER)})"
        else:
            self.log.players[CRITIC] = "Guess Word Evaluator (Programmatic)"
        self.prompts = WordlePrompts(inst, self.use_clue, self.use_critic, self.clue)
        self.guesser_retry = self.guesser_retry_invalid = self.critic_retry = 0
        self.terminate = False
        self.guesser_error: str | None = "NO_CLUE_FOUND" if self.use_clue and not self.clue else None
        self.critic_error: str | None = None
        self.guesser_req_count = self.critic_req_count = 0
        self.guesser_parsed_req_count = self.critic_parsed_req_count = 0
        self.attempts = 0
        self.turn_results: list[list[str]] = []
        self.turn_req_count: list[int] = []
        self.turn_parse_count: list[int] = []
        self.change_guess_words: list[list[Any]] = []

    def _finish(self, guess: str, explanation: str, agreement: Any, agreement_expl: Any) -> None:
        """The final status and the logged game result (clembench's ``_on_after_game``)."""
        second = self.model_names.get(CRITIC)
        if self.guesser_error == "NO_CLUE_FOUND":
            self._log_guess(guess, explanation, agreement, agreement_expl, self.guesser_error)
        status = self._status()
        actual = status
        if status in ABORTING_STATUSES:
            status = "ABORTED"
        elif status == "MAX_ATTEMPTS_REACHED":
            status = "LOSS"
        else:
            status = "WIN"
        self.final_status = status
        if status == "ABORTED":
            self.log.to_self("invalid format", "Aborted due to invalid format in response", original_content=actual)
        data = {
            "player_1": self.model_name(GUESSER),
            "player_2": second or "",
            "total_attempts": self.attempts,
            "turns_req_count": list(self.turn_req_count),
            "turns_parse_count": list(self.turn_parse_count),
            "turns_guess_feedback": [list(t) for t in self.turn_results],
            "critic_guesses_change": [list(c) for c in self.change_guess_words],
            "guesser_error": self.guesser_error,
            "critic_error": self.critic_error,
            "guesser retry count": self.guesser_retry,
            "critic retry count": self.critic_retry,
            "guesser_req_count": self.guesser_req_count,
            "critic_req_count": self.critic_req_count,
            "guesser_parsed_req_count": self.guesser_parsed_req_count,
            "critic_parsed_req_count": self.critic_parsed_req_count,
            "target_word": self.target,
            "target_word_clue": self.clue,
            "target_word_difficulty": self.difficulty,
            "game_final_status": status,
            "use_clue": self.use_clue,
            "use_critic": self.use_critic,
        }
        self.log.to_self("metadata", f"game_result = {status}", data_for_computation=data)

    def _status(self) -> str | None:
        if self.use_critic and self.critic_error:
            return self.critic_error
        if self.guesser_error:
            return self.guesser_error
        if self.terminate:
            return "SUCCESS"
        if self.attempts == self.max_attempts:
            return "MAX_ATTEMPTS_REACHED"
        return None

    def episode_scores(self) -> dict[str, float]:
        status = getattr(self, "final_status", "ABORTED")
        aborted = status == "ABORTED"
        won = status == "WIN"
        main = speed_score(len(self.turn_results), self.game_name, self.speed_version) if won else 0.0
        requests = self.guesser_req_count + self.critic_req_count
        parsed = self.guesser_parsed_req_count + self.critic_parsed_req_count
        return outcome_scores(aborted, won, NAN if aborted else main, requests, parsed)


class WordleWithClueGame(WordleGame):
    """Wordle with a clue to the target word."""

    game_name = "wordle_withclue"


class WordleWithCriticGame(WordleGame):
    """Wordle with a clue and a critic (Player 2) who agrees or disagrees with each guess."""

    game_name = "wordle_withcritic"


@register("wordle")
class WordleTask(ClemTask):
    """clembench's Wordle: the guesser has six guesses and letter feedback; task option ``speed`` = ``v1.6``
    (default) or ``v1.5`` (:func:`wordle_rules.speed_score`)."""

    game = WordleGame
    roles = (PLAYER_A,)
    groups = (CLEMBENCH,)
    cost = clem_cost(episodes=30, turns=180, prompt_tokens=70_955)

    def __init__(
        self,
        dataset_config: str | None = None,
        *,
        instances: str | None = None,
        speed: str = "v1.6",
        max_tokens: int = CLEMBENCH_MAX_TOKENS,
    ):
        super().__init__(dataset_config, instances=instances, max_tokens=max_tokens)
        if speed not in SPEED_VERSIONS:
            raise UserError(f"--task_args speed: one of {', '.join(SPEED_VERSIONS)}, got {speed!r}")
        self.speed = speed

    def make_game(self, instance: Mapping[str, Any], seed: int) -> WordleGame:
        return self.game(instance, speed=self.speed)

    def config(self) -> dict[str, Any]:
        cfg = super().config()
        cfg["speed"] = self.speed
        return cfg


@register("wordle_withclue")
class WordleWithClueTask(WordleTask):
    """clembench's Wordle with a clue to the target word."""

    game = WordleWithClueGame
    cost = clem_cost(episodes=30, turns=180, prompt_tokens=78_835)


@register("wordle_withcritic")
class WordleWithCriticTask(WordleTask):
    """clembench's Wordle with a clue and a critic (``player_b``) who agrees or disagrees with each guess."""

    game = WordleWithCriticGame
    roles = (PLAYER_A, PLAYER_B)
    cost = clem_cost(episodes=30, turns=540, prompt_tokens=331_372)
