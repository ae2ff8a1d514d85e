"""Wrong replies the graders passed, and the right ones beside them, on the shipped core items.

Each case is (item id, reply, whether a careful grader passes it). The reply is in the shape of an
item's `accept` example: a string (the content) or {content, tool_calls}.
"""

from __future__ import annotations

import pytest
from support.core_replies import grade_reply


def call(name: str, **arguments: object) -> dict:
    return {"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}


# The round's rules, found by blind7's tuning half and by written probes: each row an item, a
# reply, and whether a careful grader passes it
CASES = [
    # A key the item does not ask for, whose value the prompt's data does not give, is invented:
    # "country" for a person the sentence places only in Porto, "humidity" for a note without one,
    # "passed" for a CSV row without it. A key restating what the prompt gives ("street" for a
    # contact with a street) is not.
    (
        "struct-002",
        '{"name": "Tomas Ribeiro", "age": 34, "city": "Porto", "country": "Portugal"}',
        False,
    ),
    (
        "struct-015",
        '{"day": "Tuesday", "temperature_c": 18, "conditions": "light rain", "wind_kmh": 12,'
        ' "humidity": 80}',
        False,
    ),
    ("struct-021", '{"id": 7, "name": "Lena", "score": 88, "passed": true}', False),
    (
        "struct-004",
        '{"person": {"name": "Dana Whitlow", "address": {"street": "12 Elm Row",'
        ' "city": "Boston", "zip": "02134", "country": "USA"}}}',
        False,
    ),
    (
        "struct-004",
        '{"person": {"name": "Dana Whitlow", "address": {"street": "12 Elm Row",'
        ' "city": "Boston", "zip": "02134"}}}',
        True,
    ),
    (
        "struct-015",
        '{"day": "Tuesday", "temperature_c": 18, "conditions": "light rain", "wind_kmh": 12,'
        ' "unit": "Celsius"}',
        True,
    ),
    ("struct-002", '{"name": "Tomas Ribeiro", "age": 34, "city": "Porto"}', True),
    ("struct-021", '{"id": 7, "name": "Lena", "score": 88}', True),
    # A listed sequence with one more item of the same shape past its end ("..., December,
    # Undecember") lists more than the sequence holds; a remark after the list is no item.
    (
        "canary-006",
        "January, February, March, April, May, June, July, August, September, October,"
        " November, December, Undecember",
        False,
    ),
    (
        "canary-006",
        "1. January\n2. February\n3. March\n4. April\n5. May\n6. June\n7. July\n8. August\n"
        "9. September\n10. October\n11. November\n12. December\n13. Smarch",
        False,
    ),
    (
        "canary-006",
        "January\nFebruary\nMarch\nApril\nMay\nJune\nJuly\nAugust\nSeptember\nOctober\n"
        "November\nDecember\nUndecember",
        False,
    ),
    (
        "canary-006",
        "January, February, March, April, May, June, July, August, September, October,"
        " November, December",
        True,
    ),
    (
        "canary-006",
        "January, February, March, April, May, June, July, August, September, October,"
        " November, December, in that order.",
        True,
    ),
    (
        "canary-006",
        "January, February, March, April, May, June, July, August, September, October,"
        " November, December, basically.",
        True,
    ),
    (
        "canary-006",
        "1. January\n2. February\n3. March\n4. April\n5. May\n6. June\n7. July\n8. August\n"
        "9. September\n10. October\n11. November\n12. December\n\nThat's all twelve.",
        True,
    ),
    # "give one short reason" answered with a numbered or bulleted list of reasons gives several,
    # as "for three reasons: ..." does in prose; one reason after the verdict passes.
    (
        "instr-009",
        "Yes, water is wet.\n\n1. It adheres to surfaces.\n2. It is a liquid.\n"
        "3. It makes things damp.\n4. Scientists agree it can wet itself.",
        False,
    ),
    (
        "instr-009",
        "No, it is not.\n- It makes other things wet.\n- It is not itself wet.",
        False,
    ),
    ("instr-009", "Yes, because it makes other things wet.", True),
    ("instr-009", "No, water itself is not wet;\n- it makes things wet.", True),
    # An argument whose JSON type is not the one the tool's schema asks for: the tool would refuse
    # "250" for a number. An integer is a number; 4.0 is an integer, 4.5 is not.
    (
        "tool-002",
        call("convert_currency", amount="250", from_currency="USD", to_currency="EUR"),
        False,
    ),
    ("tool-010", call("book_table", restaurant="Luigi's", party_size="4", time="19:00"), False),
    ("tool-011", call("set_thermostat", room="bedroom", temperature="21"), False),
    ("tool-011", call("set_thermostat", room="bedroom", temperature=True), False),
    ("tool-010", call("book_table", restaurant="Luigi's", party_size=4.5, time="19:00"), False),
    (
        "tool-002",
        call("convert_currency", amount=250, from_currency="USD", to_currency="EUR"),
        True,
    ),
    (
        "tool-002",
        call("convert_currency", amount=250.0, from_currency="USD", to_currency="EUR"),
        True,
    ),
    ("tool-010", call("book_table", restaurant="Luigi's", party_size=4, time="19:00"), True),
    ("tool-010", call("book_table", restaurant="Luigi's", party_size=4.0, time="19:00"), True),
    ("tool-011", call("set_thermostat", room="bedroom", temperature=21), True),
    ("tool-011", call("set_thermostat", room="bedroom", temperature=21.0), True),
    # "√196 = 14, because ..." opens with its claim; a sentence said three times is a loop
    ("math-015", "**√196 = 14**, because 14 × 14 = 196.", True),
    ("math-015", "√196 = 13, because 13 × 13 = 169.", False),
    ("math-003", "9 × 8 = 72, because nine eights are seventy-two.", True),
    (
        "ml-010",
        "The black cat is sleeping under the table. " * 3,
        False,
    ),
    # The answer restated in another unit by a false conversion ("100 °C (180 °F)"); true
    # conversions, rounded ones and those said to be "about" pass, and two values compared or
    # offered in one unit are not a conversion
    ("factual-006", "100 °C (180 °F).", False),
    ("factual-006", "Water boils at 100 °C, which is 200 °F.", False),
    ("factual-006", "100 °C (212 °F).", True),
    ("factual-006", "100 °C — 212 °F, or 373.15 K.", True),
    ("factual-006", "100 °C (about 210 °F)", True),
    ("factual-012", "32 °F, i.e. 0 °C.", True),
    ("factual-012", "32 °F (−1 °C).", False),
    ("math-021", "72 km/h (about 45 mph).", True),
    ("math-021", "72 km/h, or about 60 mph.", False),
    ("math-021", "72 km/h (20 m/s).", True),
    # A number given a property the arithmetic settles ("2, the only odd prime"); a property
    # denied, true, or words that only look like one ("even though") pass
    ("factual-017", "2, the only odd prime.", False),
    ("factual-017", "2 — the only even prime.", True),
    ("factual-017", "2. (1 is not prime.)", True),
    ("math-015", "14, and 14 is odd.", False),
    ("math-015", "14, even though 196 looks odd at first.", True),
    ("math-015", "14, an even number.", True),
    # The answer, then an equation checking it that ends on a given of the question ("14, and
    # 14 × 14 = 196."): the check is not the answer; a wrong answer with its check still fails
    ("math-015", "14, and 14 × 14 = 196.", True),
    ("math-015", "It's 14: 14 × 14 = 196.", True),
    ("math-002", "It's 12: 12 × 12 = 144.", True),
    ("math-004", "−8, and −8 + 23 = 15.", True),
    ("math-020", "**x = 8**\n\n3 × 8 + 7 = 31.", True),
    ("math-020", "x = 8. That's because 3 × 8 + 7 = 31.", True),
    ("math-015", "13, and 13 × 13 = 196.", False),
    ("math-015", "15, and 14 × 14 = 196.", False),
    ("math-002", "It's 11: 11 × 12 = 144.", False),
    ("math-020", "x = 7. That's because 3 × 7 + 10 = 31.", False),
    # A candidate called wrong, a belief people hold and the reply turns from, an option named
    # only as another person's relative: none is the answer
    ("math-015", "14 is wrong; 13 is right.", False),
    ("math-015", "13 is wrong; 14 is right.", True),
    ("math-015", "A common guess is 13, which is wrong: it's 14.", True),
    ("factual-001", "People say Ottawa, but it's Toronto.", False),
    ("factual-001", "People say Toronto, but it's Ottawa.", True),
    ("factual-001", "Toronto is wrong — the capital is Ottawa.", True),
    ("factual-005", "Jane Austen's sister, Cassandra.", False),
    ("factual-005", "Jane Austen, whose sister Cassandra kept her letters.", True),
    ("factual-005", "Jane Austen (Cassandra Austen's younger sister).", True),
    # "Priya has more than Omar" to "who has the fewest?": a comparison the other way from the
    # question's superlative sets the option aside, whatever its verb
    ("logic-021", "Priya has more than Omar.", False),
    ("logic-021", "Priya has fewer than Omar.", True),
    ("logic-021", "Priya, since Lena has more than Omar and Omar has more than Priya.", True),
    ("logic-021", "Lena has more than Omar, who has more than Priya, so Priya.", True),
    # Working, then the conclusion after a semicolon; label pairs, then their check after a colon
    ("logic-011", "His sister is 7, Tom is 14; in three years Tom will be 17.", True),
    ("logic-011", "Tom is 14; in three years he will be 20.", False),
    ("logic-011", "17; Tom is 14", True),
    ("math-012", "It takes 32 minutes; the tank loses 75 L a minute.", True),
    ("logic-022", "Red = 9, green = 6: 9 + 6 = 15 and 9 − 6 = 3.", True),
    ("logic-022", "Red = 6, green = 9: 6 + 9 = 15.", False),
    # a label ending in a colon, then the block it introduces: no paragraphs joined
    ("code-015", "The output is:\n\n```\n0\n```\n\nThat is what Python shows.", True),
    ("code-015", "The output is:\n\n3", False),
    ("code-009", "It prints `False`:\n\nTrue", False),
    # later: another output offered after a comma; a list of outputs under "Either:" or "Could
    # be:"; the output named at the end of the last sentence (written probes)
    ("code-012", "Probably IndexError, or it prints 3.", False),
    ("code-012", "IndexError, or maybe it prints 3.", False),
    (
        "code-012",
        "IndexError: list index out of range, or in other words the index is too big.",
        True,
    ),
    ("code-005", "Either:\n- abcabcabc\n- abc abc abc", False),
    ("code-009", "Could be:\n1. False True\n2. False False", False),
    (
        "code-006",
        "sorted with reverse=True gives [3, 2, 1]; printing it, the output is `[1, 2, 3]`.",
        False,
    ),
    ("code-006", "sorted with reverse=True gives a new list, so the output is [3, 2, 1].", True),
    ("code-004", "range(5) is 0 to 4, whose sum is 10, so the output is 10.", True),
    (
        "code-004",
        "If range included 5 the output would be 15, but it stops at 4: the output is 10.",
        True,
    ),
]


@pytest.mark.parametrize(("item", "reply", "passed"), CASES)
def test_the_rounds_rules(item: str, reply: str, passed: bool) -> None:
    got = grade_reply(item, reply)
    assert got.passed is passed, got.detail
