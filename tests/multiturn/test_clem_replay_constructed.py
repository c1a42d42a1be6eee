"""Episodes we construct in clembench's published ``interactions.json`` format, one per case where our
game masters used to differ from clembench v1.6 (issue 13, "clembench episodes"). Every recorded
game-master message and decision below is written by hand from v1.6's rules; the prompts come from the
upstream instances. ``replay_episode`` must reproduce them all."""

from __future__ import annotations

import pytest

from multiturn.games.clem import GAMES, candidate_instances, play_game, replay_episode
from multiturn.games.clem.wordle_rules import first_unmarked_occurrence_feedback

MODEL = "some-model"


def ev(frm: str, to: str, type_: str, content, **extra) -> dict:
    """One event as clembench logs it."""
    return {"from": frm, "to": to, "timestamp": "2024-05-15T12:00:00.000000", "action": {"type": type_, "content": content, **extra}}


# ------------------------------------------------------------------------------ (1) reference game
@pytest.mark.parametrize("k,answer", [(0, "first"), (1, "second"), (2, "third")])
def test_referencegame_instance_is_found_by_player_2s_prompt_too(upstream, built_data, k, answer):
    """v1.6 instances come in triples sharing Player 1's prompt; the replay must take the one whose
    Player 2 prompt was sent (before the fix it always took game id 0, and "second"/"third" lost)."""
    triple = candidate_instances("referencegame")[:3]
    assert len({i["player_1_prompt_header"] for i in triple}) == 1
    assert len({i["player_2_prompt_header"] for i in triple}) == 3
    inst = triple[k]
    expression = "Expression: The grid with a row of filled cells at the top."
    episode = {
        "players": {"GM": "Game master for referencegame", "Player_1": MODEL, "Player_2": MODEL},
        "turns": [
            [
                ev("GM", "Player 1", "send message", inst["player_1_prompt_header"]),
                ev("Player 1", "GM", "get message", expression),
                ev("GM", "GM", "parse", expression, expression="The grid with a row of filled cells at the top."),
                ev("GM", "Player 2", "send message", inst["player_2_prompt_header"].replace("TARGET_EXPRESSION", expression)),
                ev("Player 2", "GM", "get message", f"Answer: {answer}"),
                ev("GM", "GM", "parse", f"Answer: {answer}", answer=answer),
            ]
        ],
    }
    result = replay_episode("referencegame", episode)
    assert result["instance"]["game_id"] == k
    assert result["differences"] == []
    assert result["main_score"] == 100.0 and result["success"] == 1


# ------------------------------------------------------------------------------------ (2) Wordle
def _guess(turn: list, reply: str, guess: str, explanation: str) -> None:
    turn += [ev("Player 1", "GM", "get message", reply), ev("GM", "GM", "parse", {"guess": guess, "explanation": explanation})]


def _error(turn: list, error: str) -> None:
    turn.append(ev("GM", "GM", "metadata", f"Guesser Error: {error} while parsing Player 1's (model: {MODEL}) response"))


def _feedback(turn: list, attempts: int, target: str, guess: str, feedback: str) -> None:
    turn.append(ev("GM", "GM", "metadata", f"attempts: {attempts}\ntarget_word = {target}\nguess: {guess}\nguess_feedback: {feedback}"))


def _wordle_players() -> dict:
    return {"GM": "Game master for wordle", "Player 1": f"Word Guesser ({MODEL})", "Player 2": "Guess Word Evaluator (Programmatic)"}


