"""One-pass multiple choice when served (issue 40): ``local-completions-onepass`` against a fake ``/v1/completions``
server with a toy model (tests/support/fake_logprobs.py): the same loglikelihoods and greedy flags as lm-eval's
per-choice ``local-completions``, one request per question whose choices are one token, the per-choice path for
multi-token choices, a choice outside the top-k, and a server that cannot key logprobs by token id or refuses."""

from __future__ import annotations

import pytest

from models.choice_groups import ONE_PASS_MODEL, prompt_before, requests_per_question, served_requests
from models.onepass import OnePassCompletionsLM
from tests.support.fake_logprobs import FakeLogprobServer, continuation_logprob, next_logprobs, top_k

CONTEXTS = [[5, 9, 2, 7], [3, 3, 8], [11, 4, 6, 1, 2], [40, 41]]


def _questions() -> list[tuple[list[int], list[list[int]]]]:
    """Four questions: letter-like one-token choices (one including the greedy token), then one multi-token."""
    out = []
    for ctx in CONTEXTS[:3]:
        greedy = top_k(next_logprobs(ctx), 1)[0]
        out.append((ctx, [[greedy], *[[t] for t in top_k(next_logprobs(ctx), 4)[1:4]]]))
    out.append((CONTEXTS[3], [[1, 2], [3], [4, 5, 6]]))
    return out


def _requests(questions) -> list[tuple[tuple[str, str], list[int], list[int]]]:
    return [((f"q{qi}", f"c{ci}"), ctx, cont) for qi, (ctx, conts) in enumerate(questions) for ci, cont in enumerate(conts)]


def _lm(server: FakeLogprobServer, cls=OnePassCompletionsLM, **kwargs):
    lm = cls(model="toy", base_url=server.url, tokenizer_backend="none", num_concurrent=2, max_retries=1, **kwargs)
    lm.tokenizer, lm.tokenized_requests = "toy", True  # requests come tokenized; the parent only checks one is set
    return lm


def test_one_request_per_question_with_the_per_choice_scores():
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    questions = _questions()
    reqs = _requests(questions)
    with FakeLogprobServer() as old:
        per_choice = _lm(old, LocalCompletionsAPI)._loglikelihood_tokens(reqs)
    with FakeLogprobServer() as new:
        lm = _lm(new)
        one_pass = lm._loglikelihood_tokens(reqs)
    exact = [continuation_logprob(ctx, cont) for _, ctx, cont in reqs]
    assert [g for _, g in one_pass] == [g for _, g in per_choice] == [g for _, g in exact]
    assert any(g for _, g in one_pass) and not all(g for _, g in one_pass)
    for a, b in zip(one_pass, per_choice, strict=True):
        assert a[0] == pytest.approx(b[0], abs=1e-9)
    # 3 one-token questions in one request each; the mixed question (a trie of 4 nodes for 3 choices) per choice
    assert len(new.bodies) == 3 + 3 and len(old.bodies) == len(reqs)
    assert sum(1 for b in new.bodies if not b["echo"]) == 3
    assert new.prompt_tokens < old.prompt_tokens
    stats = lm.onepass_stats
    assert (stats.one_pass_groups, stats.one_pass_choices, stats.per_choice, stats.top_k_misses) == (3, 12, 3, 0)
    assert served_requests([(c, k) for _, c, k in reqs]) == 6


def test_choices_sharing_leading_tokens_are_one_request_per_trie_node():
    """SmolLM2 splits " 1" into a space and a digit: four such choices are two requests (after the context, after
    the space), exact: each token's logprob where lm-eval's echo reads it."""
    ctx = CONTEXTS[2]
    space = top_k(next_logprobs(ctx), 1)[0]
    digits = top_k(next_logprobs([*ctx, space]), 4)
    reqs = _requests([(ctx, [[space, d] for d in digits]), (CONTEXTS[0], [[t] for t in top_k(next_logprobs(CONTEXTS[0]), 3)])])
    with FakeLogprobServer() as server:
        lm = _lm(server)
        got = lm._loglikelihood_tokens(reqs)
    exact = [continuation_logprob(c, k) for _, c, k in reqs]
    assert [g for _, g in got] == [g for _, g in exact] and got[0][1]  # the greedy path is greedy
    assert [lp for lp, _ in got] == pytest.approx([lp for lp, _ in exact], abs=1e-9)
    assert sorted(len(b["prompt"][0]) for b in server.bodies) == sorted([len(ctx), len(ctx) + 1, len(CONTEXTS[0])])
    assert (lm.onepass_stats.one_pass_requests, lm.onepass_stats.per_choice) == (3, 0)


