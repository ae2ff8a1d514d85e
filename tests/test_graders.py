"""Graders on the hard cases: a correct answer phrased naturally passes, a near miss fails."""

from __future__ import annotations

import pytest

from evalrun.base.errors import SuiteError
from evalrun.endpoint.response import Response, ToolCall
from evalrun.grading.registry import GRADERS, Grade, grade, grade_spec, grader, validate_params
from evalrun.suite.load import Item


def passes(kind: str, params: dict, content: str | None, **extra) -> bool:
    return grade_spec(kind, params, Response(content=content, **extra)).passed


# ---------------------------------------------------------------- numeric


@pytest.mark.parametrize(
    "text",
    [
        "42",
        "The answer is 42.",
        "**42**",
        "6 × 7 = 42",
        "Answer: 42",
        "\\boxed{42}",
        "It takes 42 minutes.",
        "forty-two... I mean 42",
        "Answer: 42. (40 + 2, checked in 3 steps)",
    ],
)
def test_numeric_accepts_natural_phrasings(text):
    assert passes("numeric", {"answer": 42}, text)


@pytest.mark.parametrize(
    "text",
    [
        "43",
        "The answer is 24.",
        "I think 42 is wrong; it is 41.",
        "\\boxed{41} (not 42)",
        "I'm sorry, but I can't help with that.",
        "",
    ],
)
def test_numeric_rejects_near_misses_and_refusals(text):
    assert not passes("numeric", {"answer": 42}, text)


@pytest.mark.parametrize(
    "text,answer",
    [
        ("It dropped to -5 degrees.", -5),
        ("It dropped to \u22125 \u00b0C.", -5),  # U+2212 MINUS SIGN
        ("The balance is -1,250.75 dollars.", -1250.75),
        ("About 1,234,567 people.", 1234567),
        ("About 1\u00a0234\u00a0567 people.", 1234567),
        ("Total: $3,400.", 3400),
        ("The tank holds 12.5 L.", 12.5),
        ("It is 45%.", 45),
        ("3/4", 0.75),
        ("Answer: seven", 7),
        ("\uff14\uff12", 42),  # full-width digits
    ],
)
def test_numeric_signs_separators_units(text, answer):
    assert passes("numeric", {"answer": answer}, text)


def test_numeric_range_is_not_a_negative_number():
    assert passes("numeric", {"answer": 20}, "Between 10-20")
    assert not passes("numeric", {"answer": -20}, "Between 10-20")


def test_numeric_several_numbers_takes_marked_or_final():
    text = "First 12 + 30 = 42, then subtract 2. Answer: 40"
    assert passes("numeric", {"answer": 40}, text)
    assert not passes("numeric", {"answer": 42}, text)
    assert passes("numeric", {"answer": 40}, "12 + 30 = 42, 42 - 2 = 40")


def test_numeric_decimal_comma_only_when_asked():
    """A comma before one or two digits is a decimal comma anywhere ("3,5 kg", "0,4"); before
    three it stays a thousands separator unless the item asks for decimal commas."""
    assert passes("numeric", {"answer": 3.5}, "3,5 kg")
    assert not passes("numeric", {"answer": 3.5}, "3,500 kg")
    assert passes("numeric", {"answer": 3.5, "decimal_comma": True}, "3,5 kg")
    assert passes("numeric", {"answer": 3.5, "decimal_comma": True}, "3,500 kg")
    assert passes("numeric", {"answer": 1500, "decimal_comma": True}, "1.500 Euro")


def test_numeric_tolerance():
    assert passes("numeric", {"answer": 3.14159, "tolerance": 0.01}, "pi is about 3.14")
    assert not passes("numeric", {"answer": 3.14159}, "pi is about 3.14")


# ---------------------------------------------------------------- content channel


def test_answer_only_in_reasoning_fails_and_says_why():
    g = grade_spec("numeric", {"answer": 42}, Response(content=None, reasoning="It is 42."))
    assert not g.passed
    assert "reasoning" in g.detail


# ---------------------------------------------------------------- choice