def test_wordle_reprompts_are_v16s(upstream, built_data):
    """Too long, not letters, a valid guess, no ``guess:`` keyword, the target: each re-prompt is v1.6's text."""
    inst = candidate_instances("wordle")[0]
    assert inst["target_word"] == "start"
    opening = inst["system_definition"] + inst["guesser_prompt"][0]["content"]
    t = [[ev("GM", "Player 1", "send message", opening)]]
    _guess(t[0], "guess:apples\nexplanation:a fruit", "apples", "a fruit")
    _error(t[0], "INVALID_WORD_LENGTH")
    t.append([ev("GM", "Player 1", "send message", "the word should have exactly 5 letters. Please try again")])
    _guess(t[1], "guess:st4rt\nexplanation:digits", "st4rt", "digits")
    _error(t[1], "INVALID_WORD")
    t.append([ev("GM", "Player 1", "send message", "the word should contain only alphabets. Please try again")])
    _guess(t[2], "guess:crane\nexplanation:common letters", "crane", "common letters")
    _feedback(t[2], 1, "start", "crane", "c<red> r<yellow> a<green> n<red> e<red>")
    t.append([ev("GM", "Player 1", "send message", "guess_feedback: c<red> r<yellow> a<green> n<red> e<red>")])
    _guess(t[3], "My guess is start", "INVALID_FORMAT", "INVALID_FORMAT")
    _error(t[3], "INVALID_FORMAT")
    t.append(
        [
            ev(
                "GM",
                "Player 1",
                "send message",
                "Provide your response only in this format:\nguess:word\nexplanation:details.\nPlease try again",
            )
        ]
    )
    _guess(t[4], "guess:start\nexplanation:r and a fit", "start", "r and a fit")
    _feedback(t[4], 2, "start", "start", "s<green> t<green> a<green> r<green> t<green>")
    t[4].append(ev("GM", "GM", "metadata", "game_result = WIN"))
    result = replay_episode("wordle", {"players": _wordle_players(), "turns": t})
    assert result["differences"] == []
    assert result["main_score"] == 100.0 and result["success"] == 1  # two guesses counted


def test_wordle_model_sees_v16_history(upstream, built_data):
    """What the guesser is sent in live play: v1.6's history entries (``guess:<w>``, no space) and re-prompts."""
    inst = candidate_instances("wordle")[0]
    replies = iter(["guess:apples\nexplanation:a fruit", "guess:crane\nexplanation:common letters", "guess:start\nexplanation:fits"])
    seen: list[list[dict]] = []

    def guesser(messages):
        seen.append(messages)
        return next(replies)

    game = play_game(GAMES["wordle"](inst), {"player": guesser})
    assert game.scores()["success"] == 1
    opening = inst["system_definition"] + inst["guesser_prompt"][0]["content"]
    assert seen[-1] == [
        {"role": "user", "content": opening},
        {"role": "assistant", "content": "guess:apples\nexplanation:a fruit\n"},
        {"role": "user", "content": "the word should have exactly 5 letters. Please try again"},
        {"role": "assistant", "content": "guess:crane\nexplanation:common letters\n"},
        {"role": "user", "content": "guess_feedback: c<red> r<yellow> a<green> n<red> e<red>"},
    ]


def test_wordle_withclue_and_critic_prompts_write_clue_without_space(upstream, built_data):
    inst = candidate_instances("wordle_withcritic")[0]
    clue = inst["target_word_clue"]
    seen: dict[str, list] = {"player": [], "player_b": []}
    replies = {
        "player": iter(["guess:crane\nexplanation:x", "guess:crane\nexplanation:kept"]),
        "player_b": iter(["agreement:no\nexplanation:does not fit"]),
    }

    def player(role):
        def respond(messages):
            seen[role].append(messages)
            return next(replies[role], "guess:start\nexplanation:y")

        return respond

    play_game(GAMES["wordle_withcritic"](inst), {"player": player("player"), "player_b": player("player_b")})
    assert seen["player"][0][-1]["content"].endswith(f"clue:{clue}\n")
    assert seen["player_b"][0][-1]["content"] == inst["guesser_critic_prompt"][0]["content"] + f"clue:{clue}\nguess:crane\nexplanation:x\n"
    assert seen["player"][1][-2:] == [
        {"role": "assistant", "content": "guess:crane\nexplanation:x\n"},
        {"role": "user", "content": f"clue:{clue}\nguess_agreement:no\nagreement_explanation:does not fit\n"},
    ]


# ----------------------------------------------------------------------------- (3) Wordle feedback
def test_feedback_rule_hand_derived_cases():
    """v1.6's first-unmarked-occurrence rule, each derived by hand letter by letter."""
    rule = first_unmarked_occurrence_feedback
    # e: first e of "queue" is at 2, not 4; guess[2] = "a" -> yellow (standard Wordle: green)
    assert rule("crane", "queue") == "c<red> r<red> a<red> n<red> e<yellow>"
    # e@0: first e of "lever" at 1, guess[1] is also e -> red; e@1: green; r: target 4, guess[4] = e -> yellow;
    # e@4: e@1 marked, next e at 3, guess[3] = i -> yellow (standard Wordle: e<yellow> e<green> r<yellow> i<red> e<red>)
    assert rule("eerie", "lever") == "e<red> e<green> r<yellow> i<red> e<yellow>"
    # r: red; e@1: first e of "queue" at 2, guess[2] is also e -> red; e@2: green (standard Wordle: e<yellow> e<green>);
    # what gpt-4-turbo's published v1.6 episode wordle/1_medium_frequency_words_no_clue_no_critic/episode_11 shows
    assert rule("reedy", "queue") == "r<red> e<red> e<green> d<red> y<red>"
    # t@0: first t of "start" at 1, guess[1] = e -> yellow; t@3: t@1 marked, next t at 4, guess[4] = h -> yellow
    assert rule("teeth", "start") == "t<yellow> e<red> e<red> t<yellow> h<red>"


