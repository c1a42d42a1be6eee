"""Test-only tasks and models for the engine tests (not part of the product).

``CountTask``: each episode asks the player for the numbers 1..n, one per turn; a reply is right
when it equals the number. ``python tests/support/engine_helpers.py play ...`` runs ``triangulate play``
with the test task ``count_test`` and the test model ``scripted-count`` registered (the kill and
``accelerate launch`` tests use it as a subprocess).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lm_eval.api.model import LM  # noqa: E402

from models.scripted import ScriptedLM  # noqa: E402
from multiturn.game import Game, Request, TaskSpec  # noqa: E402


class CountGame(Game):
    def __init__(self, instance: Mapping[str, Any]):
        super().__init__(instance)
        self.turn = 0
        self.right = 0
        self.history: list[dict[str, str]] = [{"role": "system", "content": "Say the number you are shown."}]

    def next_request(self) -> Request | None:
        if self.done:
            return None
        self.history.append({"role": "user", "content": str(self.turn + 1)})
        return Request(messages=list(self.history))

    def on_reply(self, reply: str) -> None:
        target = str(self.turn + 1)
        self.right += int(reply.strip() == target)
        self.history.append({"role": "assistant", "content": reply})
        self.transcript.append({"turn": self.turn, "target": target, "reply": reply})
        self.turn += 1

    @property
    def done(self) -> bool:
        return self.turn >= int(self.instance["n"])

    def scores(self) -> dict[str, float]:
        return {"accuracy": self.right / int(self.instance["n"])}


class CountTask(TaskSpec):
    name = "count_test"
    gen_kwargs = {"max_gen_toks": 4}

    def __init__(self, n_episodes: int = 6, lengths: tuple[int, ...] = (3, 1, 5)):
        self.n_episodes = n_episodes
        self.lengths = lengths

    def instances(self, seed: int) -> list[dict[str, Any]]:
        return [{"id": f"ep{i:03d}", "n": self.lengths[i % len(self.lengths)]} for i in range(self.n_episodes)]

    def make_game(self, instance: Mapping[str, Any], seed: int) -> Game:
        return CountGame(instance)

    def higher_is_better(self) -> dict[str, bool]:
        return {"accuracy": True}


def echo_last(messages: list[dict]) -> str:
    """The perfect counter: repeat the last user message."""
    return messages[-1]["content"]


class SlowCountLM(ScriptedLM):
    """Scripted counter that sleeps per request ($COUNT_DELAY seconds) and knows its accelerate rank."""

    def __init__(self, delay: float | None = None, **kwargs):
        super().__init__(echo_last, name="scripted-count")
        self.delay = float(os.environ.get("COUNT_DELAY", "0") if delay is None else delay)
        world = int(os.environ.get("WORLD_SIZE", "1"))
        if world > 1:
            import torch.distributed as dist

            if not dist.is_initialized():
                dist.init_process_group("gloo")
            self._rank, self._world_size = dist.get_rank(), dist.get_world_size()
        self.log_path = os.environ.get("COUNT_LOG")

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        time.sleep(self.delay * len(requests))
        if self.log_path:
            with open(self.log_path, "a") as fh:
                for _req in requests:
                    fh.write(f"{self._rank}\n")
        return super().generate_until(requests, disable_tqdm)

    def gather_object(self, obj, dst=0):
        import torch.distributed as dist

        out = [None] * self._world_size if self._rank == dst else None
        dist.gather_object(obj, out, dst=dst)
        return out

    def barrier(self) -> None:
        import torch.distributed as dist

        dist.barrier()

    @classmethod
    def create_from_arg_obj(cls, arg_dict, additional_config=None):
        return cls(**{k: v for k, v in arg_dict.items() if k == "delay"})


def register_test_task_and_model() -> None:
    """Register ``count_test`` in the play registry, ``scripted-count`` and ``scripted-broken`` (always down) as play backends."""
    from models.loading import register_lm_class
    from multiturn import registry

    if "count_test" not in registry.task_names():
        registry.register("count_test")(lambda: CountTask(n_episodes=int(os.environ.get("COUNT_EPISODES", "6"))))
    register_lm_class("scripted-count", SlowCountLM)
    register_lm_class("scripted-broken", BrokenLM)


class BrokenLM(LM):
    """Always raises: a backend that is down."""

    def generate_until(self, requests, disable_tqdm: bool = False):
        raise ConnectionError("backend down")

    def apply_chat_template(self, chat_history, add_generation_prompt: bool = True) -> str:
        return str(chat_history)

    @property
    def tokenizer_name(self) -> str:
        return "broken"

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError


if __name__ == "__main__":
    import argparse

    from multiturn import cli as play_cli
    from triangulation.cli.main import _guard

    register_test_task_and_model()
    parser = argparse.ArgumentParser(prog="engine_helpers")
    play_cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(sys.argv[1:])
    sys.exit(_guard(lambda: args.func(args)))