OPTS = {"options": ["Oslo", "Bergen", "Tromso", "Trondheim"], "answer": "A", "letters": True}


@pytest.mark.parametrize(
    "text",
    [
        "A",
        "a",
        "(A)",
        "A)",
        "A.",
        "**A**",
        "The answer is A.",
        "Answer: A) Oslo",
        "Oslo",
        "The capital is Oslo.",
        "I think it's A.",
    ],
)
def test_choice_accepts_letter_or_text(text):
    assert passes("choice", OPTS, text)


@pytest.mark.parametrize(
    "text",
    [
        "B",
        "(C) Tromso",
        "Bergen",
        "The answer is D.",
        "A or B",
        "Oslo or Bergen",
        "I don't know.",
        "A city on the west coast: Bergen",
    ],
)
def test_choice_rejects_wrong_or_ambiguous(text):
    assert not passes("choice", OPTS, text)


def test_choice_option_text_inside_another_is_not_a_pick():
    params = {"options": ["5", "15", "50"], "answer": "B"}
    assert passes("choice", params, "There are 15 of them.")
    assert not passes("choice", params, "There are 50.")


# ---------------------------------------------------------------- text graders


def test_normalized_unicode_forms_and_markdown():
    assert passes("normalized", {"answer": "café"}, "Cafe\u0301")  # combining acute
    assert passes("normalized", {"answer": "fine"}, "\ufb01ne")  # fi ligature
    assert passes("normalized", {"answer": "Blue whale"}, "**blue whale**.")
    assert not passes("normalized", {"answer": "Blue whale"}, "The blue whale")
    assert passes("normalized", {"answer": "Blue whale", "match": "contains"}, "The blue whale.")
    assert not passes("normalized", {"answer": "whale", "match": "contains"}, "whales")


def test_cyrillic_latin_lookalikes_do_not_match():
    latin_m = "Mосква"  # first letter is LATIN CAPITAL M
    assert not passes("contains_all", {"items": ["Москва"]}, f"Это {latin_m}.")
    assert passes("contains_all", {"items": ["Москва"]}, "Это Москва.")
    g = grade_spec("language", {"language": "ru"}, Response(content=f"Столица — {latin_m}."))
    assert not g.passed and "look-alike" in g.detail


def test_language_detection():
    assert passes("language", {"language": "ru"}, "Столица Франции — Париж.")
    assert not passes("language", {"language": "ru"}, "The capital of France is Paris.")
    assert passes("language", {"language": "fr"}, "La capitale de la France est Paris.")
    assert not passes("language", {"language": "fr"}, "The capital of France is Paris.")
    assert not passes("language", {"language": "de"}, "La capitale de la France est Paris.")
    assert passes("language", {"language": "de"}, "Die Hauptstadt von Frankreich ist Paris.")
    assert passes("language", {"language": "zh"}, "法国的首都是巴黎。")
    assert not passes("language", {"language": "zh"}, "Paris is the capital.")
    assert not passes("language", {"language": "ja"}, "法国的首都是巴黎。")


def test_contains_all_synonyms_and_contains_none():
    params = {"items": [["car", "automobile"], "red"]}
    assert passes("contains_all", params, "A red automobile.")
    assert not passes("contains_all", params, "A red bicycle.")
    assert not passes("contains_all", {"items": ["cat"]}, "concatenate")
    assert passes("contains_none", {"items": ["sorry", "cannot"]}, "Here it is.")
    assert not passes("contains_none", {"items": ["sorry"]}, "Sorry, no.")


def test_fuzzy_and_regex():
    assert passes("fuzzy", {"answer": "the quick brown fox"}, "The quick brown fox.")
    assert not passes("fuzzy", {"answer": "the quick brown fox"}, "a slow red hen")
    assert passes("regex", {"pattern": r"\bdef \w+\("}, "def add(a, b):")
    assert not passes("regex", {"pattern": r"^\d{3}$", "full": True}, "1234")


