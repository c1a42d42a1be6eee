"""Image game (clembench v1.6, ``imagegame/master.py`` at 945503b; seed 002 section 3.1).

Player 1 describes a 5x5 letter grid one ``Instruction: ...`` per turn (a single line) and ends with
``Instruction: DONE``; Player 2 redraws the grid after every instruction and must answer with the
bare grid (five rows of five ``[A-Z▢]`` cells). Any other reply aborts the episode. At most 25
turns. Main score: F1 (0-100) of the last drawn grid against the target over non-empty cells;
success when F1 >= 99; NaN when aborted.

v1.6 defect handled: when Player 1 says DONE at once, v1.6's scorer divides by the number of
played turns (zero) and the episode gets no scores at all. We score it as played and lost with
main score 0 (the F1 of the still-empty grid; clembench's evaluator also yields 0 there) and NaN
for the per-turn averages.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import regex  # the instances' patterns, re-compatible (VERSION0); ~4x faster than re on a long run of newlines

from multiturn.game import Request
from multiturn.games.clem.common import NAN, PLAYER_A, PLAYER_B, ClemGame, MasterLoop, outcome_scores
from multiturn.games.clem.task import CLEMBENCH, ClemTask, clem_cost
from multiturn.registry import register

GIVER = "Player 1"
FOLLOWER = "Player 2"
EMPTY = "▢"


def grid_size(grid: str) -> tuple[int, int]:
    rows = grid.strip().split("\n")
    return len(rows), len(rows[0].split(" "))


def grid_f1(target: str, drawn: str) -> tuple[float, float, float]:
    """clembench's image-game evaluator: precision, recall, F1 (each 0-100, rounded) over non-empty cells.

    Raises ZeroDivisionError (no non-empty cell drawn or in the target) or IndexError (ragged rows),
    which v1.6's scorer catches by keeping the previous turn's values.
    """
    if grid_size(target) != grid_size(drawn):
        return 0.0, 0.0, 0.0
    target_rows = target.strip().split("\n")
    drawn_rows = drawn.strip().split("\n")
    hits_r = total_r = hits_p = total_p = 0
    for t_row, d_row in zip(target_rows, drawn_rows):
        t_cells, d_cells = t_row.split(" "), d_row.split(" ")
        for c, t_cell in enumerate(t_cells):
            same = t_cell.lower() == d_cells[c].lower()
            if t_cell != EMPTY:
                total_r += 1
                hits_r += same
            if d_cells[c] != EMPTY:
                total_p += 1
                hits_p += same
    recall = round(hits_r / float(total_r), 4)
    precision = round(hits_p / float(total_p), 4)
    f1 = 0.0 if precision == 0 or recall == 0 else round(2 * precision * recall / (precision + recall), 4)
    return round(100 * precision, 0), round(100 * recall, 0), round(100 * f1, 0)


def reply_patterns(instance: Mapping[str, Any]) -> tuple[regex.Pattern, regex.Pattern, regex.Pattern]:
    """The instance's DONE, instruction (both case-insensitive) and grid patterns, compiled as v1.6 uses them."""
    flags = regex.VERSION0
    return (
        regex.compile(instance["player_1_terminate_pattern"], flags | regex.IGNORECASE),
        regex.compile(instance["player_1_response_pattern"], flags | regex.IGNORECASE),
        regex.compile(instance["player_2_response_pattern"], flags),
    )


def random_grid(rng: random.Random, rows: int = 5, cols: int = 5) -> str:
    return "\n".join(" ".join(rng.choice("X" + EMPTY * 3) for _ in range(cols)) for _ in range(rows))


class ImageGame(ClemGame):
    game_name = "imagegame"

    @staticmethod
    def chance_reply(request: Request, rng: random.Random) -> str | None:
        """The drawer: a random 5x5 grid; the describer: a random cell to fill, sometimes DONE."""
        if "return only the grid" in request.first:
            return random_grid(rng)
        if "What is your next instruction?" in request.last:
            if len(request.messages) > 6 and rng.random() < 0.3:
                return "Instruction: DONE"
            return f"Instruction: Put an {rng.choice('XYZ')} in row {rng.randint(1, 5)} column {rng.randint(1, 5)}"
        return None

    def expected_format(self, request: Request) -> str:
        if request.role == PLAYER_A:
            return "the describer must reply 'Instruction: ...' (or 'Instruction: DONE')"
        return "the drawer must reply with the grid only (rows of cells separated by spaces)"

    def play(self) -> MasterLoop:
        inst = self.instance
        self.log.players = {"GM": "Game master for imagegame", "Player_1": self.model_name(GIVER), "Player_2": self.model_name(FOLLOWER)}
        terminate_rx, instruction_rx, grid_rx = reply_patterns(inst)
        question = inst["player_1_question"]
        giver = [
            {"role": "system", "content": ""},
            {"role": "user", "content": inst["player_1_prompt_header"] + "\n" + inst["target_grid"] + "\n" + question + "\n"},
        ]
        follower = [{"role": "system", "content": ""}]
        max_turns = int(inst["grid_dimension"]) ** 2
        self.requests = self.parsed = self.violated = 0
        self.aborted = False
        self.grids: list[str] = []
        self.instructions: list[str] = []
        turn = 0
        while turn < max_turns:
            self.log.next_turn()
            if turn > 0:
                giver.append({"role": "user", "content": question})
            instruction = yield from self.ask(GIVER, giver, role=PLAYER_A)
            giver.append({"role": "assistant", "content": instruction})
            if terminate_rx.match(instruction):
                return
            self.requests += 1
            if not instruction_rx.match(instruction):
                self.log.to_self("invalid format", "Invalid instruction format", original_content=instruction)
                self.violated += 1
                self.aborted = True
                return
            parsed = instruction.split("\n")[0]
            self.parsed += 1
            self.log.to_self("parse", parsed, original_content=instruction)
            self.instructions.append(parsed)
            text = inst["player_2_prompt_header"] + "\n" + parsed if turn == 0 else parsed
            follower.append({"role": "user", "content": text})
            grid = yield from self.ask(FOLLOWER, follower, role=PLAYER_B)
            follower.append({"role": "assistant", "content": grid})
            self.requests += 1
            if not grid_rx.match(grid):
                self.log.to_self("invalid format", "Invalid grid format", original_content=grid)
                self.violated += 1
                self.aborted = True
                return
            self.parsed += 1
            self.log.to_self("parse", grid, original_content=grid)
            self.grids.append(grid)
            turn += 1

    def episode_scores(self) -> dict[str, float]:
        precision = recall = f1 = 0.0
        for grid in self.grids:
            try:
                precision, recall, f1 = grid_f1(self.instance["target_grid"], grid)
            except (ZeroDivisionError, IndexError):
                pass
        # DONE at once (no grid drawn): v1.6 divides by zero here; the empty grid scores 0 (see module doc)
        scores = outcome_scores(self.aborted, f1 >= 99, f1, self.requests, self.parsed, self.violated)
        played = not self.aborted
        scores.update(precision=precision if played else NAN, recall=recall if played else NAN, f1=f1 if played else NAN)
        return scores


@register("imagegame")
class ImageGameTask(ClemTask):
    """clembench's image game: the instruction giver describes a letter grid, the drawer draws it."""

    game = ImageGame
    roles = (PLAYER_A, PLAYER_B)
    groups = (CLEMBENCH,)
    cost = clem_cost(episodes=40, turns=468, prompt_tokens=217_530)
