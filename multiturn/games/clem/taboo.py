"""Taboo (clembench v1.6, ``taboo/master.py`` at 542f8db; seed 002 section 3.1 / appendix).

The describer (Player 1) must reply ``CLUE: ...`` without the target word, a related word, or a
word with the same Snowball stem (stop words and punctuation removed first); the guesser
(Player 2) replies ``GUESS: <word>``. A reply without its prefix aborts the episode ("invalid
format"); a clue that uses a forbidden word ends it as a loss ("invalid clue"). Main score:
100 / number of turns when the word is guessed (max 3 turns), 0 otherwise, NaN when aborted.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from models.forms import CHANCE_WORDS
from multiturn.game import Request
from multiturn.games.clem.common import NAN, PLAYER_A, PLAYER_B, ClemGame, MasterLoop, outcome_scores
from multiturn.games.clem.task import CLEMBENCH, ClemTask, clem_cost
from multiturn.games.clem.wordle import legal_words
from multiturn.registry import register

DESCRIBER = "Player 1"
GUESSER = "Player 2"
_PUNCTUATION = str.maketrans(dict.fromkeys(string.punctuation))
_PUNCTUATION_BYTES = string.punctuation.encode("ascii")
_STOPWORD_FILE = Path(__file__).with_name("data") / "nltk_english_stopwords.txt"
#: more than the most letters Snowball's English steps can remove from one word (0, 1a-c, 2-5: <= 25)
MAX_STEM_SHRINK = 40


@lru_cache(maxsize=1)
def english_stopwords() -> frozenset[str]:
    """NLTK's English stop words (the corpus when installed, else the copy in ``data/``)."""
    try:
        from nltk.corpus import stopwords

        return frozenset(stopwords.words("english"))
    except LookupError:
        lines = _STOPWORD_FILE.read_text(encoding="utf-8").splitlines()
        return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english")


def remove_punctuation(text: str) -> str:
    """``text`` without ASCII punctuation (``string.punctuation``, as clembench removes it).

    Done on UTF-8 bytes (no multi-byte sequence holds an ASCII byte): ``str.translate`` is ~10x slower
    on non-ASCII text, which a 1 MB reply makes visible."""
    try:
        return text.encode("utf-8").translate(None, _PUNCTUATION_BYTES).decode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return text.translate(_PUNCTUATION)


def normalise_clue(utterance: str) -> str:
    """The clue text clembench logs: prefix removed, stripped, lower-cased, punctuation removed."""
    return remove_punctuation(utterance.replace("CLUE:", "").strip().lower())


#: Snowball (English) keeps a word's first letter, and a stem ends at most this many letters beyond
#: the part it shares with its word ("dying" -> "die", "possibility" -> "possibl")
MAX_STEM_NEW_LETTERS = 3


def candidate_words(clue: str, stems: list[str]) -> list[str]:
    """The distinct space-separated words of ``clue``, in order, that could have one of ``stems`` as stem.

    Snowball never lengthens a (lower-case) word, strips fewer than ``MAX_STEM_SHRINK`` letters and
    rewrites at most the last ``MAX_STEM_NEW_LETTERS`` letters of the stem, keeping the first; so a
    word that is shorter than every stem, far longer than all of them, or does not start with some
    stem's unchanging head cannot share a stem and is not stemmed (which keeps a 1 MB reply of
    distinct words fast). ``tests/multiturn/test_clem_games.py`` checks the rule on 60,000 English words.
    """
    lengths = [len(s) for s in stems] or [0]
    low, high = max(1, min(lengths)), max(lengths) + MAX_STEM_SHRINK
    heads = sorted({s[: max(1, len(s) - MAX_STEM_NEW_LETTERS)] for s in stems if s}, key=len, reverse=True)
    if not heads:
        return []
    # whole words (preceded by a space or the start) that begin with a head and have >= low letters
    alternatives = "|".join(map(re.escape, heads))
    pattern = rf"(?<![^ ])(?={alternatives})[^ ]{{{low},}}"
    return [w for w in dict.fromkeys(re.findall(pattern, clue)) if len(w) <= high]


def clue_errors(utterance: str, target: str, related: list[str], clue: str | None = None) -> list[dict[str, Any]]:
    """Forbidden words in a clue: distinct clue words (stop words dropped) whose stem equals the stem of
    the target (type 0) or of a related word (type 1). ``clue``: ``normalise_clue(utterance)`` if known."""
    stem = _stemmer().stem
    stop = english_stopwords()
    target_stem = stem(target)
    related_stems = [(r, stem(r)) for r in related]
    errors: list[dict[str, Any]] = []
    clue = normalise_clue(utterance) if clue is None else clue
    for word in candidate_words(clue, [target_stem, *(s for _, s in related_stems)]):
        if word in stop:
            continue
        word_stem = stem(word)
        if word_stem == target_stem:
            errors.append(
                {"message": f"Target word '{target}' (stem={target_stem}) is similar to clue word '{word}' (stem={word_stem})", "type": 0}
            )
        for rel, rel_stem in related_stems:
            if rel_stem == word_stem:
                errors.append(
                    {"message": f"Related word '{rel}' (stem={rel_stem}) is similar to clue word '{word}' (stem={word_stem})", "type": 1}
                )
    return errors


def normalise_guess(utterance: str) -> str:
    """The guessed word: prefix removed, stripped, lower-cased, punctuation removed."""
    return remove_punctuation(utterance.replace("GUESS:", "").strip().lower()).lower()