def test_a_forbidden_pattern_with_whole_reply_counts_what_a_retraction_takes_back():
    forbid = {"pattern": r"FIG\s*207", "negate": True}
    taken_back = "Not FIG 207 — it is in the box labelled PLUM 318."
    assert passes("regex", forbid, taken_back)  # the claim reader sets FIG 207 aside
    assert not passes("regex", {**forbid, "whole_reply": True}, taken_back)
    assert not passes("regex", {**forbid, "whole_reply": True}, "FIG 207? No: PLUM 318.")
    assert passes("regex", {**forbid, "whole_reply": True}, "PLUM 318")


# ---------------------------------------------------------------- json

PERSON = {"required": {"name": "string", "age": "integer", "tags": "array"}}


def test_json_inside_a_code_fence():
    text = '```json\n{"name": "Ada", "age": 36, "tags": []}\n```'
    assert passes("json", PERSON, text)


def test_json_prose_only_when_allowed():
    text = 'Sure! {"name": "Ada", "age": 36, "tags": ["x"]} Hope this helps.'
    assert not passes("json", PERSON, text)
    assert passes("json", {**PERSON, "allow_prose": True}, text)


def test_json_types_values_and_broken_json():
    assert not passes("json", PERSON, '{"name": "Ada", "age": "36", "tags": []}')
    assert not passes("json", PERSON, '{"name": "Ada", "tags": []}')
    assert not passes("json", PERSON, '{"name": "Ada", "age": 36, "tags": [],}')
    assert not passes("json", {**PERSON, "values": {"age": 37}}, '{"name":"A","age":36,"tags":[]}')
    assert passes("json", {**PERSON, "values": {"name": "ada"}}, '{"name":"Ada","age":1,"tags":[]}')
    nested = {"required": {"user.id": "integer"}}
    assert passes("json", nested, '{"user": {"id": 7}}')
    assert not passes("json", {"required": {}, "root": "array", "min_items": 3}, "[1, 2]")


# ---------------------------------------------------------------- tool calls

WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}


def call(name, args):
    return Response(content=None, tool_calls=[ToolCall.from_raw(name, args)])


def test_tool_call_arguments_normalized():
    assert grade_spec(
        "tool_call", WEATHER, call("get_weather", '{"city": " paris", "days": "3"}')
    ).passed
    assert grade_spec(
        "tool_call", WEATHER, call("get_weather", {"city": "Paris", "days": 3.0})
    ).passed
    assert not grade_spec(
        "tool_call", WEATHER, call("get_weather", {"city": "Lyon", "days": 3})
    ).passed
    assert not grade_spec("tool_call", WEATHER, call("get_time", {"city": "Paris"})).passed
    assert not grade_spec("tool_call", WEATHER, call("get_weather", "{city: Paris")).passed


def test_tool_call_left_as_text_fails_and_no_tool_case():
    g = grade_spec("tool_call", WEATHER, Response(content='get_weather({"city": "Paris"})'))
    assert not g.passed and "raw text" in g.detail
    assert passes("tool_call", {}, "2 + 2 is 4.")
    assert not grade_spec("tool_call", {}, call("calculator", {"x": "2+2"})).passed


# ---------------------------------------------------------------- format and combinators


def test_format_checks():
    three = "- apples\n- pears\n- plums"
    assert passes("format", {"bullets": 3}, three)
    assert passes("format", {"bullets": 3}, "1. apples\n2. pears\n3. plums")
    assert not passes("format", {"bullets": 3}, three + "\n- figs")
    assert passes("format", {"max_words": 5}, "Short and sweet.")
    assert not passes("format", {"max_words": 2}, "Short and sweet.")
    assert passes("format", {"all_caps": True}, "DONE, 3 ITEMS.")
    assert not passes("format", {"all_caps": True}, "DONE, 3 items.")
    closing = {"ends_with": "Stay curious"}
    assert passes("format", closing, "Bees dance.\n\n**Stay curious!**")
    assert not passes("format", closing, "Stay curious. Bees dance.")


def test_all_and_any():
    both = {
        "graders": [{"kind": "format", "max_words": 6}, {"kind": "contains_all", "items": ["owl"]}]
    }
    assert passes("all", both, "An owl hoots.")
    assert not passes("all", both, "A hawk screams.")
    either = {
        "graders": [{"kind": "numeric", "answer": 4}, {"kind": "normalized", "answer": "four"}]
    }
    assert passes("any", either, "four")


