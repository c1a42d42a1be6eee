"""Response parsing on hand-made answers: the prompt's format, what models really write, adversarial input."""

from __future__ import annotations

import time

from custom_metrics.parsing import find_groups, parse_groups
from custom_metrics.text import word_key

POOL = ["Water", "Fire", "Sad", "Wind", "Happy", "Earth", "Angry", "Surprised"]
ELEMENTS = ["Water", "Fire", "Earth", "Wind"]
EMOTIONS = ["Happy", "Sad", "Angry", "Surprised"]


def _words(groups):
    return [g.words for g in groups]


def _topics(groups):
    return [g.topic for g in groups]


def test_prompt_format_with_curly_quotes():
    answer = "<Natural Elements>: [’Water’, ’Fire’, ’Earth’, ’Wind’], <Emotions>: [’Happy’,’Sad’,’Angry’,’Surprised’]"
    groups = parse_groups(answer, POOL)
    assert _topics(groups) == ["Natural Elements", "Emotions"]
    assert _words(groups) == [ELEMENTS, EMOTIONS]


def test_python_dict_in_code_block_keeps_escaped_quotes_in_topic():
    answer = '```python\n{\n    "Words for \\"Want\\"": ["Yearn", "Desire", "Wish"],\n    "Senses": ["Smell", "Sight"]\n}\n```'
    groups = parse_groups(answer)
    assert _words(groups) == [["Yearn", "Desire", "Wish"], ["Smell", "Sight"]]
    assert groups[0].topic.startswith('Words for "Want')
    assert groups[1].topic == "Senses"


def test_markdown_numbering_and_bold_topics():
    answer = "Here is my answer:\n\n1. **Natural Elements**: [Water, Fire, Earth, Wind]\n2. **Emotions:** [Happy, Sad, Angry, Surprised]\n"
    groups = parse_groups(answer, POOL)
    assert _topics(groups) == ["Natural Elements", "Emotions"]
    assert _words(groups) == [ELEMENTS, EMOTIONS]


def test_category_prefixes_are_removed_and_bare_ones_give_no_topic():
    answer = "Category 1 (Elements): [water, fire, earth, wind]\nCategory2: [happy, sad, angry, surprised]"
    groups = parse_groups(answer, POOL)
    assert _topics(groups) == ["Elements", None]
    assert _words(groups) == [ELEMENTS, EMOTIONS]  # mapped onto pool spellings


def test_case_and_accent_insensitive_pool_matching():
    pool = ["Café", "Niño", "Über", "Ça"]
    groups = parse_groups("<X>: ['cafe', 'NINO', 'uber', 'ca']", pool)
    assert groups[0].words == pool
    assert word_key("“Café”") == "cafe"


def test_words_not_in_pool_are_kept_as_written():
    groups = parse_groups("<X>: ['Water', 'Lava', 'Earth', 'Wind']", POOL)
    assert groups[0].words == ["Water", "Lava", "Earth", "Wind"]


def test_final_answer_after_reasoning_wins():
    answer = (
        "Let me think. Maybe <A>: [Water, Sad, Earth, Wind] and <B>: [Happy, Fire, Angry, Surprised]. "
        "Hmm, no. Final answer: <Elements>: [Water, Fire, Earth, Wind], <Emotions>: [Happy, Sad, Angry, Surprised]"
    )
    groups = parse_groups(answer, POOL, n_groups=2)
    assert _words(groups) == [ELEMENTS, EMOTIONS]


def test_marker_followed_by_too_few_groups_is_ignored():
    # A truncated restatement after "the correct answer is:" does not replace a complete answer.
    answer = (
        "<Elements>: [Water, Fire, Earth, Wind], <Emotions>: [Happy, Sad, Angry, Surprised]. "
        "The correct answer is: <Elements>: [Water, Fire, Earth, Wind], <Emo"
    )
    groups = parse_groups(answer, POOL, n_groups=2)
    assert _words(groups) == [ELEMENTS, EMOTIONS]


def test_restated_group_under_same_label_replaces_earlier_one():
    # seed 000 App. D: a model corrects one group later; the correction is scored.
    answer = (
        "<Elements>: [Water, Fire, Earth, Sad], <Emotions>: [Happy, Wind, Angry, Surprised]. "
        "Note: wrong. <Elements>: [Water, Fire, Earth, Wind], <Emotions>: [Happy, Sad, Angry, Surprised]"
    )
    groups = parse_groups(answer, POOL, n_groups=2)
    assert _words(groups) == [ELEMENTS, EMOTIONS]


