"""The plan says which tasks a served model scores one pass (issue 40, item 4): a question whose choices are one
token each is one request of ``local-completions-onepass``, choices sharing leading tokens one per node of their
token trie, distinct multi-token choices and a generation one request each."""

from __future__ import annotations

import re
from types import SimpleNamespace

from triangulation.suite.counting import _count_instances, continuation_tokens, one_pass


def words(text: str, add_special_tokens: bool = False) -> dict[str, list[str]]:
    """A toy tokenizer: a word with its leading space is one token, a digit and each other character one."""
    return {"input_ids": re.findall(r" ?[^\W\d]+|\d|\S|\s", text)}


def ll(context: str, continuation: str) -> SimpleNamespace:
    return SimpleNamespace(arguments=(context, continuation), request_type="loglikelihood")


def counted(instances: list) -> tuple[int, int]:
    """(requests, served requests) of one leaf task's instances, as the plan counts them."""
    leaf = SimpleNamespace(instances=instances, doc_to_target=lambda doc: "hi")
    row = _count_instances(leaf, words)
    return row["requests"], row["served_requests"]


def test_one_token_choices_are_one_request_per_question():
    letters = [ll(f"Q{q}\nAnswer:", f" {c}") for q in range(3) for c in "ABCD"]
    digits = [ll(f"Q{q}\nAnswer: ", c) for q in range(2) for c in "1234"]  # " " + digit: a trie of 2 nodes
    shared = [ll("Q8\nAnswer:", c) for c in (" exactly seven", " exactly eight", " exactly nine")]
    phrases = [ll("Q9\nAnswer:", c) for c in (" seven apples", " eight pears")]
    generation = [SimpleNamespace(arguments=("Say hi", {}), request_type="generate_until", doc={})]
    assert counted(letters) == (12, 3)
    assert counted(digits) == (8, 4)
    assert counted(shared) == (3, 2)
    assert counted(phrases + generation) == (3, 3)  # 3 trie nodes > 2 choices: per choice
    assert continuation_tokens(words, "Answer: ", "A") == [" A"]  # the context's trailing space moves over, as lm-eval does
    subs = {
        "mmlu_x": {"requests": 12, "prompt_tokens": 90, "served_requests": 3},
        "cont": {"requests": 3, "prompt_tokens": 9, "served_requests": 3},
    }
    subs["play"] = {"requests": 5, "prompt_tokens": 50}
    assert one_pass(subs) == {"served_requests": 11, "one_pass": ["mmlu_x"], "per_choice": ["cont", "play"]}