# ---------------------------------------------------------------- registry


@pytest.mark.parametrize(
    "kind,params",
    [
        ("numeric", {"answer": 1, "tol": 2}),
        ("numeric", {}),
        ("format", {}),
        ("regex", {"pattern": "("}),
        ("language", {"language": "xx"}),
        ("all", {"graders": [{"kind": "nope"}]}),
        ("nope", {}),
    ],
)
def test_bad_params_are_suite_errors(kind, params):
    with pytest.raises(SuiteError):
        validate_params(kind, params)


def test_third_party_grader_registers_like_builtins():
    @grader("always_test")
    def _always(response, params):
        return Grade(passed=params["ok"], detail="")

    try:
        item = Item(
            id="x-1",
            category="x",
            messages=[],
            grader={"kind": "always_test", "ok": True},
            accept=["a"],
            reject=["b"],
        )
        assert grade(item, Response(content="hi")).passed
    finally:
        GRADERS.pop("always_test")


def test_numeric_negative_words_and_ignored_givens():
    assert passes("numeric", {"answer": -8}, "The answer is negative 8.")
    assert passes("numeric", {"answer": -8}, "15 minus 23 is minus 8")
    assert passes("numeric", {"answer": -8}, "15 minus 23 = -8")
    text = "10 800 seconds make up 3 hours."
    assert not passes("numeric", {"answer": 10800}, text)
    assert passes("numeric", {"answer": 10800, "ignore": [3]}, text)


def test_choice_when_several_takes_first_or_last():
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    text = "Wednesday plus 7 days is Wednesday again; 3 more days makes it Saturday."
    assert not passes("choice", {"options": days, "answer": "F"}, text)
    assert passes("choice", {"options": days, "answer": "F", "when_several": "last"}, text)
    assert passes("choice", {"options": days, "answer": "C", "when_several": "first"}, text)


def test_numeric_first_for_rambling_factual_answers_and_output_marker():
    text = "A hexagon has 6 sides. It is made of six triangles with angles of 180 degrees."
    assert not passes("numeric", {"answer": 6}, text)
    assert passes("numeric", {"answer": 6, "pick": "first"}, text)
    assert passes("numeric", {"answer": 10}, "Output: 10, the sum of the numbers in range [0, 4].")
    assert passes("numeric", {"answer": 11}, "It prints: 11 (5 + 1 + 5 characters)")


def test_choice_without_letters_takes_the_first_named_answer():
    params = {
        "options": ["Portuguese", "Spanish"],
        "answer": "A",
        "letters": False,
        "when_several": "first",
    }
    assert passes("choice", params, "Portuguese. Many neighbours speak Spanish.")
    assert not passes("choice", params, "Spanish, though Portuguese is official.")
    assert not passes("choice", {**params, "options": ["Austen", "Dickens"]}, "(B) Dickens")
    assert passes("choice", {"options": ["Au", "Ag"], "answer": "A", "letters": False}, "Au")
    assert not passes("choice", {"options": ["Au", "Ag"], "answer": "A", "letters": False}, "A")


def test_choice_first_uses_first_mention_last_uses_last():
    opts = {"options": ["Portuguese", "Spanish"], "answer": "A", "letters": False}
    text = "Portuguese. Some speak Spanish, but Portuguese is official."
    assert passes("choice", {**opts, "when_several": "first"}, text)
    assert passes("choice", {**opts, "when_several": "last"}, text)
    assert not passes("choice", {**opts, "when_several": "last"}, "Portuguese, or rather Spanish")


def test_json_details_say_what_is_wrong():
    broken = grade_spec("json", {"required": {}}, Response(content='{"a": 1,}'))
    assert not broken.passed and "line 1" in broken.detail
    cut = grade_spec("json", {"required": {}}, Response(content='```json\n{"a": [1, 2'))
    assert not cut.passed and "never closes" in cut.detail