def render_prompts(instance: Mapping[str, Any]) -> tuple[str, str]:
    """The describer's and the guesser's first prompts, from the instance's templates."""
    n = str(instance["max_turns"])
    related = "\n".join(f"- {w}" for w in instance["related_word"])
    describer = instance["describer_initial_prompt"].replace("$TARGET_WORD$", instance["target_word"])
    describer = describer.replace("$REL_WORD$", related).replace("$N$", n)
    guesser = instance["guesser_initial_prompt"].replace("$N$", n)
    return describer, guesser


class TabooGame(ClemGame):
    @staticmethod
    def chance_reply(request: Request, rng: random.Random) -> str:
        """The describer: three random filler words as its clue; the guesser: a random legal Wordle word."""
        if request.role == PLAYER_A:
            return "CLUE: " + " ".join(rng.sample(CHANCE_WORDS, 3))
        return f"GUESS: {rng.choice(legal_words())}"

    def expected_format(self, request: Request) -> str:
        if request.role == PLAYER_A:
            return "the describer must reply 'CLUE: ...' without the target word, a related word or their stems"
        return "the guesser must reply 'GUESS: <word>'"

    game_name = "taboo"

    def play(self) -> MasterLoop:
        inst = self.instance
        self.target = inst["target_word"]
        self.related = list(inst["related_word"])
        self.max_turns = int(inst["max_turns"])
        self.log.players = {
            "GM": "Game master for taboo",
            DESCRIBER: f"WordDescriber, {self.model_name(DESCRIBER)}",
            GUESSER: f"WordGuesser, {self.model_name(GUESSER)}",
        }
        describer_prompt, guesser_prompt = render_prompts(inst)
        history = {DESCRIBER: [{"role": "user", "content": describer_prompt}], GUESSER: []}
        roles = {DESCRIBER: PLAYER_A, GUESSER: PLAYER_B}
        self.invalid_response = False
        self.clue_error: dict[str, Any] | None = None
        self.guess_word: str | None = None
        self.current_turn = 0
        stopped = False
        while not stopped and self._proceeds():
            self.log.next_turn()
            for player in (DESCRIBER, GUESSER):
                if not self._proceeds():
                    stopped = True  # end without asking _proceeds() again: it logs its reason each time
                    break
                reply = yield from self.ask(player, history[player], role=roles[player])
                if not self._validate(player, reply):
                    continue
                history[player].append({"role": "assistant", "content": reply})
                if player == DESCRIBER:
                    text = f"{guesser_prompt}\n\n{reply}" if self.current_turn == 0 else reply
                    history[GUESSER].append({"role": "user", "content": text})
                elif self.guess_word != self.target:
                    history[DESCRIBER].append({"role": "user", "content": reply})
            self.current_turn += 1

    def _proceeds(self) -> bool:
        """clembench's ``_does_game_proceed``: logs the reason each time it says stop.

        The play loop asks it before every turn and before every player; when it stops the game
        between players (a describer's invalid clue or format), the loop ends without asking again,
        so the stop event is logged once, as in the published v1.6 episodes (clembench's
        ``DialogueGameMaster.play`` breaks its outer loop there; e.g. gpt-4-turbo's taboo episode
        2_low_en/episode_2 logs its describer's ``invalid format`` once).
        """
        if self.invalid_response:
            self.log.to_self("invalid format", "abort game")
            return False
        if self.clue_error is not None:
            self.log.to_self("invalid clue", self.clue_error["message"])
            return False
        if self.guess_word == self.target:
            self.log.to_self("correct guess", "end game")
            return False
        if self.current_turn >= self.max_turns:
            self.log.to_self("max turns reached", str(self.max_turns))
            return False
        return True

    def _validate(self, player: str, utterance: str) -> bool:
        prefix = "CLUE:" if player == DESCRIBER else "GUESS:"
        if not utterance.startswith(prefix):
            self.invalid_response = True
            return False
        self.log.to_self("valid response", "continue")
        if player == GUESSER:
            self.guess_word = normalise_guess(utterance)
            self.log.to_self("valid guess", self.guess_word)
            return True
        clue = normalise_clue(utterance)
        errors = clue_errors(utterance, self.target, self.related, clue=clue)
        if errors:
            self.clue_error = errors[0]
            return False
        self.log.to_self("valid clue", clue)
        return True

    def episode_scores(self) -> dict[str, float]:
        """clembench's TabooScorer: one request counted per turn; 100 / turns on a correct guess."""
        types = [[e["action"]["type"] for e in turn] for turn in self.log.turns]
        n_turns = len(types)
        invalid = False
        violated = 0
        won = False
        for turn in types:
            invalid = invalid or "invalid format" in turn
            won = won or "correct guess" in turn
            violated += int(invalid)
        requests = n_turns
        parsed = requests - violated
        if invalid:
            main = NAN
        else:
            main = 100.0 / n_turns if won else 0.0
        return outcome_scores(invalid, won, main, requests, parsed, violated)


@register("taboo")
class TabooTask(ClemTask):
    """clembench's Taboo: the describer clues a target word without it or its related words, the guesser guesses it."""

    game = TabooGame
    roles = (PLAYER_A, PLAYER_B)
    groups = (CLEMBENCH,)
    cost = clem_cost(episodes=60, turns=360, prompt_tokens=78_016)