def test_wordle_shows_v16_feedback_in_play(upstream, built_data):
    inst = {**candidate_instances("wordle")[0], "target_word": "queue"}
    shown = "c<red> r<red> a<red> n<red> e<yellow>"
    opening = inst["system_definition"] + inst["guesser_prompt"][0]["content"]
    t = [[ev("GM", "Player 1", "send message", opening)]]
    _guess(t[0], "guess:crane\nexplanation:common letters", "crane", "common letters")
    _feedback(t[0], 1, "queue", "crane", shown)
    t.append([ev("GM", "Player 1", "send message", f"guess_feedback: {shown}")])
    _guess(t[1], "guess:queue\nexplanation:an e somewhere", "queue", "an e somewhere")
    _feedback(t[1], 2, "queue", "queue", "q<green> u<green> e<green> u<green> e<green>")
    t[1].append(ev("GM", "GM", "metadata", "game_result = WIN"))
    result = replay_episode("wordle", {"players": _wordle_players(), "turns": t}, instance=inst)
    assert result["differences"] == []
    assert result["main_score"] == 100.0


# ------------------------------------------------------------------------------------- (4) Taboo
def _taboo_prompts(inst: dict) -> tuple[str, str]:
    related = "\n".join(f"- {w}" for w in inst["related_word"])
    describer = inst["describer_initial_prompt"].replace("$TARGET_WORD$", inst["target_word"]).replace("$REL_WORD$", related)
    return describer.replace("$N$", "3"), inst["guesser_initial_prompt"].replace("$N$", "3")


def _taboo_players() -> dict:
    return {"GM": "Game master for taboo", "Player 1": f"WordDescriber, {MODEL}", "Player 2": f"WordGuesser, {MODEL}"}


def test_taboo_describer_breaking_the_format_is_logged_once(upstream, built_data):
    """As gpt-4-turbo's published v1.6 episode taboo/2_low_en/episode_2 shows: one ``invalid format`` event."""
    inst = candidate_instances("taboo")[0]
    assert inst["target_word"] == "responsibility"
    describer, guesser = _taboo_prompts(inst)
    clue = "CLUE: What you carry when you are in charge of something."
    turns = [
        [
            ev("GM", "Player 1", "send message", describer),
            ev("Player 1", "GM", "get message", clue),
            ev("GM", "GM", "valid response", "continue"),
            ev("GM", "GM", "valid clue", "what you carry when you are in charge of something"),
            ev("GM", "Player 2", "send message", f"{guesser}\n\n{clue}"),
            ev("Player 2", "GM", "get message", "GUESS: duty"),
            ev("GM", "GM", "valid response", "continue"),
            ev("GM", "GM", "valid guess", "duty"),
        ],
        [
            ev("GM", "Player 1", "send message", "GUESS: duty"),
            ev("Player 1", "GM", "get message", "Not quite, think bigger."),
            ev("GM", "GM", "invalid format", "abort game"),
        ],
    ]
    result = replay_episode("taboo", {"players": _taboo_players(), "turns": turns})
    assert result["differences"] == []
    assert result["aborted"] == 1 and result["turns"] == 2


def test_taboo_invalid_clue_is_logged_once(upstream, built_data):
    inst = candidate_instances("taboo")[0]
    describer, _ = _taboo_prompts(inst)
    turns = [
        [
            ev("GM", "Player 1", "send message", describer),
            ev("Player 1", "GM", "get message", "CLUE: Nobody to blame but you."),
            ev("GM", "GM", "valid response", "continue"),
            ev("GM", "GM", "invalid clue", "Related word 'blame' (stem=blame) is similar to clue word 'blame' (stem=blame)"),
        ]
    ]
    result = replay_episode("taboo", {"players": _taboo_players(), "turns": turns})
    assert result["differences"] == []
    assert result["aborted"] == 0 and result["lose"] == 1 and result["main_score"] == 0.0