def test_newlines_stripped_connections_style():
    answer = (
        "1. Circular objects: WREATH, TIRE, LIFESAVER, BAGEL   These are round.Now, the final answer:"
        "Groupings:Circular objects: [WREATH, TIRE, LIFESAVER, BAGEL]Permission: [APPROVAL, BLESSING, CONSENT, SUPPORT]"
    )
    pool = ["WREATH", "TIRE", "LIFESAVER", "BAGEL", "APPROVAL", "BLESSING", "CONSENT", "SUPPORT"]
    groups = parse_groups(answer, pool, n_groups=2)
    assert _topics(groups) == ["Circular objects", "Permission"]
    assert _words(groups) == [pool[:4], pool[4:]]


def test_unbracketed_lists_with_pool():
    pool = ["POLO", "CRICKET", "FENCING", "SQUASH", "BEET", "CARROT", "ONION", "CORN"]
    answer = (
        "Final Groupings: - **Sports:** POLO, CRICKET, FENCING, and SQUASH are sports. "
        "- **Vegetables:** BEET, CARROT, ONION, CORN (all grown)"
    )
    groups = parse_groups(answer, pool, n_groups=2)
    assert _words(groups) == [pool[:4], pool[4:]]
    assert _topics(groups) == ["Sports", "Vegetables"]


def test_dash_separated_lists():
    pool = ["LANE", "DRIVE", "ALLEY", "STREET", "SHEET", "FOLIO", "PAGE", "LEAF"]
    answer = (
        "#### Groupings: **Category 1: Types of Roads:** - LANE - DRIVE - ALLEY - STREET  "
        "**Category 2: Paper Terms:** - SHEET - FOLIO - PAGE - LEAF"
    )
    groups = parse_groups(answer, pool, n_groups=2)
    assert _words(groups) == [pool[:4], pool[4:]]


def test_topic_line_then_word_line_and_markdown_tables():
    lines = "My groups.\n\n**Natural Elements**\nWater, Fire, Earth, Wind\n\nGroup 2: Emotions\nHappy, Sad, Angry, Surprised\n"
    groups = parse_groups(lines, POOL, n_groups=2)
    assert _topics(groups) == ["Natural Elements", "Emotions"] and _words(groups) == [ELEMENTS, EMOTIONS]
    table = "| Topic | Words |\n|---|---|\n| Elements | Water, Fire, Earth, Wind |\n| Emotions | Happy, Sad, Angry, Surprised |"
    groups = parse_groups(table, POOL, n_groups=2)
    assert _topics(groups) == ["Elements", "Emotions"] and _words(groups) == [ELEMENTS, EMOTIONS]
    bullets = "1. Natural Elements:\n   - Water\n   - Fire\n   - Earth (classical)\n   - Wind\n2. Emotions:\n   * Happy\n   * Sad\n   * Angry\n   * Surprised"
    groups = parse_groups(bullets, POOL, n_groups=2)
    assert _topics(groups) == ["Natural Elements", "Emotions"] and _words(groups) == [ELEMENTS, EMOTIONS]
    # A sentence that merely mentions two pool words is not a group.
    assert parse_groups("I think Water, and maybe Fire, are hard to place in this game", POOL) == []


def test_extra_groups_are_returned_in_order():
    answer = "<A>: [Water, Fire], <B>: [Sad, Happy], <C>: [Wind, Earth]"
    assert len(parse_groups(answer, POOL, n_groups=2)) == 3


def test_pool_word_containing_a_comma_is_rejoined():
    pool = ["22", "451", "2001", "20,000"]
    groups = parse_groups("Numbers in titles: ['22', '451', '2001', '20,000']", pool)
    assert groups[0].words == pool


def test_annotated_items_map_to_the_pool_word_but_longer_words_do_not():
    pool = ["TIRE", "BAGEL", "WREATH", "HOT"]
    groups = parse_groups("Round: [TIRE (a wheel), BAGEL - bread, WREATHS, HOT DOG]", pool)
    assert groups[0].words == ["TIRE", "BAGEL", "WREATHS", "HOT DOG"]


