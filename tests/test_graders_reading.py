"""How the core graders (since core-v2) read chat answers: answer spans, LaTeX, hedges, negation, units,
whole-reply anchors, sequences, and the stricter format / JSON / tool checks."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from evalrun.endpoint.response import Response, ToolCall, example_to_response
from evalrun.grading.registry import grade, grade_spec
from evalrun.grading.span import boxed, is_negated, plain_text


def passes(kind: str, params: dict, content: str | None, **extra) -> bool:
    return grade_spec(kind, params, Response(content=content, **extra)).passed


def test_boxed_braces_balance_and_latex_reads_as_text():
    assert boxed(r"so $\boxed{\frac{3}{4}}$ and \boxed{10{,}000}") == [r"\frac{3}{4}", "10{,}000"]
    assert plain_text(r"$\text{H}_2\text{O}$ is $H_2O$; $9 \times 7$") == "H2O is H2O; 9 × 7"
    assert plain_text("**Answer:** `8`") == "Answer: 8"


@pytest.mark.parametrize(
    "text,answer",
    [
        ("**Answer:** 6 muffins × $2.50 = $15.00", 15),
        ("14 (because 14² = 196)", 14),
        ("160 (that's 640 × 0.25)", 160),
        (r"$\boxed{10{,}000}$", 10000),
        (r"Divide by 6: $\frac{18}{24} = \boxed{\frac{3}{4}}$", 0.75),
        ("Tom is 14 now, so in 3 years he will be 17.", 17),
        ("It was 7 degrees below zero.", -7),
        ("Not 9 — it's 8.", 8),
        (".4", 0.4),
    ],
)
def test_numeric_reads_the_answering_number(text, answer):
    assert passes("numeric", {"answer": answer}, text)


@pytest.mark.parametrize("text", ["13 or 14", "It's either 14 or 13.", "The answer is 13, not 14."])
def test_numeric_hedges_and_negated_numbers_fail(text):
    assert not passes("numeric", {"answer": 14}, text)


def test_numeric_checks_units_the_item_fixes():
    params = {"answer": 100, "pick": "first", "units": ["°C"], "reject_units": ["°F", "fahrenheit"]}
    assert passes("numeric", params, "At 1 atm, water boils at 100 °C.")
    assert not passes("numeric", params, "Water boils at 100 °F.")
    assert not passes("numeric", params, "100 degrees Fahrenheit")


NAMES = {"options": ["Mia", "Leo", "Sam"], "answer": "C"}
CAPITAL = {"options": ["Ottawa", "Toronto"], "answer": "A"}


@pytest.mark.parametrize(
    "params,text,ok",
    [
        (NAMES, "C", False),  # no letters were shown, so a letter is not an answer
        (NAMES, "Sam is the shortest, since Mia > Leo > Sam.", True),
        (NAMES, "**Sam** — Leo is taller.", True),
        (CAPITAL, "Although Toronto is the largest city, the capital is Ottawa.", True),
        (CAPITAL, "Ottawa or Toronto", False),
        (
            {"options": ["Portuguese", "Spanish"], "answer": "A", "when_several": "first"},
            "It is Portuguese, which is a Romance language related to Spanish.",
            True,
        ),
        (CAPITAL, "It's not Ottawa; it's Toronto.", False),
        ({"options": ["yes", "no"], "answer": "A"}, "Answer: Yes", True),
        (
            {"options": ["yes", "no"], "answer": "B"},
            "Yes — …\nNo other conclusion is possible.",
            False,
        ),
        ({"options": {"A": "36", "B": "48"}, "answer": "B"}, "Not A. The answer is **B**.", True),
    ],
)
def test_choice_reads_the_chosen_option(params, text, ok):
    assert passes("choice", params, text) is ok


@pytest.mark.parametrize(
    "text,at",
    [
        ("Кот не спит", "спит"),
        ("Der Zug ist heute nicht verspätet", "verspätet"),
        ("Le ciel n'est pas bleu", "bleu"),
        ("我每天早上喝咖啡，不喝茶。", "茶"),
        ("It prints 3, not 0.", "0"),
    ],
)
def test_negation_in_several_languages(text, at):
    assert is_negated(text, text.index(at))
    assert not passes("regex", {"pattern": at}, text)


def test_regex_anchors_the_whole_reply():
    only_ok = {"pattern": r"^\W*OK\W*$"}
    assert passes("regex", only_ok, "**OK**")
    assert not passes("regex", only_ok, "Sure!\nOK")
    assert passes("regex", {"pattern": r"(?m)^OK$"}, "Sure!\nOK")


def test_reply_match_fails_loops_floods_and_additions():
    p = {"answer": "The blue kettle sings at dawn", "match": "reply", "ignore_punct": True}
    assert passes("normalized", p, "Sure! Here it is:\n\n> “The blue kettle sings at dawn.”")
    for bad in [
        "The blue kettle sings at dawn. " * 4,
        "The blue kettle sings at dawn dawn dawn dawn",
        "The blue kettle sings at dawn and then it was quiet.",
    ]:
        assert not passes("normalized", p, bad)


def test_sequence_grader():
    nxt = {
        "given": ["2", "4", "6", "8"],
        "items": ["10", "12", "14"],
        "min_items": 1,
        "tokens": "numbers",
    }
    assert passes("sequence", nxt, "After 8 comes 10.")
    assert passes("sequence", nxt, "2, 4, 6, 8, 10")
    for bad in ["10 10 10 10 10", "10 or 12", "Not 10 — it is 12.", "12"]:
        assert not passes("sequence", nxt, bad)
    count = {"items": [str(n) for n in range(1, 11)], "tokens": "numbers"}
    assert passes("sequence", count, "Sure! Here you go: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10")
    assert not passes("sequence", count, "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12")
    letters = {"items": list("ABCDEFGH"), "tokens": "letters"}
    assert passes("sequence", letters, "Here is a list: a b c d e f g h")
    assert not passes("sequence", letters, "A B C D E F G H I J")


def test_format_only_list_sentences_tables_and_repeats():
    assert not passes("format", {"bullets": 3, "only_list": True}, "Here:\n- a\n- b\n- c")
    assert passes(
        "format",
        {"ends_with": "Over and out.", "max_sentences": 1},
        "Umbrellas keep us dry. Over and out.",
    )
    assert not passes(
        "format",
        {"ends_with": "Over and out.", "max_sentences": 1},
        "It rains. We get wet. Over and out.",
    )
    table = "| A | B |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |"
    assert passes("format", {"table_rows": 2}, table)
    assert not passes("format", {"table_rows": 2}, table + "\n| 5 | 6 |")
    assert not passes("format", {"bullets": 2, "distinct": True}, "- same\n- same")


def test_json_and_tool_values_take_rules():
    conf = {"required": {"c": "number"}, "values": {"c": {"min": 0, "max": 1}}}
    assert passes("json", conf, '{"c": 0.9}')
    assert not passes("json", conf, '{"c": 95}')
    call = {"name": "get_weather", "arguments": {"city": "Chicago", "unit": "fahrenheit"}}
    resp = Response(
        tool_calls=[
            ToolCall(
                name="get_weather", arguments={"city": "Chicago, IL, USA", "unit": "fahrenheit"}
            )
        ]
    )
    assert grade_spec("tool_call", call, resp).passed
    body = {"name": "send_email", "arguments": {"body": {"pattern": r"\b1\s*pm"}}}
    wrong = Response(tool_calls=[ToolCall(name="send_email", arguments={"body": "now at 12pm"})])
    assert not grade_spec("tool_call", body, wrong).passed


def test_example_to_response_shapes():
    assert example_to_response("8").content == "8"
    r = example_to_response(
        {"content": None, "reasoning": "8", "tool_calls": [{"name": "f", "arguments": '{"x": 1}'}]}
    )
    assert r.reasoning == "8" and r.tool_calls[0].arguments == {"x": 1}
    for bad in [3, {"text": "8"}, {"tool_calls": [{"arguments": {}}]}]:
        with pytest.raises((TypeError, ValueError)):
            example_to_response(bad)


@pytest.mark.parametrize(
    "text,answer",
    [
        ("Each pays $29 (3 × 29 = 87).", 29),
        ("The average is 21 (84 / 4).", 21),
        ("x = 8 (check: 3·8 + 7 = 31).", 8),
        ("The square root of 196 is 14, because 14 multiplied by itself gives 196.", 14),
        ("Le trajet dure 155 minutes (2 h 35).", 155),
        ("1600? No — 0.25 × 640 = 160.", 160),
        ("14... no, that's his age now; in 3 years he'll be 17.", 17),
    ],
)
def test_numeric_reads_the_claim_before_its_working_and_after_a_retraction(text, answer):
    assert passes("numeric", {"answer": answer}, text)


@pytest.mark.parametrize(
    "kind,params,text",
    [
        ("numeric", {"answer": 8}, "8? Actually, 9."),
        ("numeric", {"answer": 160}, "160... actually 0.25 × 640 = 16."),
        (
            "choice",
            {"options": ["Ottawa", "Toronto"], "answer": "A"},
            "Ottawa... actually, Toronto.",
        ),
        ("choice", {"options": ["yes", "no"], "answer": "B"}, "No.\nActually yes, it follows."),
        ("regex", {"pattern": "Wien"}, "Die Hauptstadt ist Wien... nein, Salzburg."),
    ],
)
def test_a_retracted_right_answer_does_not_pass(kind, params, text):
    assert not passes(kind, params, text)


def test_no_as_a_verdict_and_numbered_steps_are_not_retractions():
    yes_no = {"options": ["yes", "no"], "answer": "B"}
    assert passes("choice", yes_no, "Great question! No, because only some cats are grey.")
    steps = "1. Boil water.\n2. Pour it over the tea.\n3. Wait three minutes, then drink."
    assert passes("regex", {"pattern": "boil"}, steps)


@pytest.mark.parametrize(
    "kind,params,text",
    [
        ("regex", {"pattern": r"\bRoma\b"}, "Roma oder Mailand"),
        ("regex", {"pattern": r"\bмосква\b"}, "Москва или Казань"),
        ("regex", {"pattern": r"\bchien\b"}, "Le chien ou le chat, au choix."),
        ("regex", {"pattern": r"\(\s*4\s*,\s*5\s*\)"}, "(4, 5) or (5, 4)"),
        ("regex", {"pattern": "100"}, "Either 100 °C or 90 °C, it depends."),
        ("regex", {"pattern": "лес"}, "Либо «Мы гуляем в лесу», либо «Мы гуляем в поле»."),
        ("contains_all", {"items": ["NaCl"]}, "NaCl or KCl"),
        ("choice", {"options": {"A": "1", "B": "2", "C": "3"}, "answer": "C"}, "B or C"),
        ("choice", {"options": ["red", "green"], "answer": "A"}, "Red or green, hard to say."),
    ],
)
def test_two_candidates_offered_together_fail_whatever_the_grader(kind, params, text):
    """A reply that offers a right and a wrong candidate as alternatives ("X or Y", "X или Y",
    "either X or Y") commits to neither, whichever grader reads it."""
    assert not passes(kind, params, text)


@pytest.mark.parametrize(
    "kind,params,text",
    [
        ("regex", {"pattern": r"\bRoma\b"}, "Roma, not Milan or Turin."),
        ("regex", {"pattern": "155"}, "155 minutes, or 2 hours 35 minutes."),
        ("regex", {"pattern": "12"}, "12 (or 12.0 as a float)"),
        ("regex", {"pattern": r"\bboil"}, "Boil water; whether you use a kettle or a pan, wait."),
        ("regex", {"pattern": "Wien"}, "Wien. Ob mit Zug oder Auto, es ist nah."),
        (
            "choice",
            {"options": ["the sand", "the nails", "the same"], "answer": "C"},
            "They weigh the same: sand or nails, two kilograms is two kilograms.",
        ),
        ("regex", {"pattern": "3"}, "It returns 3 or more only when the list is longer; here 3."),
    ],
)
def test_an_or_that_offers_no_alternative_answer_is_no_hedge(kind, params, text):
    assert passes(kind, params, text)


@pytest.mark.parametrize(
    "text,answer",
    [
        ("one hundred fifty-five minutes", 155),
        ("A hundred and fifty-five minutes.", 155),
        ("Seventy-two.", 72),
        ("Negative eight.", -8),
        ("ten thousand eight hundred seconds", 10800),
        ("In nineteen eighty-nine.", 1989),
        ("72 km/h (180 ÷ 2.5).", 72),
        ("155 min: 20 min to 10:00, then 2 h 15 min to 12:15.", 155),
        ("3 hours is 180 minutes, so 10,800 seconds.", 10800),
        ("13. Hmm, 13 × 13 = 169, so it's 14.", 14),
        ("1 is not prime, so the smallest prime is **2**.", 2),
        (
            "He starts with 5 boxes of 24, which is 120 pencils. After giving away 37, he has "
            "120 − 37 = 83 left.",
            83,
        ),
    ],
)
def test_numeric_reads_spelled_numbers_units_and_the_sentence_conclusion(text, answer):
    assert passes("numeric", {"answer": answer}, text)


@pytest.mark.parametrize("text", ["144 ÷ 12", "120 − 37", "5 + 3."])
def test_the_computation_restated_is_not_its_value(text):
    assert not passes("numeric", {"answer": {"144 ÷ 12": 12, "120 − 37": 83}.get(text, 8)}, text)


def test_spelled_numbers_count_in_sequences_and_name_numeric_options():
    counting = {"items": [str(n) for n in range(1, 11)], "tokens": "numbers"}
    assert passes("sequence", counting, "One, two, three, four, five, six, seven, eight, nine, ten")
    assert not passes("sequence", counting, "One, two, three, four, five, six, seven, eight, nine")
    years = {"options": ["1989", "1991"], "answer": "A", "letters": False}
    assert passes("choice", years, "In nineteen eighty-nine.")
    assert not passes("choice", years, "Nineteen ninety-one")


def test_restatements_emoji_lead_ins_asides_and_distractors_across_sentences():
    counting = {"items": [str(n) for n in range(1, 6)], "tokens": "numbers"}
    assert passes("sequence", counting, "1, 2, 3, 4... and 5. So: 1, 2, 3, 4, 5")
    assert not passes("sequence", counting, "1, 2, 3, 4, 5. So: 1, 2, 3, 4, 5, 6")
    copy = {"answer": "Good night, all", "match": "reply", "ignore_punct": True}
    assert passes("normalized", copy, "Good night, all! 🌙")
    assert not passes("normalized", copy, "Good night, all! Sleep well.")
    assert passes("language", {"language": "ru"}, "Sure! лес, река, гора")
    assert not passes("language", {"language": "ru"}, "Sure! forest, river, mountain")
    capital = {"options": ["Canberra", "Sydney"], "answer": "A"}
    assert not passes("choice", capital, "Sydney\n\n(Canberra is where parliament sits, though.)")
    assert not passes("numeric", {"answer": 5, "pick": "first"}, "Many say 5.\nBut it is 4.")
    assert passes("numeric", {"answer": 4, "pick": "first"}, "Many say 5.\nBut it is 4.")


def test_hmm_no_sorry_and_denied_subjects_retract_but_actually_no_is_a_verdict():
    capital = {"options": ["Canberra", "Sydney"], "answer": "A"}
    assert passes("choice", capital, "Sydney. Hmm, no: the capital is Canberra.")
    assert passes("choice", capital, "Sydney isn't the capital; Canberra is.")
    assert passes("numeric", {"answer": 32}, "It's 0... sorry, in Fahrenheit that's 32.")
    assert passes("numeric", {"answer": 2, "pick": "first"}, "1? No — 1 is not prime. It's 2.")
    yes_no = {"options": ["yes", "no"], "answer": "B"}
    assert passes("choice", yes_no, "Yes. Actually no — the street is dry, so it did not rain.")
    assert not passes("choice", yes_no, "No. Actually yes — it rained.")


def test_not_x_sets_a_named_thing_aside_and_a_lone_denial_is_the_claim():
    assert passes(
        "regex", {"pattern": "BOX 7", "negate": True}, "Not BOX 7 (that's the tools) — BOX 9."
    )
    assert passes("numeric", {"answer": -3}, "Not 3 °C but −3 °C: it froze.")
    assert passes("numeric", {"answer": -3}, "Not 3 — dropping 5 degrees from 2 gives −3.")
    yes_no = {"options": ["yes", "no"], "answer": "B"}
    assert passes("choice", yes_no, "Not necessarily: no, only some are.")
    odd = {"options": ["4", "6", "7"], "answer": "C"}
    assert passes("choice", odd, "7 is not even (7 = 2 × 3 + 1).")
    assert passes("numeric", {"answer": 4, "ignore": [9]}, "4 jars are not broken.")


@pytest.mark.parametrize(
    "kind,params,text",
    [
        ("choice", {"options": ["Jupiter", "Saturn"], "answer": "A"}, "Saturn, or rather Jupiter."),
        ("choice", {"options": ["Jupiter", "Saturn"], "answer": "A"}, "Saturn. Oops — Jupiter."),
        ("numeric", {"answer": 72}, "63 — make that 72."),
        ("numeric", {"answer": 72}, "63. My mistake: 72."),
        ("regex", {"pattern": "Wien"}, "Graz... Entschuldigung, Wien."),
        ("regex", {"pattern": "понедельник"}, "Вторник... то есть понедельник."),
    ],
)
def test_more_ways_of_taking_an_answer_back(kind, params, text):
    assert passes(kind, params, text)
    assert not passes(kind, params, text.split(" ")[-1] + " Oops — " + text.split(" ")[0])


@pytest.mark.parametrize(
    "text,answer,wrong",
    [
        ("$12.50? No: 6 × $2.50 = $15.", 15, 12.5),  # "No:" takes the guess back
        ("20? Let me add again: 12 + 18 + 25 + 29 = 84, and 84 / 4 = 21.", 21, 20),
        ("91 − 20 = 71. (At first I wrote 81, but 7 × 13 is 91.)", 71, 91),  # a closing aside
        ("32 °F, which is 0 °C.", 32, 0),  # "which is" restates the opening claim
        ("It is not 7 °C but −7 °C.", -7, 7),  # a number named to be rejected opens nothing
    ],
)
def test_numeric_reads_past_a_retraction_an_aside_and_a_restatement(text, answer, wrong):
    assert passes("numeric", {"answer": answer}, text)
    assert not passes("numeric", {"answer": wrong}, text)


@pytest.mark.parametrize(
    "question,options,text,ok",
    [
        (
            "What is the largest ocean on Earth?",
            ["Pacific", "Atlantic"],
            "The Atlantic is the second largest; the largest is the Pacific.",
            True,
        ),
        (
            "What is the largest ocean on Earth?",
            ["Pacific", "Atlantic"],
            "The Pacific is the second largest; the largest is the Atlantic.",
            False,
        ),
        (
            "What is the capital city of Australia?",
            ["Canberra", "Sydney"],
            "Sydney is the biggest city, but the capital is Canberra.",
            True,
        ),
        (
            "What is the capital city of Australia?",
            ["Canberra", "Sydney"],
            "Canberra is the capital, but Sydney is the biggest city.",
            True,
        ),
        (
            "What is the capital city of Australia?",
            ["Canberra", "Sydney"],
            "Canberra is the biggest city, but the capital is Sydney.",
            False,
        ),
        ("Who came second?", ["Jo", "Ravi"], "Ravi came first; Jo came second.", True),
        (
            "Who has the fewest books?",
            ["Priya", "Lena"],
            "Lena has the most, Priya the fewest.",
            True,
        ),
    ],
)
def test_of_several_named_options_the_clause_answering_the_question_counts(
    question, options, text, ok
):
    item = SimpleNamespace(
        messages=[{"role": "user", "content": question}],
        languages=["en"],
        category="factual",
        tags=[],
        grader=SimpleNamespace(kind="choice", params=lambda: {"options": options, "answer": "A"}),
    )
    assert grade(item, Response(content=text)).passed is ok


def test_an_option_named_as_the_comparison_is_not_picked():
    names = {"options": ["Mia", "Leo", "Sam"], "answer": "C"}
    assert passes("choice", names, "Leo? No wait — Sam is shorter than Leo.")
    assert not passes("choice", names, "Leo is shorter than Sam.")


@pytest.mark.parametrize(
    "kind,params,right,wrong",
    [
        ("numeric", {"answer": 72}, "答案是72。", "答案是81。"),  # no space before a CJK number
        ("numeric", {"answer": 10800}, "3 Stunden haben 10.800 Sekunden.", "10.080 Sekunden."),
        ("numeric", {"answer": 7, "pick": "first"}, "Sieben.", "Sechs."),
        ("numeric", {"answer": 6, "pick": "first"}, "Шесть.", "Sept."),
        (
            "choice",
            {"options": ["yes", "no"], "answer": "B"},
            "Nein, es hat nicht geregnet.",
            "Да.",
        ),
        ("choice", {"options": ["yes", "no"], "answer": "A"}, "Oui.", "Нет."),
    ],
)
def test_answers_written_in_another_of_the_suites_languages(kind, params, right, wrong):
    assert passes(kind, params, right)
    assert not passes(kind, params, wrong)


@pytest.mark.parametrize(
    "kind,params,text",
    [
        ("numeric", {"answer": 9}, "8\n\nI misspoke: 5 + 3 is 9."),
        ("numeric", {"answer": 81}, "72\n\nStrike that — 9 × 8 = 81."),
        ("numeric", {"answer": 2048}, "1024\n\nUpdate: 2^10 is 2048."),
        ("numeric", {"answer": 13}, "14\n\nOn reflection, it's 13."),
        ("numeric", {"answer": 20}, "21\n\nChecking again, the average is 20."),
        ("regex", {"pattern": r"\bprints?\W+1\b"}, "0\n\nOn closer inspection, it prints 1."),
        ("regex", {"pattern": "Graz"}, "Wien. Eigentlich, Graz."),
        ("regex", {"pattern": "вторник"}, "Понедельник. Вернее, вторник."),
    ],
)
def test_still_more_ways_of_taking_an_answer_back(kind, params, text):
    assert passes(kind, params, text)


def test_a_patterns_end_anchor_is_the_end_of_a_bare_first_line():
    zero = {"pattern": r"^\W*0\b|\bprints?\W+0\b|\b0\W*$"}
    assert not passes("regex", zero, "1\n\nThe loop never changes count, and it ends at 0")
    assert passes("regex", zero, "0\n\nThe loop never changes count, so it ends at 0")
    assert passes("regex", zero, "Let me trace it:\ncount + 1 discards its value.\nFinal: 0")
    assert passes("regex", zero, "1\n\nNo wait, it prints 0")
