"""SPLAT situation puzzles (seed 004, Chen et al. NeurIPS 2024): a player asks, a judge model answers.

Protocol (seed 004 sections 3.1, 4, 5.2; the authors' ``puzzle_arena.py`` and ``metrics.py`` at
the pinned commit, summarised in upstream ``splat/prompts/NOTES.txt``): the player gets the role prompt and the incomplete story, then asks
yes/no questions or proposes its account; the judge, given story and hidden answer, replies yes / no /
irrelevant, or says "Congratulations" when the account matches. A round is one player turn and the
judge's reply; the game ends at the first reply containing "congratulations" (case-insensitive) or
after 15 rounds. Metrics (section 5.2, eq. 5): ``accuracy`` = hit, ``rounds`` = round of the hit
(15 on a miss), ``overall`` = hit / rounds x 100.

Message layout (every history alternates user/assistant and has no system turn, so any chat
template accepts it; the authors sent role prompts as an ``assistant`` turn over APIs and as a user
turn with local models):

- player: ``user: player_init + "\\n\\n" + story shown`` then its questions (assistant) and the
  judge's replies (user), lower-cased as the authors' code passes them on (``judge_response.lower()``).
- judge, a fresh context per question (the authors' judge keeps no question history):
  ``user: judge_init + "\\n\\n" + puzzle prompt + "\\n\\n" + ready message``,
  ``assistant: story shown``, ``user: the player's turn``.

Where we differ from the authors' code (documented on purpose): the story shown to the player is
fixed text, ``"The title of the puzzle is <title>. <story> Why?"`` (the form of seed 004 A.4),
instead of the judge model's own retelling (two extra judge calls upstream: an acknowledgement of
the puzzle, then the story after "I am ready. Please show me the story."), so a weak judge cannot
leak the answer before play starts and every player sees the same puzzle; the player does not
first reply to its role prompt alone (role prompt and story form its first turn). One judge call
per question (``judge_times`` = 1, the authors' default; "(5)" with a majority vote is a comment in their
``config.yaml``, not the paper). Each puzzle is played once: the paper's R, the number of replays
(``game_times`` in their config), is 1 (seed 004 Sec. 5.2: "We set R = 1 and the max round is 15").
For partial runs ``*_avg`` averages the difficulties present (the authors' ``Avg`` of Acc and O/A
divides by 3 even when a difficulty has no puzzle). Our addition: an empty player turn uses up its
round without a judge call and is answered with :data:`EMPTY_TURN_REPLY`.

Judge agreement (seed 004 Sec. 5.1, App. A.3, eq. 6, Table 2): "an agreement evaluation among them
w.r.t. judgements for both final predicted answers and the intermediate reasoning processes", per
difficulty. Given human labels for (puzzle, player turn) pairs (``yes``, ``no``, ``irrelevant`` for
questions: the reasoning process; ``matched``/``unmatched`` for final answers), each labelled turn is
put to the judge once, in the same context, and eq. 6 gives M = (1/m) sum_i delta(j_i, h_i) over the m
comparisons of the judge's verdict with every human label of the turn:
``judge_agreement_final`` / ``judge_agreement_reasoning`` (with their counts ``judge_labels_final`` /
``judge_labels_reasoning``), and for ``splat`` also ``*_easy``, ``*_medium``, ``*_hard``. When a turn
has labels from two or more people, human-human agreement is the share of agreeing pairs of their
labels (A.3: votes matched, matched, unmatched give 1/3): ``human_agreement_final`` /
``human_agreement_reasoning`` with ``human_pairs_*``. Give the labels with the task option
``human_labels`` (``triangulate play --task_args human_labels=PATH``; CSV or JSONL with columns ``id``,
``turn``, ``label``, optional ``rater``); several label sets (one per person) as
``human_labels=A.csv:B.csv`` (paths joined by ``os.pathsep``), each file one rater.

The task option ``max_rounds`` (``--task_args max_rounds=N``) lowers the 15-round cap for smoke runs
(failures then count N rounds); the cap is written to the results' ``configs`` entry, so such runs
are never mistaken for the published protocol.

Tasks: ``splat`` plays all 975 puzzles in upstream order and reports each metric overall (pooled),
per difficulty (``accuracy_easy`` ...) and as the unweighted mean of the difficulties
(``accuracy_avg``, the authors' ``Avg``); ``splat_easy``, ``splat_medium``, ``splat_hard`` play one
difficulty. ``splat`` is one task, not a group, so that ``--limit`` and the per-difficulty split
work on one run and the pooled and averaged figures both exist.
"""

from __future__ import annotations

import math
import os
import random
import re
from collections.abc import Mapping
from functools import partial
from typing import Any

