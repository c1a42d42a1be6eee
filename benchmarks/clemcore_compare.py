"""Episodes per second of one clembench game, same model and instances: our runner vs clemcore.

    python benchmarks/clemcore_compare.py [--game wordle|taboo] --episodes 4 --clemcore_python /path/to/venv/bin/python

Games: the first N upstream v1.6 instances ($TRIANGULATE_UPSTREAM/clembench) of Wordle (default) or
Taboo, greedy decoding, at most --max_tokens new tokens per reply (default: clembench's 100), one
episode at a time on both sides. Ours is the runner's default path for ``--model hf``
(:class:`models.prefix_cache.PrefixCacheHFLM`: KV prefix reuse plus history drafts).

Model: the embedded SmolLM2-135M-Instruct. clemcore's ``huggingface_local`` backend loads
``AutoModelForCausalLM.from_pretrained(huggingface_id)`` and ``AutoTokenizer.from_pretrained``
without a ``gguf_file`` argument, so it cannot read the GGUF file itself. The script therefore
dequantises the GGUF once into a transformers folder (--model_dir, cached) and both runners load
that folder: ours through lm-eval's ``hf`` backend (``pretrained=<folder>``), clemcore through a
model spec whose ``huggingface_id`` is the folder.

clemcore (PyPI ``clemcore``, extra ``bench``) pulls datasets 4.x and huggingface_hub 1.x, which
must not replace this project's; install it in a separate environment that still sees the
project's torch/transformers and pass its python::

    python -m venv --system-site-packages /tmp/clemcore-venv
    /tmp/clemcore-venv/bin/pip install clemcore==3.7.2

How clemcore plays:
- Wordle: the v1.6 Wordle code targets the older clemgame API and clemcore ships no Wordle, so
  clemcore's backend drives our Wordle game master (``multiturn.games.clem.wordle``, the v1.6 rules): every
  turn the full message history goes to clemcore's ``Model.generate_response``, which is what
  clemcore's game masters call. The rules are the same code on both sides, so replies can be
  compared turn by turn; clemcore's interaction-log bookkeeping is not timed (this favours clemcore).
- Taboo: clemcore's whole ``run()`` on a port of the v1.6 Taboo rules to clemcore's legacy
  ``DialogueGameMaster`` (written here, in ``CLEMCORE_TABOO``), on the same instance file.
The runners alternate (--repeats) because a shared machine's load changes by the minute; the
script prints every run, the median episodes/s of both, their ratio, and how many episodes got
identical replies.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from statistics import median

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CLEMCORE_TABOO = r'''
import string
from nltk.stem.snowball import SnowballStemmer
from clemcore.clemgame import GameBenchmark, GameScorer, Player
from clemcore.clemgame.legacy.master import DialogueGameMaster

STOP = set(w for w in open(STOPWORDS, encoding="utf-8").read().split() if not w.startswith("#"))
STEM = SnowballStemmer("english").stem
PUNCT = str.maketrans(dict.fromkeys(string.punctuation))


class Describer(Player):
    def _custom_response(self, context):
        return "CLUE: a thing"


class Guesser(Player):
    def _custom_response(self, context):
        return "GUESS: thing"


class Taboo(DialogueGameMaster):
    """The v1.6 Taboo rules (taboo/master.py at 542f8db) on clemcore's legacy DialogueGameMaster."""

    def __init__(self, game_spec, experiment, player_models):
        super().__init__(game_spec, experiment, player_models)
        self.max_turns = experiment["max_turns"]

    def _on_setup(self, **inst):
        n = str(self.max_turns)
        related = "\n".join(f"- {w}" for w in inst["related_word"])
        describer = self.experiment["describer_initial_prompt"].replace("$TARGET_WORD$", inst["target_word"])
        describer = describer.replace("$REL_WORD$", related).replace("$N$", n)
        self.guesser_prompt = self.experiment["guesser_initial_prompt"].replace("$N$", n)
        self.target, self.related = inst["target_word"], inst["related_word"]
        self.describer = Describer(self.player_models[0])
        self.guesser = Guesser(self.player_models[1])
        self.add_player(self.describer, initial_context=describer)
        self.add_player(self.guesser)
        self.invalid, self.clue_error, self.guess = False, None, None

    def _validate_player_response(self, player, response):
        prefix = "CLUE:" if player is self.describer else "GUESS:"
        if not response.startswith(prefix):
            self.invalid = True
            return False
        if player is self.guesser:
            self.guess = response.replace("GUESS:", "").strip().lower().translate(PUNCT)
            return True
        words = [w for w in response.replace("CLUE:", "").strip().lower().translate(PUNCT).split(" ") if w not in STOP]
        banned = {STEM(self.target)} | {STEM(r) for r in self.related}
        if any(STEM(w) in banned for w in words):
            self.clue_error = "forbidden word"
            return False
        return True

    def _on_valid_player_response(self, player, parsed):
        if player is self.describer:
            text = f"{self.guesser_prompt}\n\n{parsed}" if self.current_round == 0 else parsed
            self.set_context_for(self.guesser, text)
        elif self.guess != self.target:
            self.set_context_for(self.describer, parsed)

    def _does_game_proceed(self):
        if self.invalid or self.clue_error or self.guess == self.target:
            return False
        return self.current_round < self.max_turns