@pytest.mark.parametrize("mode", ["vllm", "no_allowed"])
def test_choice_outside_the_top_k_is_asked_for_alone_else_per_choice(mode):
    """A choice token outside the top-k: one more request with it the only token allowed (its raw logprob), or,
    on a server that ignores the restriction, its question per choice."""
    ctx = CONTEXTS[0]
    ranked = top_k(next_logprobs(ctx), 64)
    reqs = _requests([(ctx, [[ranked[0]], [ranked[-1]], [ranked[1]]]), (CONTEXTS[1], [[t] for t in top_k(next_logprobs(CONTEXTS[1]), 2)])])
    with FakeLogprobServer(mode) as server:
        lm = _lm(server, onepass_logprobs=5)
        got = lm._loglikelihood_tokens(reqs)
    exact = [continuation_logprob(c, k) for _, c, k in reqs]
    assert [g for _, g in got] == [g for _, g in exact]
    assert [lp for lp, _ in got] == pytest.approx([lp for lp, _ in exact], abs=1e-9)
    forced = [b for b in server.bodies if b.get("allowed_token_ids")]
    assert [b["allowed_token_ids"] for b in forced] == [[ranked[-1]]]
    stats = lm.onepass_stats
    if mode == "vllm":
        assert (stats.one_pass_groups, stats.forced_requests, stats.top_k_misses, stats.per_choice) == (2, 1, 0, 0)
    else:
        assert (stats.one_pass_groups, stats.forced_requests, stats.top_k_misses, stats.per_choice) == (1, 1, 1, 3)


@pytest.mark.parametrize("mode", ["strings", "refuse"])
def test_a_server_that_cannot_falls_back_with_a_note(mode, caplog):
    reqs = _requests(_questions())
    with FakeLogprobServer(mode) as server:
        lm = _lm(server)
        got = lm._loglikelihood_tokens(reqs)
        got_again = lm._loglikelihood_tokens(reqs)  # asked once per model, not per call
    assert got == got_again == pytest.approx([continuation_logprob(c, k) for _, c, k in reqs])
    assert sum(1 for b in server.bodies if not b["echo"]) == 1  # the probe only
    assert len(server.bodies) == 1 + 2 * len(reqs)
    [note] = lm.onepass_stats.notes
    assert "not supported" in note and ("token ids" in note or "HTTP 400" in note)
    assert any("one-pass scoring not supported" in r.getMessage() for r in caplog.records)


def test_truncated_context_keeps_the_parents_prompt():
    ctx = list(range(1, 30))
    assert prompt_before(ctx, 10) == tuple(([*ctx, 63])[-10:][:-1])
    assert prompt_before(ctx, 40) == tuple(ctx)
    reqs = _requests([(ctx, [[t] for t in top_k(next_logprobs(ctx[-9:]), 3)])])
    with FakeLogprobServer() as server:
        got = _lm(server, max_length=11)._loglikelihood_tokens(reqs)  # lm-eval keeps max_length - 1 = 10
    assert got == pytest.approx([continuation_logprob(ctx[-9:], k) for _, _, k in reqs])
    assert [len(b["prompt"][0]) for b in server.bodies] == [9]


def test_requests_per_question_and_registration():
    from lm_eval.api.registry import get_model

    assert requests_per_question([[1], [2], [3], [4]]) == 1
    assert requests_per_question([[1], [2, 3]]) == 2
    assert requests_per_question([[9, 1], [9, 2], [9, 3], [9, 4]]) == 2  # SmolLM2's " 1".." 4": a space, a digit
    assert requests_per_question([[1, 2], [3, 4]]) == 2  # 3 trie nodes: per choice
    assert get_model(ONE_PASS_MODEL) is OnePassCompletionsLM