# ------------------------------------------------------------------------------ (N) Private/Shared
def _privateshared_episode(raw: dict, texts: dict) -> dict:
    """A v1.6 Private/Shared episode of a truthful player, written from v1.6's rules: before the game and
    after each answer the master probes every slot in the order of the instance's own ``probes[turn]`` keys
    (as ``instances.json`` lists them); a slot counts as shared from the turn it was requested."""
    words, retries = texts["words"], texts["retries"]
    asked_at = {slot: i for i, slot in enumerate(raw["request_order"])}
    tag = f"{raw['tag']}: "

    def probing(turn: int) -> list:
        events = [ev("GM", "GM", "info", "Begin probing")]
        for key, idx in raw["probes"][str(turn)].items():
            question = words["PROBE"].format(texts["probes"][key][idx]).replace(words["ME"], f"{words['ME']}{retries[0]} ")
            truth = words["YES"] if turn > asked_at[key] else words["NO"]
            events += [
                ev("GM", "Player 1", "probe question", question),
                ev("Player 1", "GM", "probe answer", f"ASIDE: {truth}"),
                ev("GM", "GM", "parse", truth),
                ev("GM", "GM", "metadata", f"Answer for {key.upper()} valid after 1 tries."),
                ev("GM", "GM", "check", "Answer is correct."),
            ]
        return events + [ev("GM", "GM", "info", "End probing")]

    turns = [[ev("GM", "Player 1", "send message", raw["initial_prompt"]), *probing(0)]]
    for t, slot in enumerate(raw["request_order"], start=1):
        request = texts["requests"][slot][raw["requests"][slot]]
        value = raw["slots"][slot]
        turns.append(
            [
                ev("GM", "Player 2", "send message", words["DUMMY_PROMPT"]),
                ev("Player 2", "GM", "get message", request),
                ev("GM", "Player 1", "send message", words["CODA"].format(tag + request)),
                ev("Player 1", "GM", "get message", f"ANSWER: {value}"),
                ev("GM", "GM", "parse", value),
                ev("GM", "GM", "metadata", "Slot filled: True"),
                ev("GM", "Player 2", "send message", value),
                *probing(t),
            ]
        )
    turns[-1].append(ev("GM", "GM", "end", "Game finished."))
    return {
        "players": {"GM": "Game master for privateshared", "Player_1": f"Answerer: {MODEL}", "Player_2": "Questioner: Programmatic"},
        "turns": turns,
    }


def test_privateshared_probes_follow_the_instances_own_key_order(upstream, built_data):
    """clembench v1.6 asks the probes of each turn in the order of the instance's ``probes[turn]`` keys
    (``instances.json``: from, to, by, class, when for the first travel-booking game, the order of the CV
    text), not alphabetically (by, class, from, to, when). A truthful player's episode, replayed: every
    recorded event reproduced, slot filling 5/5 and all 30 probes right -> kappa 1, main score
    100 x 2 x 1 x 1 / (1 + 1) = 100. Asked alphabetically, the recorded answers land on other slots
    (turn 2: CLASS gets "no", TO gets "yes") and the score falls."""
    import json

    from datasets_build.clembench_upstream import privateshared_resources

    raw = json.loads((upstream / "clembench" / "privateshared" / "in" / "instances.json").read_text(encoding="utf-8"))
    experiment = raw["experiments"][0]
    instance = experiment["game_instances"][0]
    assert list(instance["probes"]["0"]) == ["from", "to", "by", "class", "when"]
    texts = privateshared_resources(experiment["name"])
    episode = _privateshared_episode(instance, texts)
    built = next(i for i in candidate_instances("privateshared") if i["initial_prompt"] == instance["initial_prompt"])
    assert list(built["probes"]["0"]) == ["from", "to", "by", "class", "when"]  # the build keeps the order
    result = replay_episode("privateshared", episode)
    assert result["differences"] == []
    assert result["main_score"] == pytest.approx(100.0)
    first_round = [e["action"]["content"] for e in result["events"]["turns"][0] if e["action"]["type"] == "metadata"]
    assert [m.split()[2] for m in first_round] == ["FROM", "TO", "BY", "CLASS", "WHEN"]  # "Answer for FROM valid ..."
    alphabetical = {**built, "probes": {t: dict(sorted(p.items())) for t, p in built["probes"].items()}}
    moved = replay_episode("privateshared", episode, instance=alphabetical)
    assert moved["differences"] and moved["main_score"] < 100.0