from models.forms import CHANCE_WORDS
from multiturn.game import EpisodeSummary, Game, Message, Request, TaskSpec, TurnView
from multiturn.games.splat_judging import (
    AGREEMENT_WEIGHTS,
    SUCCESS_WORD,
    agreement_scores,
    judge_label,
    label_kind,
    read_human_labels,
)
from multiturn.registry import register
from plumbing.errors import UserError
from plumbing.stats import nanmean

MAX_ROUNDS = 15  # config.yaml game.max_round
#: seed 004 Sec. 5.2 "We set R = 1": each puzzle played once (R = replays, ``game_times`` in the authors' config.yaml)
REPLAYS = 1
#: judge calls per question (``judge_times`` in config.yaml, default 1; "(5)" there is a comment, not the paper)
JUDGE_TIMES = 1
DIFFICULTIES = ("easy", "medium", "hard")
EMPTY_TURN_REPLY = "Please ask a yes/no question or give your answer."
#: the authors' local-model setting: max_new_tokens=256 (greedy here, for reproducibility).
GEN_KWARGS: dict[str, Any] = {"max_gen_toks": 256, "do_sample": False, "temperature": 0.0}


# --- prompts -----------------------------------------------------------------------------------


def flat(text: str) -> str:
    """Newlines to spaces, as the authors' code does before filling the judge template."""
    return str(text).replace("\n", " ")


def story_with_why(story: str) -> str:
    """The story as the authors' code passes it: ``story + " Why?"``, newlines flattened."""
    return flat(f"{story} Why?")


def story_shown(puzzle: Mapping[str, Any]) -> str:
    """The incomplete story the player sees, in the form of seed 004 A.4 ("The title of the puzzle is ...")."""
    return f"The title of the puzzle is {flat(puzzle['title'])}. {story_with_why(puzzle['story'])}"


def judge_puzzle_prompt(template: str, puzzle: Mapping[str, Any]) -> str:
    """The authors' ``prompt_puzzle`` %-template filled with (title, story + " Why?", answer)."""
    return template % (flat(puzzle["title"]), story_with_why(puzzle["story"]), flat(puzzle["answer"]))


def player_opening(prompts: Mapping[str, str], puzzle: Mapping[str, Any]) -> list[Message]:
    return [{"role": "user", "content": f"{prompts['player_init']}\n\n{story_shown(puzzle)}"}]


def judge_messages(prompts: Mapping[str, str], puzzle: Mapping[str, Any], player_turn: str) -> list[Message]:
    """The judge's context for one player turn (no earlier questions, as in the authors' code)."""
    setup = "\n\n".join(
        (prompts["judge_init"], judge_puzzle_prompt(prompts["judge_puzzle_template"], puzzle), prompts["player_ready_message"])
    )
    return [
        {"role": "user", "content": setup},
        {"role": "assistant", "content": story_shown(puzzle)},
        {"role": "user", "content": player_turn},
    ]


# --- parsing and scoring (pure) ---------------------------------------------------------------


def episode_scores(hit: bool, rounds: int) -> dict[str, float]:
    """Seed 004 5.2: accuracy = hit, rounds = rounds used (max on a miss), overall = hit / rounds x 100."""
    return {"accuracy": float(hit), "rounds": float(rounds), "overall": 100.0 * float(hit) / rounds}


