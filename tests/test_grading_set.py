"""The graders against the labelled grading set: the held-out half holds the error budget.

False rejects (a correct answer failed) and false accepts (a wrong answer passed) on the held-out
half stay at or under 2% overall and 5% per category; degenerate answers (the prompt echoed back,
constant answers, garble) gain nothing. `python -m bench.grading_bench` prints the same figures per
style.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pytest
from support.garble_corpus import load_corpus
from support.grading_set import (
    BLIND,
    BLIND2,
    BLIND4,
    BLIND5,
    BLIND6,
    BLIND7,
    WRITTEN5,
    held_out,
    load_rows,
)

from evalrun.endpoint.response import Response, example_to_response
from evalrun.grading.registry import grade
from evalrun.suite.load import load_suite

SUITE = load_suite("core")
ITEMS = {i.id: i for i in SUITE.items}
ROWS = load_rows()


def judged(rows: list[dict]) -> list[tuple[dict, bool]]:
    return [(r, grade(ITEMS[r["id"]], example_to_response(r["answer"])).passed) for r in rows]


def rates(pairs: list[tuple[dict, bool]]) -> tuple[float, float]:
    good = [p for r, p in pairs if r["passed"]]
    bad = [p for r, p in pairs if not r["passed"]]
    return (
        good.count(False) / len(good) if good else 0.0,
        bad.count(True) / len(bad) if bad else 0.0,
    )


def misjudged(pairs: list[tuple[dict, bool]]) -> tuple[int, int]:
    """(false rejects, false accepts): correct rows that failed, wrong rows that passed."""
    fr = sum(1 for r, p in pairs if r["passed"] and not p)
    return fr, sum(1 for r, p in pairs if not r["passed"] and p)


def by_category(pairs: list[tuple[dict, bool]]) -> dict[str, list[tuple[dict, bool]]]:
    out: dict[str, list[tuple[dict, bool]]] = defaultdict(list)
    for r, p in pairs:
        out[ITEMS[r["id"]].category].append((r, p))
    return out


def test_the_set_covers_every_item_and_category_both_ways():
    assert len(ROWS) >= 1000
    per_item: dict[str, list[bool]] = defaultdict(list)
    for r in ROWS:
        per_item[r["id"]].append(r["passed"])
    assert set(per_item) == set(ITEMS)
    assert min(len(v) for v in per_item.values()) >= 5
    for cat in {i.category for i in SUITE.items}:
        labels = [r["passed"] for r in ROWS if ITEMS[r["id"]].category == cat]
        assert True in labels and False in labels, cat
    held = sum(held_out(r) for r in ROWS)
    assert 0.4 < held / len(ROWS) < 0.6


def test_held_out_half_within_the_error_budget():
    pairs = judged([r for r in ROWS if held_out(r)])
    fr, fa = rates(pairs)
    misses = [(r["id"], r["style"]) for r, p in pairs if p != r["passed"]]
    assert fr <= 0.02 and fa <= 0.02, (fr, fa, misses)
    for cat, part in by_category(pairs).items():
        cfr, cfa = rates(part)
        assert cfr <= 0.05 and cfa <= 0.05, (cat, cfr, cfa)


def user_prompt(item) -> str:
    return next(m["content"] for m in reversed(item.messages) if m["role"] == "user")


def test_echoing_the_prompt_passes_only_copy_canaries():
    echoed = {i.id for i in SUITE.items if grade(i, Response(content=user_prompt(i))).passed}
    copies = {i.id for i in SUITE.items if "copy" in i.tags}
    assert echoed <= copies
    assert all(ITEMS[i].category == "canary" for i in copies)


@pytest.mark.parametrize("constant", ["Yes", "No", "A", "B", "C", "D", "0", "1", "OK", "True"])
def test_a_constant_answer_does_no_better_than_chance(constant):
    reply = Response(content=constant)
    yes_no = [i for i in SUITE.items if "answer yes or no" in user_prompt(i).lower()]
    lettered = [i for i in SUITE.items if "answer with the letter" in user_prompt(i).lower()]
    assert len(yes_no) >= 4 and len(lettered) >= 4
    assert sum(grade(i, reply).passed for i in yes_no) <= len(yes_no) / 2
    chance = sum(1 / len(i.grader.params()["options"]) for i in lettered)
    assert sum(grade(i, reply).passed for i in lettered) <= math.ceil(chance)
    assert sum(grade(i, reply).passed for i in SUITE.items) <= 3


def test_a_garbled_answer_never_passes_and_is_reported_as_garble():
    """Whatever the detector flags fails its item as garble. (Garble it misses, such as the
    fluent nonsense of a partly broken layer, is graded like any other answer.)"""
    garbled = [r for r in load_corpus() if r["label"] == "garbled"][::7]
    assert len(garbled) > 20
    targets = [ITEMS[i] for i in ("math-001", "factual-001", "canary-001", "ml-001", "code-001")]
    reported = 0
    for row in garbled:
        for item in targets:
            g = grade(item, Response(content=row["text"]))
            reported += g.garbled
            if g.garbled:
                assert not g.passed and g.detail.startswith("garbled"), (item.id, row["text"][:80])
    assert reported > len(garbled) * len(targets) / 2
    # a correct answer followed by token soup is garble, not a pass
    g = grade(ITEMS["math-001"], Response(content="8 " + "carecarecare" * 12))
    assert not g.passed and g.garbled


# Answers from defect reports against the graders, on the shipped items: core-v1 misjudged each.
REPORTED_MISJUDGEMENTS = [
    ("math-007", "**Answer:** 6 muffins × $2.50 = $15.00", True),
    ("math-015", "14 (because 14² = 196)", True),
    ("math-006", "160 (that's 640 × 0.25)", True),
    ("factual-006", "At 1 atm, water boils at 100 °C", True),
    ("math-015", "13 or 14", False),
    ("factual-006", "100 °F", False),
    ("math-013", "It was 7 degrees below zero.", True),
    ("math-016", "$\\boxed{\\frac{3}{4}}$", True),
    ("math-011", "$\\boxed{10{,}000}$", True),
    ("factual-019", "$H_2O$", True),
    ("logic-001", "C", False),
    ("logic-016", "North: A is north of B, and B is north of C.", True),
    ("logic-001", "Sam is the shortest, since Mia > Leo > Sam", True),
    ("factual-001", "Although Toronto is the largest city, the capital is Ottawa", True),
    ("factual-001", "Ottawa or Toronto", False),
    ("instr-012", "Sure!\nOK", False),
    ("logic-006", "Yes — that follows.\nNo other conclusion is possible.", False),
    ("logic-005", "Answer: Yes", True),
    ("logic-006", "The answer is no.", True),
    ("ml-002", "Кот не спит на подоконнике.", False),
    ("ml-012", "Der Zug ist heute nicht verspätet.", False),
    ("ml-017", "我每天早上喝咖啡，不喝茶。", False),
    ("code-015", "It prints 3, not 0.", False),
    ("long-001", "AMBER-HERON-42 or COPPER-FINCH-17", False),
    ("canary-005", "A small boat drifted across the quiet lake lake lake lake", False),
    ("canary-003", "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12", False),
    ("canary-009", "After 8 comes 10.", True),
    ("instr-006", "- Carrot\n- Potato\n- Leek\n- Onion\n- Kale", False),
    ("instr-016", "**8**", True),
    (
        "tool-012",
        {
            "tool_calls": [
                {
                    "name": "get_weather",
                    "arguments": {"city": "Chicago, IL, USA", "unit": "fahrenheit"},
                }
            ]
        },
        True,
    ),
    ("tool-015", "Thanks, that's all I needed for now!", False),
    (
        "struct-006",
        '[{"colour": "red", "position": 1}, {"colour": "blue", "position": 2}, {"colour": "green", "position": 3}]',
        False,
    ),
    ("struct-017", '{"sentiment": "positive", "confidence": 95}', False),
    (
        "tool-005",
        {
            "tool_calls": [
                {
                    "name": "search_products",
                    "arguments": {"query": "running shoes", "max_price": 79.99},
                }
            ]
        },
        True,
    ),
]


@pytest.mark.parametrize("item_id,answer,ok", REPORTED_MISJUDGEMENTS)
def test_reported_misjudgements_are_judged_as_a_careful_grader_would(item_id, answer, ok):
    assert grade(ITEMS[item_id], example_to_response(answer)).passed is ok


BLIND_ROWS = load_rows(BLIND)


def test_blind_held_out_half_no_worse_than_measured():
    """The blind set's held-out half (tests/data/grading/README.md) at or under the figures
    measured by `.venv/bin/python -m bench.grading_bench --set blind` on core-v5: false rejects
    7/604 (1.2%), false accepts 8/661 (1.2%), no category above 4%, after the ninth round of
    rules; before it 8/604 and 8/661; before the seventh round 9/604 and 8/661. Earlier
    (suites/core/README.md): core-v4 12/604 and 12/661; before its fifth round of rules 13/604
    and 12/661; before the fourth 15/604 and 13/661; core-v3 14/597 and 25/668; core-v2's items
    with the same graders 18/601 and 25/664; before the retraction and opening-claim reading
    49/601 and 64/664. The target is 2% each, no category above 4%; these are floors to keep."""
    pairs = judged([r for r in BLIND_ROWS if held_out(r)])
    fr, fa = misjudged(pairs)
    assert fr <= 7 and fa <= 8, (fr, fa)
    worst = {cat: max(rates(part)) for cat, part in by_category(pairs).items()}
    assert max(worst.values()) <= 0.04, worst


def test_second_blind_held_out_half_no_worse_than_measured():
    """blind2.jsonl (the canary and instruction items, tests/data/grading/README.md): its
    held-out half at or under the figures after the ninth round of rules, false rejects 5/152
    (3.3%) and false accepts 4/170 (2.4%); after the seventh 5/152 and 7/170; after the loop
    and refusal rules 5/152 and 8/170; core-v5 5/152 and 9/170; core-v4 10/152 and 20/170."""
    fr, fa = misjudged(judged([r for r in load_rows(BLIND2) if held_out(r)]))
    assert fr <= 5 and fa <= 4, (fr, fa)


def test_fourth_blind_held_out_half_no_worse_than_measured():
    """blind4.jsonl (the shapes core-v5 still misjudged, tests/data/grading/README.md): its
    held-out half at or under the figures after the eighth round of rules (the shapes blind5's
    tuning half showed), false rejects 1/132 (0.8%) and false accepts 2/127 (1.6%); after the
    third round for its own shapes 1/132 and 3/127; after the second 3/132 and 4/127; after the
    first 3/132 and 5/127; before them 27/132 (20.5%) and 9/127 (7.1%)."""
    fr, fa = misjudged(judged([r for r in load_rows(BLIND4) if held_out(r)]))
    assert fr <= 1 and fa <= 2, (fr, fa)


def test_fifth_blind_held_out_half_no_worse_than_measured():
    """blind5.jsonl (four personas over every non-tool item, tests/data/grading/README.md): its
    held-out half at or under the figures after the ninth round of rules, false rejects 6/205
    (2.9%) and false accepts 12/250 (4.8%); after the eighth 7/205 and 12/250; before it, when
    the set landed, 8/205 (3.9%) and 14/250 (5.6%). Above the 2% target still: floors to keep,
    not the goal."""
    fr, fa = misjudged(judged([r for r in load_rows(BLIND5) if held_out(r)]))
    assert fr <= 6 and fa <= 12, (fr, fa)


def test_sixth_blind_held_out_half_no_worse_than_measured():
    """blind6.jsonl (two blind writers over every item, tests/data/grading/README.md): its
    held-out half at or under the figures after the rules written from its tuning half, false
    rejects 3/239 (1.3%) and false accepts 13/292 (4.5%); when it landed 5/239 (2.1%) and 15/292
    (5.1%). False accepts above the 2% target: a floor to keep, not the goal."""
    fr, fa = misjudged(judged([r for r in load_rows(BLIND6) if held_out(r)]))
    assert fr <= 3 and fa <= 13, (fr, fa)


def test_seventh_blind_held_out_half_no_worse_than_measured():
    """blind7.jsonl (three blind writers over every item, briefed to write the right value in a
    false statement often, tests/data/grading/README.md): its held-out half at or under the
    figures after the table of settled facts' second batch, false rejects 4/308 (1.3%) and
    false accepts 18/489 (3.7%); after the code catalogue's second batch 4/308 and 21/489;
    after the table of settled facts (grading/world_claims.py) 4/308 and
    24/489; after the tenth round of rules 4/308 and 28/489;
    after its rules from the tuning half 4/308 and 31/489; when it landed 4/308 and 34/489.
    Most of the false accepts left are a right answer beside a false claim about the world or
    the code that neither table holds: a floor to keep, not the goal."""
    fr, fa = misjudged(judged([r for r in load_rows(BLIND7) if held_out(r)]))
    assert fr <= 4 and fa <= 18, (fr, fa)


def test_written_shape_rows_no_worse_than_measured():
    """written5.jsonl (rows written for the shapes the issue names, every one read while tuning,
    tests/data/grading/README.md): a tuning figure, kept from sliding back. Before the seventh
    round of rules 9/166 false rejects and 20/181 false accepts; after it 1/166 and 9/181;
    after the eighth 0/166 and 3/181."""
    fr, fa = misjudged(judged(load_rows(WRITTEN5)))
    assert fr <= 0 and fa <= 3, (fr, fa)
