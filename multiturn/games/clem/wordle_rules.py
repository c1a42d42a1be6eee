"""Wordle's rules as clembench v1.6 plays them, pure functions apart from the game master
(:mod:`multiturn.games.clem.wordle`): the keyword parse of a reply, why a guess is refused, the letter feedback
and its tiles, and the Main Score (``speed``) of a won game."""

from __future__ import annotations


def first_unmarked_occurrence_feedback(guess: str, target: str) -> str:
    """Letter feedback ``c<red> r<red> ... e<yellow>`` by clembench v1.6's rule (``GuessValidator.validate``,
    ``wordle/utils/guessvalidator.py`` of the v1.6 run), which is not standard Wordle's.

    The rule: the exact target word is all green. Otherwise each guess letter, left to right, is
    compared with the *first occurrence of that letter in the target not yet marked*: none left ->
    red; that occurrence at the letter's own position -> green (the occurrence is marked); elsewhere
    -> red when the guess has the same letter at that occurrence's position (that letter will claim
    it), else yellow (marked). A later occurrence that would make the letter green is not looked at:
    "crane" for "queue" gives ``e<yellow>`` (the first ``e`` of "queue" is at position 3), where
    standard Wordle gives ``e<green>``. The model must see what v1.6 showed, so the game uses this
    (gpt-4-turbo's published v1.6 episode for "queue" was told ``e<yellow>`` three times and lost).
    """
    if guess == target:
        return " ".join(f"{c}<green>" for c in guess)
    marked: set[int] = set()
    colours = []
    for index, letter in enumerate(guess):
        at = target.find(letter)
        while at != -1 and at in marked:
            at = target.find(letter, at + 1)
        if at == -1:
            colours.append("red")
        elif at == index:
            colours.append("green")
            marked.add(at)
        elif at < len(guess) and guess[at] == letter:
            colours.append("red")
        else:
            colours.append("yellow")
            marked.add(at)
    return " ".join(f"{c}<{col}>" for c, col in zip(guess, colours))


def find_keyword(text: str, keyword: str) -> str:
    """clembench's keyword parse: the text after ``<keyword>:`` up to the line end, else ``INVALID_FORMAT``."""
    marker = f"{keyword}:"
    start = text.find(marker)
    end = text.find("\n", start)
    if start == -1 or end == -1:
        return "CONTEXT_EXCEEDED_ERROR" if "CONTEXT_EXCEEDED_ERROR" in text else "INVALID_FORMAT"
    return text[start + len(marker) : end].strip()


def guess_error(word: str, words: frozenset[str], length: int = 5) -> str | None:
    """Why a parsed guess is refused (clembench's ``check_for_errors``), or None."""
    if word in ("INVALID_FORMAT", "CONTEXT_EXCEEDED_ERROR"):
        return word
    if not word.isalpha():
        return "INVALID_WORD"
    if len(word) != length:
        return "INVALID_WORD_LENGTH"
    if word not in words:
        return "NOT_VALID_ENGLISH_WORD"
    return None


#: ``speed`` task option: clembench v1.6's Main Score (default) or v1.5's (seed 003 App. E ran v1.5)
SPEED_VERSIONS = ("v1.6", "v1.5")


def speed_score(n_guesses: int, game_name: str, version: str = "v1.6") -> float:
    """clembench Main Score of a won game (``ComputeMetrics.speed``). v1.6 (f8d61d6, "updated evaluation for
    classic variant"): standard ``wordle`` 100 / 50 / 30 / 20 for <= 3 / 4 / 5 / 6 guesses, the variants
    round(100 / guesses, 2). v1.5 (e4c18b9): "If the game is won in the first turn, speed is 100, if the
    game is won in the second turn, speed is 100/2, 3rd turn is 100/3 and so on" for every variant."""
    if version not in SPEED_VERSIONS:
        raise ValueError(f"speed must be one of {', '.join(SPEED_VERSIONS)}, got {version!r}")
    if game_name != "wordle" or version == "v1.5":
        return round(100 / n_guesses, 2)
    if n_guesses <= 3:
        return 100.0
    return {4: 50.0, 5: 30.0}.get(n_guesses, 20.0)


def feedback_tiles(feedback: str) -> list[tuple[str, str]]:
    """``c<red> r<green> ...`` as (letter, colour) tiles."""
    return [(part.split("<")[0], part.split("<")[1].rstrip(">")) for part in feedback.split(" ") if "<" in part]
