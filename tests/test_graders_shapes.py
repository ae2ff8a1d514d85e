"""Answer shapes the core-v5 graders misjudged on hidden sets written by people who never saw
them (each row was judged the other way before the rule it tests)."""

from __future__ import annotations

import pytest

from evalrun.endpoint.response import example_to_response
from evalrun.grading.registry import grade
from evalrun.suite.load import load_suite

ITEMS = {i.id: i for i in load_suite("core").items}

SHAPES = [
    # the asked unit second, in brackets: the bracketed value is the answer
    ("unit-paren", "math-010", "That is 0.0126 m² (126 cm²).", True),
    ("unit-paren", "math-012", "About **0.53 hours** (**32 minutes**).", True),
    ("unit-paren", "math-021", "20 m/s (72 km/h)", True),
    ("unit-paren", "factual-012", "0 °C (32 °F).", True),
    ("unit-paren", "math-022", "180 minutes (10,800 seconds)", True),
    ("unit-paren", "math-010", "**0.126 m²** (**1,260 cm²**).", False),  # wrong in both units
    ("unit-paren", "math-012", "1,920 seconds (30 minutes).", False),
    # the answer, then its check: the check's numbers are not the answer
    ("answer-then-check", "math-020", "x = 8. Check: 3·8 + 7 = 24 + 7 = 31 ✓", True),
    ("answer-then-check", "math-019", "**It is 21.**\n\n*Verification:* 21 × 4 = 84 ✓", True),
    ("answer-then-check", "math-020", "x = 7. Check: 3·7 + 7 = 28", False),
    ("answer-then-check", "math-020", "x = 9. Check: 3·9 + 7 = 34 ✗, so x = 8.", True),
    # a Cyrillic answer quoting one English word
    ("cyrillic-quote", "ml-001", "**Париж** (по-английски *Paris*).", True),
    ("cyrillic-quote", "ml-003", "Понедельник (англ. Monday).", True),
    ("cyrillic-quote", "ml-001", "Это Париж (Paris).", True),
    ("cyrillic-quote", "ml-001", "Paris is the capital (Париж).", False),
    # a year mentioned before the asked one: the clause that answers the question
    ("year-before", "factual-010", "Put up in 1961; it fell in 1989.", True),
    ("year-before", "factual-010", "Built: **1961**\nFell: **1989**", True),
    ("year-before", "factual-010", "Built in 1961, it fell in 1990.", False),
    # a list of the working, then the answer alone on the last line
    ("working-list", "logic-009", "1. Ravi is first\n2. Jo is next\n\nJo", True),
    ("working-list", "math-019", "1. 12 + 18 + 25 + 29 = 84\n2. 84 / 4\n\n21", True),
    ("working-list", "math-019", "1. 12 + 18 + 25 + 29 = 84\n2. 84 / 4 = 21\n\n22", False),
    # a value, then a rounding nobody asked for, which the reply ends on
    ("precise-then-rounded", "math-018", "$34.00 → rounded: **$30**", False),
    ("precise-then-rounded", "math-018", "$34.00 → rounded: **$34**", True),
    # a number read out of a printed list of candidates
    ("list-readout", "code-003", "Possible outputs:\n- 3 1\n- 3.5 1\n- 3 0", False),
    ("list-readout", "code-007", 'Possible results: "undefined", "object", "number"', False),
    # the right key terms in a wrong statement
    (
        "right-terms-wrong-claim",
        "factual-009",
        "The **Pacific** is not the largest; the **Atlantic** is.",
        False,
    ),
    (
        "right-terms-wrong-claim",
        "factual-015",
        "**Diamond** is not the hardest; **quartz** is harder.",
        False,
    ),
    (
        "right-terms-wrong-claim",
        "factual-009",
        "The Atlantic is not the largest; the **Pacific** is.",
        True,
    ),
    (
        "right-terms-wrong-claim",
        "ml-011",
        "« Pomme » ne veut pas dire apple ; c'est « poire ».",
        False,
    ),
    ("right-terms-wrong-claim", "ml-011", "Pomme — ce n'est pas poire.", True),
]


@pytest.mark.parametrize(
    "item_id,answer,ok",
    [row[1:] for row in SHAPES],
    ids=[f"{row[0]}-{n}" for n, row in enumerate(SHAPES)],
)
def test_each_shape_is_judged_as_a_careful_grader_would(item_id, answer, ok):
    assert grade(ITEMS[item_id], example_to_response(answer)).passed is ok