def round_cap(value: Any) -> int:
    """The ``max_rounds`` task option as a positive integer (an int, or a string of digits from the CLI)."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
        raise UserError(f"--task_args max_rounds={value!r} must be a positive integer (the published protocol uses {MAX_ROUNDS})")
    return int(text)


# --- the game -------------------------------------------------------------------------------


class SplatGame(Game):
    """One puzzle: player turn, judge reply, up to ``max_rounds`` rounds; then any labelled turns for agreement."""

    def __init__(
        self,
        instance: Mapping[str, Any],
        prompts: Mapping[str, str],
        gen_kwargs: Mapping[str, Any] | None = None,
        human_labels: list[tuple[str, list[str]]] | None = None,
        max_rounds: int = MAX_ROUNDS,
        by_difficulty: bool = False,
    ):
        super().__init__(instance)
        self.by_difficulty = by_difficulty
        self.prompts = dict(prompts)
        self.gen_kwargs = dict(gen_kwargs or GEN_KWARGS)
        self.max_rounds = max_rounds
        self.player_history: list[Message] = player_opening(self.prompts, self.instance)
        self.rounds: list[dict[str, Any]] = []
        self.hit = False
        self._waiting = "player"  # "player" | "judge" | "agreement" | "" (over)
        self._pending_turn = ""
        self._agreement_todo = list(human_labels or [])
        self._agreement: list[dict[str, Any]] = []
        self.transcript.append({"role": "user", "to": "player", "content": self.player_history[0]["content"]})

    @property
    def done(self) -> bool:
        return self._waiting == ""

    def next_request(self) -> Request | None:
        if self._waiting == "player":
            return Request(messages=[dict(m) for m in self.player_history], role="player", gen_kwargs=dict(self.gen_kwargs))
        if self._waiting == "judge":
            return Request(
                messages=judge_messages(self.prompts, self.instance, self._pending_turn), role="judge", gen_kwargs=dict(self.gen_kwargs)
            )
        if self._waiting == "agreement":
            turn = self._agreement_todo[0][0]
            return Request(messages=judge_messages(self.prompts, self.instance, turn), role="judge", gen_kwargs=dict(self.gen_kwargs))
        return None

    def on_reply(self, reply: str) -> None:
        reply = "" if reply is None else str(reply)
        if self._waiting == "player":
            self._on_player(reply)
        elif self._waiting == "judge":
            self._on_judge(reply)
        elif self._waiting == "agreement":
            turn, humans = self._agreement_todo.pop(0)
            self._agreement.append(
                {"turn": turn, "humans": list(humans), "kind": label_kind(humans[0]), "judge": reply, "judge_label": judge_label(reply)}
            )
            self.transcript.append({"role": "judge", "phase": "agreement", "content": reply})
            self._advance_after_game()
        else:
            raise RuntimeError("on_reply called on a finished SPLAT game")

    def _on_player(self, reply: str) -> None:
        self.transcript.append({"role": "player", "content": reply})
        self.player_history.append({"role": "assistant", "content": reply})
        if not reply.strip():
            self._close_round(reply, EMPTY_TURN_REPLY, label="empty")
            return
        self._pending_turn = reply
        self._waiting = "judge"

    def _on_judge(self, reply: str) -> None:
        self.transcript.append({"role": "judge", "content": reply})
        self._close_round(self._pending_turn, reply, label=judge_label(reply))

    def _close_round(self, turn: str, answer: str, label: str) -> None:
        self.rounds.append({"round": len(self.rounds) + 1, "player": turn, "judge": answer, "judge_label": label})
        if label == SUCCESS_WORD:
            self.hit = True
        if self.hit or len(self.rounds) >= self.max_rounds:
            self._advance_after_game()
            return
        shown = answer if label == "empty" else answer.lower()  # the authors' code passes reply.lower() on
        self.player_history.append({"role": "user", "content": shown})
        if label == "empty":
            self.transcript.append({"role": "user", "to": "player", "content": shown})
        self._waiting = "player"

    def _advance_after_game(self) -> None:
        self._waiting = "agreement" if self._agreement_todo else ""

    def scores(self) -> dict[str, float]:
        rounds = len(self.rounds) if self.hit else self.max_rounds
        out = episode_scores(self.hit, rounds)
        out.update(agreement_scores(self._agreement))
        if self.by_difficulty and self.instance.get("difficulty") in DIFFICULTIES:
            out.update({f"{k}_{self.instance['difficulty']}": v for k, v in list(out.items())})
        return out

    def reply_view(self, request: Request, reply: str) -> TurnView:
        if request.role != "judge":
            return TurnView(request.role, reply, why="" if reply.strip() else "empty turn: uses up its round without a judge call")
        label = judge_label(reply)
        why = "the puzzle is solved" if label == SUCCESS_WORD else ""
        if label == "other":
            why = "the judge's answer has none of congratulations / yes / no / irrelevant"
        if self._agreement and self._agreement[-1]["judge"] is reply:
            why = f"agreement check against human labels {', '.join(self._agreement[-1]['humans'])}"
        return TurnView(request.role, reply, reading=label, verdict=True if label == SUCCESS_WORD else None, why=why)

    def record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "difficulty": self.instance.get("difficulty"),
            "level": self.instance.get("level"),
            "hit": self.hit,
            "rounds": self.rounds,
        }
        if self._agreement:
            rec["agreement"] = self._agreement
        return rec


# --- tasks ----------------------------------------------------------------------------------


class SplatTask(TaskSpec):
    """SPLAT over one difficulty (``splat_<difficulty>``) or all puzzles (``splat``)."""

    roles = ("player", "judge")
    gen_kwargs = dict(GEN_KWARGS)

    def __init__(self, difficulty: str | None = None, *, max_rounds: int | str = MAX_ROUNDS, human_labels: str | os.PathLike | None = None):
        """``max_rounds`` and ``human_labels`` are the task options (``--task_args``); values may arrive as strings."""
        if difficulty is not None and difficulty not in DIFFICULTIES:
            raise UserError(f"SPLAT difficulty {difficulty!r} is not one of {', '.join(DIFFICULTIES)}")
        self.difficulty = difficulty
        self.max_rounds = round_cap(max_rounds)
        self.labels_path = ("" if human_labels is None else str(human_labels).strip()) or None
        self._labels = read_human_labels(self.labels_path) if self.labels_path else {}
        self._prompts: dict[str, str] | None = None

    def prompts(self) -> dict[str, str]:
        if self._prompts is None:
            from datasets_build.splat import load_prompts

            self._prompts = load_prompts()
        return self._prompts

    def instances(self, seed: int) -> list[dict[str, Any]]:
        """Puzzles in upstream order (the seed does not change them: the game has no randomness)."""
        from datasets_build.splat import load_splat

        rows = load_splat()["test"]
        return [dict(r) for r in rows if self.difficulty is None or r["difficulty"] == self.difficulty]

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return SplatGame(
            instance,
            self.prompts(),
            self.gen_kwargs,
            human_labels=self._labels.get(str(instance["id"])),
            max_rounds=self.max_rounds,
            by_difficulty=self.difficulty is None,
        )

    def aggregate(self, episode_scores: list[dict[str, float]]) -> dict[str, float]:
        return aggregate_splat(episode_scores)

    def summary(self, record: Mapping[str, Any]) -> EpisodeSummary:
        """The round of the accepted answer (or none); the puzzle above (the judge sees the answer)."""
        instance, n = record.get("instance") or {}, len(record.get("rounds") or [])
        why = f"The judge accepted the answer in round {n}." if record.get("hit") else f"No answer accepted in {n} rounds."
        facts = [(key, str(instance[key])) for key in ("title", "story", "answer", "level_label") if key in instance]
        outcome = "solved" if record.get("hit") else "not solved"
        return EpisodeSummary(
            why + " Accuracy = solved; rounds = questions used.",
            facts,
            "the puzzle (the judge sees the answer)",
            outcome,
            target=str(instance.get("answer", "")),
        )

    def judge_label(self, reply: str) -> str:
        return judge_label(reply)

    def chance_reply(self, request: Request, rng: random.Random) -> str:
        """The judge: a random label; the player: a yes/no question about a random word of the puzzle's story."""
        if request.role == "judge":
            return rng.choice(["Yes", "No", "Irrelevant"])
        words = re.findall(r"[A-Za-z]{4,}", request.first[-400:]) or list(CHANCE_WORDS)
        return f"Is it about the {rng.choice(words).lower()}?"

    def higher_is_better(self) -> dict[str, bool]:
        out = {}
        for metric, better in (("accuracy", True), ("rounds", False), ("overall", True)):
            out[metric] = better
            if self.difficulty is None:
                out.update({f"{metric}_{d}": better for d in (*DIFFICULTIES, "avg")})
        for metric in AGREEMENT_WEIGHTS:
            out[metric] = True
            if self.difficulty is None:
                out.update({f"{metric}_{d}": True for d in DIFFICULTIES})
        return out

    def config(self) -> dict[str, Any]:
        cfg = super().config()
        cfg.update(
            {
                "max_rounds": self.max_rounds,
                "difficulty": self.difficulty or "all",
                "human_labels": self.labels_path,
                "replays": REPLAYS,
                "judge_calls_per_question": JUDGE_TIMES,
            }
        )
        return cfg


