"""Min-K% Prob and the probe's AUC (issue 42) on hand-computed cases; the probe's token log-probabilities equal
lm-eval's rolling log-likelihood on the embedded SmolLM2 (slow)."""

from __future__ import annotations

import math

import pytest

from custom_metrics.membership import auc, auc_interval, min_k_prob


def test_min_k_prob_hand_computed():
    values = [-1.0, -2.0, -3.0, -4.0, -5.0]
    assert min_k_prob(values, 0.4) == -4.5  # the 2 lowest of 5: (-5 + -4) / 2
    assert min_k_prob(values, 0.2) == -5.0  # int(0.2 * 5) = 1 token
    assert min_k_prob(values, 0.1) == -5.0  # int(0.5) = 0: at least one token
    assert min_k_prob(values, 1.0) == -3.0  # every token: the mean log-likelihood
    assert math.isnan(min_k_prob([], 0.2))
    with pytest.raises(ValueError):
        min_k_prob(values, 0)


def test_auc_hand_computed():
    # pairs (3,1) (3,2) (2,1) won, (2,2) tied: (1 + 1 + 1 + 0.5) / 4
    assert auc([3, 2], [1, 2]) == 0.875
    assert auc([1, 1], [1, 1]) == 0.5 and auc([0], [1]) == 0.0
    assert math.isnan(auc([], [1]))


def test_auc_interval_is_seeded_and_holds_the_value():
    members = [0.1 * i for i in range(30)]
    others = [0.1 * i - 1 for i in range(30)]
    value, low, high = auc_interval(members, others)
    assert (value, low, high) == auc_interval(members, others)
    assert low <= value <= high and 0.5 < low
    assert math.isnan(auc_interval([1.0], [0.0])[1])


@pytest.mark.slow
def test_token_logprobs_equal_lm_evals_rolling_loglikelihood(smollm2):
    from triangulation import membership

    texts = ["The cat sat on the mat.", "苹果 香蕉 橙子 葡萄\n水果: 苹果, 香蕉"]
    rolling = membership.rolling_loglikelihoods(smollm2, texts)
    for text, total in zip(texts, rolling):
        assert sum(membership.token_logprobs(smollm2, text)) == pytest.approx(total, abs=0.05)
    result = membership.probe(smollm2, texts, list(reversed(texts)), n_boot=50)
    assert result.auc == 0.5 and (result.n_published, result.n_fresh) == (2, 2)  # the same texts on both sides


@pytest.mark.slow
def test_probe_command_writes_the_auc_beside_the_models_results(built_data, tmp_path):
    """``triangulate probe`` on the embedded SmolLM2, 2 published zh games and their seed-0 twins."""
    import json

    from triangulation.cli.main import main

    assert main(["probe", "--tasks", "globalgroup_zh", "--limit", "2", "--output_path", str(tmp_path)]) == 0
    (path,) = tmp_path.rglob("membership_globalgroup_zh.json")
    probe = json.loads(path.read_text(encoding="utf-8"))
    assert (probe["n_published"], probe["n_fresh"], probe["k"]) == (2, 2, 0.2) and 0 <= probe["auc"] <= 1