class TabooScorer(GameScorer):
    def __init__(self, game_name, experiment, game_instance):
        super().__init__(game_name, experiment, game_instance)

    def compute_episode_scores(self, interactions):
        pass


class TabooBenchmark(GameBenchmark):
    def create_game_master(self, experiment, player_models):
        return Taboo(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment, game_instance):
        return TabooScorer(self.game_name, experiment, game_instance)
'''

CLEMCORE_WORDLE = r"""
import json, os, sys, time
sys.path.insert(0, os.environ["TRIANGULATE_REPO"])
from clemcore import backends
from multiturn.registry import get_task
spec = json.loads(sys.argv[1])
model = backends.ModelSpec.from_dict(spec["model"])
gen_args = {"temperature": 0.0, "max_tokens": spec["max_tokens"]}
loaded = backends.load_models([model], gen_args)[0]
task = get_task("wordle")
episodes = []
start = time.perf_counter()
for index, instance in enumerate(task.instances(0)[: spec["episodes"]]):
    game = task.make_game(instance, seed=index)
    replies = []
    while (request := game.next_request()) is not None:
        _, _, text = loaded.generate_response([dict(m) for m in request.messages])
        replies.append(text)
        game.on_reply(text)
    episodes.append(replies)
print(json.dumps({"seconds": time.perf_counter() - start, "replies": episodes}))
"""

CLEMCORE_RUNNER = r"""
import json, sys, time
from pathlib import Path
from clemcore import backends
from clemcore.cli import run
spec = json.loads(sys.argv[1])
model = backends.ModelSpec.from_dict(spec["model"])
gen_args = {"temperature": 0.0, "max_tokens": spec["max_tokens"]}
loaded = backends.load_models([model, model], gen_args)  # load once, outside the timed run
backends.load_models = lambda *args, **kwargs: loaded
start = time.perf_counter()
run("taboo_v16", [model, model], gen_args=gen_args, results_dir_path=Path(spec["results"]), batch_size=1)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def dequantised_model(model_dir: Path) -> Path:
    """The embedded SmolLM2 GGUF as a plain transformers folder (written once)."""
    if (model_dir / "config.json").is_file():
        return model_dir
    import copy

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from models.default_model import GGUF_FILE, smollm2_dir

    src = str(smollm2_dir())
    tokenizer = AutoTokenizer.from_pretrained(src, gguf_file=GGUF_FILE)
    quantised = AutoModelForCausalLM.from_pretrained(src, gguf_file=GGUF_FILE)
    config = copy.deepcopy(quantised.config)
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(quantised.state_dict())
    model.generation_config = quantised.generation_config
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return model_dir


def taboo_instances(n: int) -> dict:
    """The upstream v1.6 Taboo instance file cut to its first ``n`` episodes (clembench's order)."""
    from datasets_build.clembench_upstream import game_dir, read_json

    data = json.loads(json.dumps(read_json(game_dir("taboo") / "in" / "instances.json")))
    kept, left = [], n
    for experiment in data["experiments"]:
        if left <= 0:
            break
        experiment["game_instances"] = experiment["game_instances"][:left]
        left -= len(experiment["game_instances"])
        kept.append(experiment)
    data["experiments"] = kept
    return data


def run_ours(game: str, model_dir: Path, n: int, max_tokens: int) -> tuple[float, list[list[str]]]:
    """Our runner on its default ``hf`` path (prefix reuse and history drafts), one episode at a time."""
    from models.loading import load_lm, resolve_model
    from models.ref import ModelRef
    from multiturn.engine.runner import run_task
    from multiturn.engine.settings import TaskSettings
    from multiturn.registry import get_task

    lm = load_lm(resolve_model(ModelRef.parse("hf", f"pretrained={model_dir},device=cpu")), batch_size=1)
    task = get_task(game)
    start = time.perf_counter()
    summary = run_task(
        TaskSettings(task, limit=n, seed=0, max_live=1, gen_kwargs={"max_gen_toks": max_tokens}),
        {"player": lm, "player_b": lm, "judge": lm},
        progress=False,
    )
    seconds = time.perf_counter() - start
    records = sorted(summary["records"], key=lambda r: r["id"])
    replies = [[t["reply"] for t in r["transcript"]] for r in records]
    return seconds, replies


def run_clemcore_wordle(python: str, spec: dict, n: int, work: Path) -> tuple[float, list[list[str]]]:
    """clemcore's backend (``Model.generate_response`` on the full history) driving our Wordle game master."""
    spec = {**spec, "episodes": n}
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "TRIANGULATE_REPO": str(REPO)}
    proc = subprocess.run([python, "-c", CLEMCORE_WORDLE, json.dumps(spec)], cwd=work, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"clemcore failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result["seconds"], result["replies"]


def clemcore_model_spec(model_dir: Path, max_tokens: int, work: Path) -> dict:
    """clemcore's model spec for the dequantised folder (also written to ``work/model_registry.json``)."""
    spec = {
        "model": {
            "model_name": "smollm2-135m-instruct-dequantised",
            "backend": "huggingface_local",
            "huggingface_id": str(model_dir),
            "context_size": "8k",
            "model_config": {"premade_chat_template": True, "eos_to_cull": "<\\|im_end\\|>", "padding_side": "left"},
        },
        "max_tokens": max_tokens,
        "results": str(work / "results"),
    }
    (work / "model_registry.json").write_text(json.dumps([spec["model"]]), encoding="utf-8")  # clemcore looks it up in cwd
    return spec


def run_clemcore(game_name: str, python: str, model_dir: Path, n: int, max_tokens: int, work: Path) -> tuple[float, list[list[str]]]:
    spec = clemcore_model_spec(model_dir, max_tokens, work)
    if game_name == "wordle":
        return run_clemcore_wordle(python, spec, n, work)
    from multiturn.games.clem.taboo import _STOPWORD_FILE

    game = work / "taboo_v16"
    (game / "in").mkdir(parents=True)
    (game / "master.py").write_text(f"STOPWORDS = {str(_STOPWORD_FILE)!r}\n" + textwrap.dedent(CLEMCORE_TABOO), encoding="utf-8")
    (game / "clemgame.json").write_text(
        json.dumps(
            {
                "game_name": "taboo_v16",
                "description": "Taboo, v1.6 rules",
                "main_game": "taboo",
                "players": 2,
                "image": "none",
                "languages": ["en"],
                "benchmark": [],
            }
        ),
        encoding="utf-8",
    )
    (game / "in" / "instances.json").write_text(json.dumps(taboo_instances(n)), encoding="utf-8")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([python, "-c", CLEMCORE_RUNNER, json.dumps(spec)], cwd=work, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"clemcore failed:\n{proc.stderr[-3000:]}")
    episodes = sorted((work / "results").rglob("interactions.json"))
    if len(episodes) != n:
        raise SystemExit(f"clemcore wrote {len(episodes)} episodes, expected {n}:\n{proc.stderr[-2000:]}")
    replies = []
    for path in episodes:
        data = json.loads(path.read_text(encoding="utf-8"))
        events = [e for turn in data["turns"] for e in turn]
        replies.append([e["action"]["content"] for e in events if e["from"].startswith("Player") and e["action"]["type"] == "get message"])
    seconds = json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]
    return seconds, replies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=("wordle", "taboo"), default="wordle")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--max_tokens", type=int, default=100, help="new tokens per reply (clembench's default: 100)")
    parser.add_argument("--repeats", type=int, default=2, help="alternate the runners this many times (shared machines are noisy)")
    parser.add_argument("--clemcore_python", default=os.environ.get("CLEMCORE_PYTHON"), help="python of an environment with clemcore")
    parser.add_argument("--model_dir", type=Path, default=Path(tempfile.gettempdir()) / "triangulate-smollm2-dequantised")
    args = parser.parse_args(argv)
    if not args.clemcore_python:
        raise SystemExit("pass --clemcore_python (a python with `clemcore` installed; see the module docstring)")
    model_dir = dequantised_model(args.model_dir)
    times: dict[str, list[float]] = {"ours": [], "clemcore": []}
    replies: dict[str, list[list[str]]] = {}
    for repeat in range(args.repeats):
        order = ("ours", "clemcore") if repeat % 2 == 0 else ("clemcore", "ours")
        for runner in order:
            if runner == "ours":
                seconds, got = run_ours(args.game, model_dir, args.episodes, args.max_tokens)
            else:
                with tempfile.TemporaryDirectory() as tmp:
                    seconds, got = run_clemcore(args.game, args.clemcore_python, model_dir, args.episodes, args.max_tokens, Path(tmp))
            times[runner].append(seconds)
            replies[runner] = got
            calls = sum(map(len, got))
            print(
                f"run {repeat + 1} {runner:8s} {seconds:8.2f} s  {args.episodes / seconds:.4f} episodes/s  "
                f"{seconds / max(calls, 1):.2f} s per model call ({calls} calls)",
                flush=True,
            )
    same = sum(a == b for a, b in zip(replies["ours"], replies["clemcore"]))
    print(
        f"game {args.game}, {args.episodes} episodes, SmolLM2-135M-Instruct (dequantised Q4_1), max {args.max_tokens} new tokens, batch 1"
    )
    for label, pick in (("best", min), ("median", median)):  # best-of estimates the unloaded machine
        ours_s, clem_s = pick(times["ours"]), pick(times["clemcore"])
        print(
            f"{label:6s} ours {args.episodes / ours_s:.4f} episodes/s, clemcore {args.episodes / clem_s:.4f} episodes/s, "
            f"ratio ours/clemcore {clem_s / ours_s:.2f}"
        )
    print(f"episodes with identical replies in both runners: {same}/{args.episodes}")
    for a, b in zip(replies["ours"], replies["clemcore"]):
        if a != b:
            print(f"first difference: ours {a!r} / clemcore {b!r}")
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