def aggregate_splat(episode_scores: list[Mapping[str, float]]) -> dict[str, float]:
    """Means of accuracy / rounds / overall (pooled) and of their per-difficulty keys, the unweighted mean
    of the difficulties present (``*_avg``, the authors' ``Avg``), and eq. 6's agreements pooled over
    every comparison (each episode's share weighted by its count), per kind and per difficulty."""
    out: dict[str, float] = {}
    for metric in ("accuracy", "rounds", "overall"):
        out[metric] = nanmean(s.get(metric, math.nan) for s in episode_scores)
        per = {d: nanmean(s.get(f"{metric}_{d}", math.nan) for s in episode_scores) for d in DIFFICULTIES}
        if any(f"{metric}_{d}" in s for s in episode_scores for d in DIFFICULTIES):
            out.update({f"{metric}_{d}": v for d, v in per.items()})
            out[f"{metric}_avg"] = nanmean(per.values())
    for metric, weight in AGREEMENT_WEIGHTS.items():
        for suffix in ("", *(f"_{d}" for d in DIFFICULTIES)):
            pairs = [(s[metric + suffix], s[weight + suffix]) for s in episode_scores if s.get(weight + suffix)]
            if pairs:
                n = sum(count for _, count in pairs)
                out[metric + suffix] = sum(share * count for share, count in pairs) / n
                out[weight + suffix] = float(n)
    return out


register("splat")(SplatTask)  # difficulty is positional, so only max_rounds and human_labels are options
for _difficulty in DIFFICULTIES:
    register(f"splat_{_difficulty}")(partial(SplatTask, _difficulty))