def test_pool_echo_is_not_a_group():
    answer = f"Given the pool {POOL}, my answer: <E>: [Water, Fire, Earth, Wind], <M>: [Happy, Sad, Angry, Surprised]"
    groups = parse_groups(answer, POOL, n_groups=2)
    assert _words(groups) == [ELEMENTS, EMOTIONS]


def test_empty_and_non_string_input():
    assert parse_groups("") == []
    assert parse_groups(None) == []  # type: ignore[arg-type]
    assert parse_groups(12345) == []  # type: ignore[arg-type]
    assert parse_groups("I don't know.", POOL) == []


def test_unbalanced_brackets():
    assert parse_groups("[[[[[", POOL) == []
    assert parse_groups("]]]] [Water, Fire", POOL) == []
    groups = parse_groups("<E>: [Water, Fire, [Earth, Wind]]", POOL)
    assert groups[0].words == ["Earth", "Wind"]


def test_duplicate_words_are_kept_in_the_parse():
    groups = parse_groups("<E>: [Water, water, WATER, Fire]", POOL)
    assert groups[0].words == ["Water", "Water", "Water", "Fire"]


def test_other_scripts_zh_hi_ar():
    zh_pool = ["苹果", "香蕉", "橙子", "葡萄", "红色", "蓝色", "绿色", "黄色"]
    answer = "<水果>：['苹果'，'香蕉'，'橙子'，'葡萄']，<颜色>：['红色'、'蓝色'、'绿色'、'黄色']"
    groups = parse_groups(answer, zh_pool)
    assert _words(groups) == [zh_pool[:4], zh_pool[4:]]
    assert _topics(groups) == ["水果", "颜色"]

    hi_pool = ["सेब", "केला", "आम", "अंगूर"]
    groups = parse_groups("<फल>: ['सेब', 'केला', 'आम', 'अंगूर']", hi_pool)
    assert groups[0].words == hi_pool and groups[0].topic == "फल"
    # Devanagari vowel signs are letters: "कुल" and "कल" stay different words.
    assert word_key("कुल") != word_key("कल")

    ar_pool = ["تفاح", "موز", "برتقال", "عنب"]
    groups = parse_groups("<فواكه>: ['تُفّاح'، 'موز'، 'برتقال'، 'عنب']", ar_pool)
    assert groups[0].words == ar_pool  # harakat ignored, Arabic comma splits


def test_think_block_is_ignored():
    answer = "<think><A>: [Water, Sad]</think><E>: [Water, Fire, Earth, Wind]"
    assert _words(parse_groups(answer, POOL)) == [ELEMENTS]


def test_huge_input_parses_fast():
    chunk = "<Elements>: [Water, Fire, Earth, Wind], some prose: a, b, c. [unclosed " * 20
    huge = (chunk * (1_000_000 // len(chunk) + 1))[:1_000_000]
    started = time.perf_counter()
    groups = parse_groups(huge, POOL, n_groups=2)
    elapsed = time.perf_counter() - started
    assert groups and groups[0].words == ELEMENTS
    assert elapsed < 0.5  # the fuzz test holds the 100 ms budget on adversarial shapes


def test_find_groups_returns_everything():
    answer = "Try: <A>: [Water, Sad]. Final answer: <E>: [Water, Fire, Earth, Wind]"
    assert len(find_groups(answer, POOL)) == 2
    assert len(parse_groups(answer, POOL)) == 1


def test_json_objects_with_topic_and_words_fields():
    import json

    payload = {"groups": [{"topic": "Natural Elements", "words": ELEMENTS}, {"category": "Emotions", "words": EMOTIONS}]}
    for text in (json.dumps(payload), json.dumps(payload, indent=2)):
        groups = parse_groups(text, POOL, n_groups=2)
        assert _topics(groups) == ["Natural Elements", "Emotions"]
        assert _words(groups) == [ELEMENTS, EMOTIONS]
    # Without a topic field the groups stay separate (a shared "words" key is not a restated label).
    bare = json.dumps([{"words": ELEMENTS}, {"words": EMOTIONS}])
    assert _words(parse_groups(bare, POOL, n_groups=2)) == [ELEMENTS, EMOTIONS]
