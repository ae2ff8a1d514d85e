"""A reply naming the right answer fails when it asserts something false about the world beside
it (a settled fact of evalrun/grading/world_claims.py's table); a true claim, a denied or
reported one, or a contrast, does not. The first block are blind writers' answers from the
tuning halves; the rest written for the rule."""

from __future__ import annotations

import pytest
from support.core_replies import grade_reply

from evalrun.grading.world_claims import false_world_claim

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
    # a second batch of written false claims, and true ones beside them
    ("factual-001", "Ottawa, on the shores of Lake Ontario.", False),
    ("factual-001", "Ottawa, Canada's largest city.", False),
    ("factual-001", "Ottawa, which became the capital in 1967.", False),
    ("factual-002", "Au, from the Latin aurum, meaning silver.", False),
    ("factual-002", "Au — atomic number 47.", False),
    ("factual-002", "Au; gold is a noble gas.", False),
    ("factual-003", "Seven, and Antarctica is the largest of them.", False),
    (
        "factual-003",
        "7 — Africa, Antarctica, Asia, Europe, Greenland, North America and South America.",
        False,
    ),
    ("factual-004", "Jupiter, the closest planet to the Sun.", False),
    ("factual-004", "Jupiter, a gas giant with no moons.", False),
    ("factual-005", "Jane Austen, who also wrote Wuthering Heights.", False),
    ("factual-005", "Jane Austen, in the 1900s.", False),
    ("factual-005", "Jane Austen, an American novelist.", False),
    (
        "factual-006",
        "100 °C at sea level; at higher altitudes it boils at a higher temperature.",
        False,
    ),
    ("factual-007", "Carbon dioxide, which plants turn into nitrogen.", False),
    ("factual-007", "Carbon dioxide, and they give off carbon dioxide as a by-product.", False),
    ("factual-008", "The femur, also called the shin bone.", False),
    ("factual-008", "The femur, in the lower leg.", False),
    ("factual-009", "The Pacific, which covers less than a tenth of Earth's surface.", False),
    ("factual-009", "The Pacific Ocean, slightly smaller than the Atlantic.", False),
    ("factual-010", "1989, the year the Soviet Union dissolved.", False),
    ("factual-010", "1989, the same year Germany reunified.", False),
    ("factual-010", "1989, at the end of World War II.", False),
    ("factual-011", "6, the same as a pentagon.", False),
    ("factual-011", "Six — one more than an octagon.", False),
    ("factual-013", "Mars, the largest planet.", False),
    ("factual-013", "Mars, the third planet from the Sun.", False),
    ("factual-013", "Mars, because of its red oceans.", False),
    ("factual-014", "Canberra, which replaced Sydney as the capital in 1990.", False),
    ("factual-014", "Canberra, Australia's largest city.", False),
    ("factual-015", "Diamond, made of pure silicon.", False),
    ("factual-015", "Diamond, which is 7 on the Mohs scale.", False),
    ("factual-016", "Portuguese, a Germanic language.", False),
    ("factual-016", "Portuguese, because Brazil was a Spanish colony.", False),
    ("factual-017", "2, since 1 is also prime.", False),
    ("factual-018", "Albert Einstein, who won the Nobel Prize for relativity.", False),
    ("factual-018", "Isaac Newton's successor Albert Einstein, in 1905.", False),
    ("factual-019", "H2O: two oxygen atoms and one hydrogen atom.", False),
    ("factual-019", "H₂O, also known as hydrogen peroxide.", False),
    ("factual-020", "Egypt, built by the Romans.", False),
    ("factual-020", "Egypt, on the banks of the Tigris.", False),
    ("factual-020", "Egypt, near Alexandria.", False),
    ("factual-021", "B, because dolphins lay eggs.", False),
    ("factual-021", "B — dolphins breathe through gills.", False),
    ("factual-021", "B; the shark is also a mammal.", False),
    ("factual-022", "Mount Everest, in the Alps.", False),
    ("factual-022", "Mount Everest, in India.", False),
    ("factual-001", "Ottawa, on the Ottawa River in Ontario.", True),
    ("factual-001", "Ottawa, chosen as the capital by Queen Victoria in 1857.", True),
    ("factual-002", "Au, from the Latin aurum, meaning shining dawn.", True),
    ("factual-002", "Au (atomic number 79).", True),
    ("factual-003", "Seven; Asia is the largest and Australia the smallest.", True),
    ("factual-004", "Jupiter, more than twice as massive as all the other planets combined.", True),
    ("factual-004", "Jupiter, a gas giant with at least 95 moons.", True),
    ("factual-005", "Jane Austen, an English novelist, in 1813.", True),
    ("factual-005", "Jane Austen (not Charlotte Brontë, who wrote Jane Eyre).", True),
    ("factual-006", "100 °C; at higher altitudes it boils at a lower temperature.", True),
    ("factual-007", "Carbon dioxide; they release oxygen.", True),
    ("factual-007", "Carbon dioxide, which they turn into glucose, giving off oxygen.", True),
    ("factual-008", "The femur (thigh bone); the shin bone is the tibia.", True),
    ("factual-009", "The Pacific, covering about a third of Earth's surface.", True),
    (
        "factual-010",
        "1989; the Soviet Union dissolved two years later, in 1991, and Germany reunified in 1990.",
        True,
    ),
    ("factual-011", "6 (a pentagon has 5, an octagon 8).", True),
    ("factual-013", "Mars, the fourth planet, red from iron oxide.", True),
    (
        "factual-014",
        "Canberra, the capital since 1913, chosen as a compromise between Sydney and Melbourne.",
        True,
    ),
    ("factual-015", "Diamond, a form of carbon, 10 on the Mohs scale.", True),
    (
        "factual-016",
        "Portuguese, a Romance language, because Brazil was a Portuguese colony.",
        True,
    ),
    ("factual-017", "2 — 1 is not prime.", True),
    (
        "factual-018",
        "Albert Einstein; his Nobel Prize was for the photoelectric effect, not relativity.",
        True,
    ),
    (
        "factual-019",
        "H2O: two hydrogen atoms and one oxygen atom (hydrogen peroxide is H2O2).",
        True,
    ),
    ("factual-020", "Egypt, built for the pharaohs near Cairo on the west bank of the Nile.", True),
    ("factual-021", "B — dolphins breathe air with lungs and nurse their young.", True),
    ("factual-022", "Mount Everest, about 8,849 m, in the Himalayas.", True),
]


@pytest.mark.parametrize(("item", "reply", "passes"), CASES)
def test_a_false_claim_about_the_world_fails_the_reply(item, reply, passes):
    g = grade_reply(item, reply)
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
