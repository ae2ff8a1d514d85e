"""Correct answers in unusual forms, and the wrong ones next to them, on the shipped core items.

Each case is an answer shape chat models write (an emoji beside the answer, a decimal comma, a
mixed number, "It's 12 — because ...", a French time, a note after a translation that was asked
for alone); the graders before these rules misjudged every case marked as such below.
"""

from __future__ import annotations

import pytest

from evalrun.endpoint.response import Response
from evalrun.grading.registry import grade, grade_spec
from evalrun.suite.load import load_suite

ITEMS = {i.id: i for i in load_suite("core").items}


def graded(item_id: str, content: str) -> bool:
    return grade(ITEMS[item_id], Response(content=content)).passed


@pytest.mark.parametrize(
    "item_id,content",
    [
        ("logic-018", "0,4"),
        ("math-005", "5,75"),
        ("math-007", "15,00 $"),
        ("math-005", "5¾"),
        ("math-005", "5 3/4"),
        ("math-016", "¾"),
        ("math-011", "10’000"),
        ("math-002", "It's 12 — because 12 × 12 = 144."),
        ("math-004", "The answer is −8, since 23 − 15 = 8."),
        ("logic-015", "Three (7 chairs, middle is the 4th)."),
        ("logic-005", "Yep."),
        ("logic-006", "Nope — only some cats are grey."),
    ],
)
def test_numbers_and_verdicts_written_other_ways_pass(item_id, content):
    assert graded(item_id, content)


@pytest.mark.parametrize(
    "item_id,content",
    [
        ("math-005", "5,7"),  # still the wrong value
        ("logic-018", "0,6"),
        ("math-005", "5 1/2"),
        ("math-004", "The answer is 8, since 23 − 15 = 8."),
        ("logic-005", "Nope."),
        ("logic-006", "Yep."),
        ("math-023", "120 – 37 = 83, so the answer is 120 – 37"),  # a dash between numbers
    ],
)
def test_the_same_forms_with_the_wrong_value_fail(item_id, content):
    assert not graded(item_id, content)


def test_a_list_without_spaces_is_not_a_decimal_comma():
    assert grade_spec("numeric", {"answer": 6}, Response(content="2,4,6")).passed
    assert not grade_spec("numeric", {"answer": 2.4}, Response(content="2,4,6")).passed


@pytest.mark.parametrize(
    "item_id,content",
    [
        ("instr-012", "OK 👍"),
        ("instr-016", "8 🕷️"),
        ("instr-013", "Venus, Mars, Jupiter, Saturn 🪐"),
        ("instr-020", '"Finding Buddy" 🐶'),
        (
            "instr-018",
            "| Country | Capital |\n| --- | --- |\n| Italy 🇮🇹 | Rome |\n| Japan 🇯🇵 | Tokyo |",
        ),
        ("ml-007", "La bibliothèque ouvre à 9h00 du matin."),
        ("canary-001", 'Sure — "The blue kettle sings at dawn."'),
    ],
)
def test_emoji_beside_the_answer_french_times_and_a_dash_lead_in_pass(item_id, content):
    assert graded(item_id, content)


@pytest.mark.parametrize(
    "item_id,content",
    [
        # the closing phrase must close the reply; a line of emoji is text besides a list
        ("instr-005", "People carry umbrellas to stay dry in the rain. Over and out. ☂️"),
        ("instr-001", "- Red\n- Green\n- Blue\n🌈"),
        ("instr-012", "OK 👍 sure thing"),
        ("ml-007", "La bibliothèque ouvre à 10h00 du matin."),
    ],
)
def test_emoji_do_not_excuse_what_the_prompt_forbids(item_id, content):
    assert not graded(item_id, content)


@pytest.mark.parametrize(
    "content,ok",
    [
        ("1, 2, 3, 4, 5, 6, 7, 8, 9, 10", True),
        ("1, 2, 3, 4, 5, 6, 7, 8, 9 and 10", True),
        ("1,2,3,4,5,6,7,8,9,10", True),
        ("1\n2\n3\n4\n5\n6\n7\n8\n9\n10", False),
        ("1 2 3 4 5 6 7 8 9 10", False),
        ("1; 2; 3; 4; 5; 6; 7; 8; 9; 10", False),
    ],
)
def test_a_sequence_keeps_the_separator_the_question_asks_for(content, ok):
    assert graded("canary-003", content) is ok


def test_a_reason_after_a_continuation_is_not_more_of_it_but_a_loop_is():
    assert graded("canary-009", "10 — the sequence goes up by 2.")
    assert graded("canary-002", "Thursday — it follows Wednesday.")
    assert not graded("canary-009", "10 — the next ones are 12 12 12 12 12 12 12 12 12 12")
    overshoot = "Thursday — then Friday, Saturday, Sunday, Monday, Tuesday, Wednesday, Thursday"
    assert not graded("canary-002", overshoot)


