"""Issue 31.7: the clembench v1.5 reference-game instances ARE upstream (``referencegame/in/instances_v1.5.json``);
what they share with v1.6's and what a v1.5 replay would still need."""

from __future__ import annotations

import re

import pytest

from datasets_build.clembench_upstream import load_instances
from plumbing.errors import UserError


def test_v15_reference_game_instances_differ_from_v16_only_in_the_answer_rules(upstream):
    v15, v16 = load_instances("referencegame", "v1.5"), load_instances("referencegame")
    assert len(v15) == len(v16) == 180 and [e["id"] for e in v15] == [e["id"] for e in v16]
    differing = {k for a, b in zip(v15, v16) for k in set(a) | set(b) if a.get(k) != b.get(k)}
    # same grids and prompts: only the regexes and the accepted target names differ
    assert differing == {"player_1_response_pattern", "player_2_response_pattern", "target_grid_name"}
    assert v15[0]["target_grid_name"] == "first" and v16[0]["target_grid_name"] == ["first", "1st", "1"]
    # v1.6 accepts "Answer: 1" and "Answer: 1st"; v1.5's pattern does not (a v1.5 replay needs v1.5's game master)
    p15, p16 = v15[0]["player_2_response_pattern"], v16[0]["player_2_response_pattern"]
    assert re.match(p16, "Answer: 1", re.IGNORECASE) and not re.match(p15, "answer: 1")
    assert re.match(p15, "answer: first") and re.match(p16, "Answer: first", re.IGNORECASE)


def test_no_other_v15_instances_upstream(upstream):
    with pytest.raises(UserError, match="no clembench v1.5 instances of taboo"):
        load_instances("taboo", "v1.5")
