"""The ``random`` chance player: a well-formed reply for every family (nothing aborted or unparsed),
a random partition for the static grouping tasks, reproducible by seed, reachable by lm-eval's registry."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

import multiturn.registry  # noqa: F401  (registers the games' chance reply forms)
from models.chance import RandomLM, reply_for
from tests.support.played_run import FAMILY_TASKS, build_data, play


@pytest.fixture(scope="module")
def results(upstream, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("chance")
    build_data(upstream, root / "data")
    path = play(root / "runs", list(FAMILY_TASKS.values()), RandomLM(seed=3), "random", limit=3)
    return json.loads(Path(path).read_text())["results"]


def test_every_reply_is_well_formed(results):
    for task in ("nback_verbal_1", "wcst", "lnt"):
        assert results[task]["parse_rate,none"] == 1.0, task
    assert results["connections_interactive"]["invalid_replies,none"] == 0.0
    for task in ("wordle", "taboo", "referencegame", "imagegame", "privateshared"):
        assert results[task]["aborted,none"] == 0.0, task  # clembench aborts an episode on a malformed reply
    assert results["splat_easy"]["rounds,none"] > 1  # it asked questions until the cap, never "solved" by accident


def test_chance_scores_are_near_their_expected_level(results):
    # n-back: a fair m/- coin is right half the time; WCST: one of four options is right (rule-blind)
    assert 0.3 <= results["nback_verbal_1"]["accuracy,none"] <= 0.7
    assert 0.05 <= results["wcst"]["accuracy,none"] <= 0.5


@pytest.mark.parametrize("n_groups, size", [(3, 4), (4, 4), (2, 3)])
def test_static_grouping_prompt_gets_a_random_partition_of_the_pool(n_groups, size):
    from custom_metrics.parsing import parse_groups
    from datasets_build.prompts import globalgroup_prompt

    words = [f"w{i}" for i in range(n_groups * size)]
    prompt = globalgroup_prompt(words, n_groups, size, "en")
    reply = reply_for([{"role": "user", "content": prompt}], random.Random(0))
    groups = parse_groups(reply, words, n_groups=n_groups)
    assert len(groups) == n_groups and all(len(g.words) == size for g in groups)
    assert sorted(w for g in groups for w in g.words) == sorted(words)


def test_replies_depend_only_on_seed_and_prompt():
    class Req:  # the task's name travels on the request, as the engine sends it (Instance.task_name)
        def __init__(self, text):
            self.args = (text, {})
            self.task_name, self.doc = "nback_verbal_1", {"role": "player"}

    prompts = [
        json.dumps([{"role": "system", "content": "respond with 'm' or '-'"}, {"role": "user", "content": c}])
        for c in "abcdefghijklmnopqrst"
    ]
    a = RandomLM(seed=1).generate_until([Req(p) for p in prompts])
    assert a == RandomLM(seed=1).generate_until([Req(p) for p in reversed(prompts)])[::-1]  # batch order irrelevant
    assert a != RandomLM(seed=2).generate_until([Req(p) for p in prompts])
    assert set(a) == {"m", "-"}


def test_the_form_comes_from_the_task_not_the_prompt_text():
    """The same text gets the form of the task it belongs to; a text of no play task gets random words of it."""
    messages = [{"role": "user", "content": "Your move."}]
    assert reply_for(messages, random.Random(0), "nback_verbal_1") in ("m", "-")
    assert reply_for(messages, random.Random(0), "wcst") in ("1", "2", "3", "4")
    assert reply_for(messages, random.Random(0), "splat", "judge") in ("Yes", "No", "Irrelevant")
    assert set(reply_for(messages, random.Random(0), "no_such_task").split()) <= {"Your", "move"}


def test_registered_for_lm_eval_and_play():
    from lm_eval.api.registry import get_model

    from tests.support.play_settings import load_model

    assert get_model("random") is RandomLM
    assert get_model("hf").__name__ == "HFLM"  # registering ours must not hide lm-eval's own models
    lm = load_model("random", "seed=5")
    assert isinstance(lm, RandomLM) and lm.seed == 5
    scores = lm.loglikelihood([type("R", (), {"args": ("ctx", " a")})()])
    assert len(scores) == 1 and not math.isnan(scores[0][0])


def test_every_family_says_its_own_chance_reply(results):
    """Each family's game module gives the form of its first request (no family is left to the generic reply)."""
    from multiturn import registry

    for task_name in FAMILY_TASKS.values():
        task = registry.get_task(task_name)
        game = task.make_game(task.instances(seed=1)[0], 1)
        request = game.next_request()
        assert task.chance_reply(request, random.Random(0)) is not None, task_name