@pytest.mark.parametrize(
    "item_id,content,ok",
    [
        ("math-019", "21\nAverage = 84 / 4 = 22", False),
        ("math-017", "$29\n\nPlus tip, each pays $33.", False),
        ("factual-017", "2 is even.\nThe smallest prime is 1.", False),
        ("code-010", "120\nf(5) = 5 × 4 × 3 × 2 = 240", False),
        # the working restates the answer, a given of the question, or the answer in other units
        ("math-015", "14\n\n14² = 196", True),
        ("math-003", "72\n\nCheck: 72 ÷ 8 = 9.", True),
        ("math-013", "-7 °C\n\nThat's 19.4 °F.", True),
        ("math-009", "155\n\n09:40 → 12:15 is 2 h 35 min.", True),
        ("math-017", "$29\n\nEach of the 3 friends pays 87 / 3.", True),
        ("factual-017", "2\n\nExplanation: 2 is divisible only by 1 and itself.", True),
    ],
)
def test_a_last_line_stating_another_result_overrides_the_opening_number(item_id, content, ok):
    assert graded(item_id, content) is ok


@pytest.mark.parametrize(
    "item_id,content,ok",
    [
        (
            "ml-004",
            'I love reading books in the evenings.\n\nAlternatives: "I like to read at night."',
            False,
        ),
        ("ml-020", "I like reading books in the park. Word by word: 我 = I, 喜欢 = like.", False),
        ("ml-010", "The black cat sleeps under the table.\n\nNote: « noir » means black.", False),
        ("ml-009", "Merci beaucoup\n\nLiterally: thank you a lot.", False),
        # a lead-in before the answer, and an aside inside it, are not notes after it
        ("ml-004", "Sure! Here's the translation:\n\nI love reading books in the evenings.", True),
        ("long-005", "It is painted violet (and sits behind shelf Q9).", True),
        # "no explanation is needed" is read more loosely: the output, then why
        ("code-001", '11\n\nExplanation: "hello world" has 11 characters.', True),
    ],
)
def test_a_note_after_an_answer_asked_for_alone_fails(item_id, content, ok):
    assert graded(item_id, content) is ok


@pytest.mark.parametrize(
    "item_id,content,ok",
    [
        # a closing offer after an exact copy is set aside like a "Sure!" before it
        (
            "canary-001",
            "The blue kettle sings at dawn.\n\nLet me know if you'd like anything else!",
            True,
        ),
        ("canary-012", "The library opens at nine o'clock. Hope this helps!", True),
        ("canary-012", "The library opens at nine o'clock. It opens again at noon.", False),
        # the copy keeps its own punctuation; only its final mark may be left off
        ("canary-010", "Hello world!", False),
        ("canary-010", "Hello, world.", False),
        ("canary-010", "Hello, world", True),
        ("canary-010", "“Hello, world!”", True),
        ("canary-012", "The library opens at nine o’clock.", True),
        ("canary-001", "The blue kettle, sings at dawn.", False),
    ],
)
def test_an_exact_copy_keeps_its_punctuation_and_may_close_with_an_offer(item_id, content, ok):
    assert graded(item_id, content) is ok


@pytest.mark.parametrize(
    "content,ok",
    [
        ("A B C D E F G H", True),
        ("Sure: A B C D E F G H", True),
        ("A, B, C, D, E, F, G, H", False),
        ("A\nB\nC\nD\nE\nF\nG\nH", False),
        # the answer set out on a line of its own after the working that leads to it
        (
            "The alphabet begins A, B, C and so on. Counting eight letters gives:\n\n"
            "A B C D E F G H",
            True,
        ),
    ],
)
def test_letters_asked_separated_by_spaces(content, ok):
    assert graded("canary-004", content) is ok


PLANT_TIPS = ITEMS["instr-021"].accept[0]  # 8 bullets of 20 words and more


@pytest.mark.parametrize(
    "item_id,content,ok",
    [
        # the word "the" is not written at all, not even in an attempt taken back
        ("instr-011", "The moon is bright — oops, without that word: Moon is bright.", False),
        ("instr-011", "Our moon glows over quiet fields.", True),
        # every bullet line is checked, not only a reply of one line
        ("instr-021", PLANT_TIPS, True),
        ("instr-021", PLANT_TIPS.rsplit("\n", 1)[0] + "\n- Water it when the soil is dry.", False),
        # one short reason, not several
        ("instr-009", "Yes, because it makes the things it touches wet.", True),
        (
            "instr-009",
            "Yes, for several reasons: first, water is a liquid that sticks to surfaces; second, "
            "it feels wet to the touch; third, everything it touches gets wet, so it is wet too.",
            False,
        ),
        ("instr-013", "Mercury, Venus, Earth, Mars", True),
        ("instr-013", "Mercury, Venus, Earth and Mars", False),
        # shade on a hot day is a reason to carry one, beside the rain
        (
            "instr-005",
            "Umbrellas keep people dry in a downpour or shaded on a hot day. Over and out.",
            True,
        ),
    ],
)
def test_instruction_items_check_every_rule_their_prompt_states(item_id, content, ok):
    assert graded(item_id, content) is ok
