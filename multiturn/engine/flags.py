"""``triangulate play``'s command-line values: the bounds and argparse types of its numeric flags (the one check of
play's flags and of a suite's play entries, :func:`option_problem`), and :class:`PlayOptions`, a play run's settings
minus the player's model written back as flags (a suite's play cell)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from models.ref import ModelRef
from plumbing.checks import MAX_SEED, number_problem
from plumbing.errors import UserError

#: each role with a model of its own: its flags (and the keys of its ``config`` entries)
ROLE_FLAGS = {"player_b": ("model_b", "model_args_b"), "judge": ("judge_model", "judge_model_args")}


@dataclass(frozen=True)
class PlayOptions:
    """A play run's settings minus the player's model: what a suite's play cell asks of ``triangulate play``, as the
    flags :meth:`PlaySettings.from_args` reads back (:meth:`flags`, the one place they are written)."""

    limit: int | float | None = None
    seed: int | None = None
    gen_kwargs: Mapping[str, Any] = field(default_factory=dict)
    batch_size: int | str | None = None
    device: str | None = None
    max_live: int | None = None
    task_args: Mapping[str, Any] = field(default_factory=dict)
    judge_gen_kwargs: Mapping[str, Any] = field(default_factory=dict)
    judge: ModelRef | None = None
    player_b: ModelRef | None = None
    overwrite: bool = False

    def flags(self) -> list[str]:
        """``triangulate play``'s flags for these options (unset ones left out: play's defaults)."""
        out = shared_flags(self.limit, self.seed, self.gen_kwargs, self.batch_size, self.device)
        out += [] if self.max_live is None else ["--max_live", str(self.max_live)]
        out += ["--task_args", json_flag(self.task_args)] if self.task_args else []
        out += ["--judge_gen_kwargs", json_flag(self.judge_gen_kwargs)] if self.judge_gen_kwargs else []
        for role, ref in (("judge", self.judge), ("player_b", self.player_b)):
            out += [] if ref is None else model_flags(ref.model, ref.given, *(f"--{key}" for key in ROLE_FLAGS[role]))
        return out + (["--overwrite"] if self.overwrite else [])


def shared_flags(
    limit: int | float | None, seed: int | None, gen_kwargs: Mapping[str, Any], batch_size: int | str | None, device: str | None
) -> list[str]:
    """The flags ``triangulate play`` and ``triangulate eval`` share, as a suite's cell writes them (unset ones left
    out: the command's defaults)."""
    out: list[str] = []
    for flag, value in (("--limit", limit), ("--seed", seed)):
        out += [] if value is None else [flag, str(value)]
    out += ["--gen_kwargs", json_flag(gen_kwargs)] if gen_kwargs else []
    out += [] if batch_size is None else ["--batch_size", str(batch_size)]
    return out + (["--device", device] if device else [])


def json_flag(value: Mapping[str, Any]) -> str:
    """A mapping as the JSON object lm-eval's MergeDictAction reads (``--gen_kwargs``, ``--task_args``, ...)."""
    return json.dumps(dict(value), ensure_ascii=False, sort_keys=True)


def model_flags(model: str | None, model_args: Any, flag: str = "--model", args_flag: str = "--model_args") -> list[str]:
    """``--model M --model_args A`` (or a role's pair of flags): ``model_args`` passed on as the edge got them (a
    string as written, a mapping as JSON)."""
    out = [flag, model] if model else []
    if model_args is not None:
        out += [args_flag, model_args if isinstance(model_args, str) else json_flag(model_args)]
    return out


#: the bounds of play's numeric options, the one check of play's flags (:mod:`multiturn.cli`) and of a suite's entries
OPTION_BOUNDS: dict[str, dict[str, Any]] = {
    "limit": {"above": 0},
    "seed": {"integer": True, "minimum": 0, "maximum": MAX_SEED},
    "batch_size": {"integer": True, "minimum": 1},
}


def option_problem(key: str, value: Any) -> str | None:
    """What is wrong with a value of ``limit`` (None: every episode), ``seed`` or ``batch_size`` (None: the default;
    a count, as a number or its digits, or lm-eval's ``auto``/``auto:N``), as one phrase; None when nothing is."""
    if value is None and key != "seed":
        return None
    if key == "batch_size":
        if isinstance(value, str) and (value == "auto" or value.startswith("auto:")):
            return None
        text = value.strip() if isinstance(value, str) else value
        value = int(text) if isinstance(text, str) and text.isdigit() else text
    return number_problem(value, **OPTION_BOUNDS[key])


def batch_size_value(value: Any) -> int | str:
    """``--batch_size`` (play's argparse type): a positive integer or lm-eval's ``auto``/``auto:N``
    (:func:`option_problem`)."""
    if (problem := option_problem("batch_size", value)) is not None:
        raise UserError(f"--batch_size {problem}")
    return value if isinstance(value, str) and value.startswith("auto") else int(value)


def limit_value(value: float | None) -> int | float | None:
    """``--limit`` (in play's argparse type): a count (an int) or a fraction in (0, 1); None for every episode."""
    if value is None:
        return None
    if value <= 0:
        raise UserError(f"--limit must be positive, got {value:g}")
    return value if value < 1 else int(value)
