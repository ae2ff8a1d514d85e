"""A reply naming the right answer fails when it asserts something false about the world beside
it (a settled fact of evalrun/grading/world_claims.py's table); a true claim, a denied or
reported one, or a contrast, does not. The first block are blind writers' answers from the
tuning halves; the rest written for the rule."""

from __future__ import annotations

import pytest

from evalrun.endpoint.response import example_to_response
from evalrun.grading.registry import grade
from evalrun.grading.world_claims import false_world_claim
from evalrun.suite.load import load_suite

ITEMS = {i.id: i for i in load_suite("core").items}

CASES = [
    # blind writers' answers (tuning halves)
    ("factual-001", "Ottawa, in the province of Quebec.", False),
    ("factual-002", "Au, from the Latin word *argentum*.", False),
    (
        "factual-003",
        "Seven: Africa, Asia, Europe, North America, South America, Australia and the Arctic.",
        False,
    ),
    ("factual-004", "Jupiter, the sixth planet from the Sun.", False),
    ("factual-005", "Jane Austen, published in 1847.", False),
    ("factual-007", "Carbon dioxide (O₂)", False),
    ("factual-008", "The femur, in the upper arm.", False),
    ("factual-011", "6, like a stop sign.", False),
    ("factual-016", "Portuguese, brought by Spanish colonists.", False),
    ("factual-018", "Albert Einstein, in 1905.", False),
    ("factual-021", "B, because dolphins are fish.", False),
    # false claims written for the rule
    ("factual-001", "Ottawa, Quebec.", False),
    ("factual-014", "Canberra, in New South Wales.", False),
    ("factual-014", "Canberra, the largest city in Australia.", False),
    ("factual-004", "Jupiter is the third planet from the Sun.", False),
    ("factual-004", "Jupiter, a rocky planet.", False),
    ("factual-005", "Pride and Prejudice by Jane Austen was published in 1847.", False),
    ("factual-007", "Carbon dioxide (CO).", False),
    ("factual-008", "The femur, located in the forearm.", False),
    ("factual-011", "A hexagon has 6 sides, like a stop sign.", False),
    ("factual-016", "Portuguese, since Brazil was colonized by Spain.", False),
    ("factual-018", "Einstein, in 1921.", False),
    ("factual-021", "B. Dolphins are a type of fish.", False),
    ("factual-022", "Mount Everest, in the Andes.", False),
    ("factual-010", "1989. The Berlin Wall was built in 1949.", False),
    ("factual-010", "1989; the Berlin Wall fell in December 1989.", False),
    ("factual-015", "Diamond, 9 on the Mohs scale.", False),
    ("factual-020", "Egypt, near Luxor.", False),
    ("factual-009", "The Pacific, between Europe and the Americas.", False),
    # true claims, denied or reported ones, contrasts
    ("factual-001", "Ottawa, in the province of Ontario.", True),
    ("factual-001", "Ottawa is the capital; it sits in Ontario, on the border with Quebec.", True),
    (
        "factual-001",
        "Ottawa. Many people guess Toronto, the largest city, but Ottawa is the capital.",
        True,
    ),
    ("factual-014", "Canberra, in the Australian Capital Territory.", True),
    ("factual-014", "Canberra — not Sydney, which is the largest city.", True),
    ("factual-014", "Canberra, which lies within the ACT, surrounded by New South Wales.", True),
    ("factual-002", "Au, from the Latin aurum.", True),
    ("factual-002", "Au (silver is Ag, from argentum).", True),
    (
        "factual-003",
        "Seven: Africa, Antarctica, Asia, Australia, Europe, North America and South America.",
        True,
    ),
    ("factual-004", "Jupiter, the fifth planet from the Sun and a gas giant.", True),
    ("factual-004", "Jupiter. Saturn, the sixth planet from the Sun, is second.", True),
    ("factual-005", "Jane Austen; it was published in 1813.", True),
    ("factual-005", "Jane Austen. Pride and Prejudice was first published in 1813.", True),
    ("factual-005", "Jane Austen, whose Emma was published in 1815.", True),
    ("factual-007", "Carbon dioxide (CO₂).", True),
    ("factual-007", "Carbon dioxide (CO2); they release oxygen (O2).", True),
    ("factual-008", "The femur (thigh bone).", True),
    ("factual-008", "The femur, in the thigh.", True),
    ("factual-011", "6 — a honeycomb cell is a hexagon; a stop sign is an octagon with 8.", True),
    ("factual-011", "Six. A pentagon has five sides and an octagon has eight.", True),
    ("factual-016", "Portuguese, because Brazil was a Portuguese colony.", True),
    (
        "factual-016",
        "Portuguese. Most of South America was colonized by Spain, but Brazil was colonized by Portugal.",
        True,
    ),
    ("factual-018", "Albert Einstein, in 1915.", True),
    (
        "factual-018",
        "Albert Einstein (special relativity in 1905, general relativity in 1915).",
        True,
    ),
    (
        "factual-018",
        "Albert Einstein published special relativity in 1905 and general relativity in 1915.",
        True,
    ),
    ("factual-021", "B — dolphins are mammals, not fish.", True),
    ("factual-021", "B. Though dolphins look like fish, they are mammals.", True),
    ("factual-022", "Mount Everest, in the Himalayas on the Nepal–China border.", True),
    (
        "factual-010",
        "1989 — the Berlin Wall fell on 9 November 1989, after being built in 1961.",
        True,
    ),
    ("factual-010", "1989 (Germany reunified in 1990).", True),
    ("factual-015", "Diamond, 10 on the Mohs scale.", True),
    ("factual-020", "Egypt, near Cairo.", True),
    ("factual-009", "The Pacific Ocean, between Asia and the Americas.", True),
    ("factual-019", "H2O: two hydrogen atoms and one oxygen atom.", True),
    ("factual-013", "Mars, the fourth planet from the Sun.", True),
]


@pytest.mark.parametrize(("item", "reply", "passes"), CASES)
def test_a_false_claim_about_the_world_fails_the_reply(item, reply, passes):
    g = grade(ITEMS[item], example_to_response(reply))
    assert g.passed is passes, g.detail


def test_a_fact_is_checked_only_where_its_subject_is_named():
    # Spanish colonists brought Spanish to Mexico; the rule is about Brazil
    assert (
        false_world_claim("Spanish, brought by Spanish colonists.", "Language of Mexico?") is None
    )
    assert false_world_claim("Portuguese, brought by Spanish colonists.", "Brazil?") is not None
    # 1905 is right for special relativity
    assert (
        false_world_claim("Einstein, in 1905.", "Who explained the photoelectric effect?") is None
    )
    assert false_world_claim("Temperatures fell in March.", "") is None
    assert false_world_claim("The element oxygen (O) and hydrogen (H).", "") is None
