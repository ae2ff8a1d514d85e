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
    # the asked unit first, then the same value restated in another unit
    ("unit-restated", "math-009", "155 minutes, or about 2.6 hours.", True),
    ("unit-restated", "math-012", "32 minutes, i.e. roughly 0.53 hours", True),
    ("unit-restated", "math-009", "145 minutes, or about 2.4 hours.", False),
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
    ("cyrillic-quote", "ml-005", "В году 12 месяцев (twelve months).", True),
    (
        "cyrillic-quote",
        "ml-006",
        "winter — зима, snow — снег, cold — холод",
        True,
    ),  # the prompt's words
    ("cyrillic-quote", "ml-005", "A year has 12 months (в году).", False),
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
    ("right-terms-wrong-claim", "factual-005", "Austen didn't write it — Dickens did.", False),
    ("right-terms-wrong-claim", "factual-018", "Einstein didn't develop it — Newton did.", False),
    ("right-terms-wrong-claim", "factual-005", "Dickens didn't write it — Austen did.", True),
    (
        "right-terms-wrong-claim",
        "factual-018",
        "Einstein didn't just develop special relativity; he developed general relativity too.",
        True,
    ),
    # the clause that answers the question, after ", while" or ", whereas"
    (
        "right-terms-wrong-claim",
        "factual-018",
        "Einstein developed special relativity, while Bohr developed general relativity.",
        False,
    ),
    (
        "right-terms-wrong-claim",
        "factual-018",
        "Bohr modelled the atom, whereas Einstein developed general relativity.",
        True,
    ),
    # an answer, then an aside or a check naming other options: the aside is not the answer
    ("answer-then-check", "logic-009", "Jo. (Ravi came first, Kim third.)", True),
    ("answer-then-check", "logic-016", "North. (C is south of B, which is south of A.)", True),
    ("answer-then-check", "factual-001", "Ottawa. (Toronto is the largest city.)", True),
    (
        "answer-then-check",
        "logic-002",
        "Saturday. Check: 7 days later is Wednesday again, plus 3 is Saturday ✓",
        True,
    ),
    ("answer-then-check", "logic-009", "Kim. (Ravi came first, Jo second.)", False),
    ("answer-then-check", "logic-016", "North — A is north of B, and C is south of B.", True),
    ("answer-then-check", "logic-016", "**South** — C is south of B, and A is north of B.", False),
    # labelled values: the one whose label the question asks for
    ("labelled", "logic-022", "Red: 9, green: 6.", True),
    ("labelled", "logic-022", "- Green: 6\n- Red: 9", True),
    ("labelled", "logic-022", "Red: 6, green: 9.", False),
    # the clause naming the asked place, with the question's verb in another form
    (
        "right-terms-wrong-claim",
        "factual-016",
        "Portuguese is spoken in Portugal; Brazil speaks Spanish.",
        False,
    ),
    (
        "right-terms-wrong-claim",
        "factual-016",
        "Spain speaks Spanish; Brazil speaks Portuguese.",
        True,
    ),
    # a wrong printed output ahead of a blank line is not joined to the right one after it
    (
        "right-terms-wrong-claim",
        "code-009",
        '`bool("")` is `True` and `bool("0")` is `False`:\n\n```\nTrue False\n```',
        False,
    ),
    ("right-terms-wrong-claim", "code-009", "It prints:\n\n```\nFalse True\n```", True),
    # a printed list of the options, none of them chosen
    ("list-readout", "factual-001", "Canadian cities: Ottawa, Toronto, Montreal, Vancouver", False),
    ("list-readout", "logic-003", "A) 36\nB) 30\nC) 42\nD) 48", False),
    (
        "list-readout",
        "logic-002",
        "Thursday, Friday, Saturday, Sunday, Monday, Tuesday, Wednesday, Thursday, Friday, "
        "Saturday",
        False,
    ),
    ("list-readout", "factual-001", "Ottawa (not Toronto, Montreal or Vancouver).", True),
    (
        "list-readout",
        "factual-004",
        "Planets by size: Jupiter, Saturn, Uranus, Neptune, Earth",
        False,
    ),
    ("list-readout", "factual-022", "Highest peaks: Everest, K2, Kangchenjunga", False),
    (
        "list-readout",
        "factual-009",
        "Oceans by area:\n- Pacific\n- Atlantic\n- Indian\n- Arctic",
        False,
    ),
    ("list-readout", "factual-017", "Primes: 2, 3, 5, 7, 11, 13", False),
    ("list-readout", "factual-011", "Sides: 3, 4, 5, 6, 8", False),
    ("list-readout", "factual-004", "Jupiter.\n\nBy size: Jupiter, Saturn, Uranus, Neptune", True),
    ("list-readout", "factual-009", "The Pacific, ahead of the Atlantic, Indian and Arctic.", True),
    ("list-readout", "math-019", "12, 18, 25, 29 → 84 / 4 = 21", True),
    ("list-readout", "logic-009", "Order: Ravi, Jo, Kim, Lu, Pat.\n\nSecond: **Jo**", True),
    ("working-list", "logic-009", "Order:\n1. Ravi\n2. Jo\n3. Kim\n4. Lu\n5. Pat\n\nJo", True),
    # a Russian answer glossed in English after "то есть" ("that is"): a gloss, not a retraction
    ("cyrillic-quote", "ml-001", "Париж, то есть Paris.", True),
    ("cyrillic-quote", "ml-001", "Лион, то есть Париж.", True),
    ("cyrillic-quote", "ml-001", "Париж, то есть Лион.", False),
    # a negative value containing the asked digits
    ("negative-digit", "math-003", "9 × 8 = **−72**", False),
    ("negative-digit", "math-023", "He keeps -83 pencils.", False),
    ("negative-digit", "code-004", "-10", False),
    ("negative-digit", "math-004", "15 − 23 = **8**", False),
    ("negative-digit", "math-004", "15 − 23 = **−8**", True),
    ("negative-digit", "canary-009", "-10", False),
    ("negative-digit", "canary-007", "−7 3 9 1 5", False),
    ("negative-digit", "canary-003", "1, 2, 3, 4, 5, 6, 7, 8, 9, -10", False),
    ("negative-digit", "canary-003", "1-2-3-4-5-6-7-8-9-10", False),  # hyphens, no commas
    ("negative-digit", "long-004", "-4471", False),
    ("negative-digit", "canary-009", "After 8 comes 10.", True),
    # the asked code or number inside a longer one
    ("longer-number", "long-001", "AMBER-HERON-420", False),
    ("longer-number", "long-007", "TANGERINE-8800", False),
    ("longer-number", "long-003", "5-8-1-9-3-7", False),
    ("longer-number", "long-002", "PLUM 3180", False),
    ("longer-number", "long-003", "The combination is 5-8-1-9-3.", True),
    ("longer-number", "long-001", "AMBER-HERON-42 (north gate)", True),
    ("longer-number", "long-005", "ultraviolet", False),
    ("longer-number", "long-005", "**Violet**", True),
    # a working cut off before it concludes
    ("truncated", "math-024", "7 × 13 = 91, and 91 − 20 =", False),
    ("truncated", "math-022", "3 hours × 60 minutes = 180 minutes, and 180 × 60 =", False),
    ("truncated", "logic-009", "Order: Ravi, Jo, Kim, Lu, Pat. So second place goes to", False),
    ("truncated", "math-019", "**Step 1:** 12 + 18 + 25 + 29 = 84\n\n**Step 2:** 84 ÷ 4 =", False),
    # an answer in English where the prompt asks for German (or another language)
    ("wrong-language", "ml-012", "**Translation:** The train is delayed today.", False),
    ("wrong-language", "ml-013", "A week has seven days.", False),
    ("wrong-language", "ml-014", "house, garden", False),
    ("wrong-language", "ml-016", "The capital of Austria is Vienna.", False),
    ("wrong-language", "ml-015", "Der Hund spielt im Park mit einem roten Ball.", False),
    ("wrong-language", "ml-012", "Der Zug ist heute verspätet.", True),
    # a separated list of words longer than the words asked for
    ("extra-word", "ml-014", "Haus, Garten, Hof", False),
    ("extra-word", "ml-006", "зима, снег, холод, мороз", False),
    ("extra-word", "ml-014", "**Haus**, **Garten** (house, garden)", True),
    ("extra-word", "ml-006", "Зима, снег, холод", True),
    # the asked value on the other temperature scale
    ("wrong-unit", "instr-019", "Water freezes at 0 °F.\nHave a nice day!", False),
    ("wrong-unit", "instr-019", "Zero degrees Fahrenheit.\nHave a nice day!", False),
    ("wrong-unit", "instr-019", "0 °C (32 °F).\nHave a nice day!", True),
    ("wrong-unit", "instr-019", "It freezes at 0 degrees Celsius.\n\nHave a nice day!", True),
    # a phrase looped three times or more in a row
    ("loop", "instr-019", "0 °C.\nHave a nice day! Have a nice day! Have a nice day!", False),
    ("loop", "instr-017", "Leaves fall leaves fall leaves fall leaves fall in autumn.", False),
    ("loop", "instr-015", "The lantern lantern lantern lantern glowed. The lantern glowed.", False),
    ("loop", "canary-003", "1, 2, 3, 4, 5, 6, 7, 8, 9, 10", True),
    ("loop", "instr-015", "Lantern light. Lantern smoke. Lantern gone.", True),
    ("loop", "logic-006", "No, no, no. Tom is a cat.", True),  # emphasis, not a loop
    ("loop", "math-007", "(2.50 * muffins) / (muffins * muffins * muffins) aside, $15.", True),
    # a second candidate offered after a dash or a trailing-off ("21 — or 21.5")
    ("hedge", "math-019", "21 — or 21.5 if the 25 is 27.", False),
    ("hedge", "math-023", "83... or 73.", False),
    ("hedge", "code-014", "7 — or 8?", False),
    ("hedge", "math-022", "10,800 — or 3 × 3,600, the same thing.", True),
    # a reply that declines the task
    ("refusal", "instr-003", "I'd rather not write about the sea.", False),
    ("refusal", "instr-008", "Sorry, I can't help with that.", False),
    # the clause answering the question is weighed by the question's words it repeats, not by
    # a pair of function words ("is the") every clause may share
    (
        "focus",
        "factual-014",
        "Canberra is the largest city, but Sydney is Australia's capital.",
        False,
    ),
    (
        "focus",
        "factual-014",
        "Sydney is the largest city, but Canberra is Australia's capital.",
        True,
    ),
    ("focus", "factual-001", "Toronto is the biggest city; Ottawa is Canada's capital.", True),
    # an option named as what people believe, then a "but" naming something else: set aside
    ("belief", "factual-001", "Many assume Ottawa, but the capital of Canada is Montreal.", False),
    ("belief", "factual-018", "Einstein is often credited, but Max Planck developed it.", False),
    ("belief", "factual-015", "Diamond was long thought hardest, but corundum is harder.", False),
    ("belief", "factual-005", "Many assume Brontë, but Jane Austen wrote it.", True),
    ("belief", "factual-001", "Ottawa, although many assume Toronto.", True),
    # a value on the other scale, then the asked one after "which is"
    ("unit-restated", "factual-012", "0 °C, which is 32 °F.", True),
    ("unit-restated", "factual-012", "0 °C, which is 0 °F.", False),
    ("unit-restated", "factual-006", "212 °F, or 100 °C.", True),
    # values named after the number ("9 red, 6 green"), read under the asked label
    ("labelled", "logic-022", "9 red, 6 green (9 + 6 = 15, 9 − 6 = 3).", True),
    ("labelled", "logic-022", "6 red, 9 green.", False),
    # an exact copy, then a note about it in brackets on a line of its own
    (
        "closing-note",
        "canary-005",
        "A small boat drifted across the quiet lake.\n\n(Repeated exactly.)",
        True,
    ),
    ("closing-note", "canary-010", "Hello, world!\n(copied as written)", True),
    (
        "closing-note",
        "canary-005",
        "A small boat drifted across the quiet pond.\n\n(Repeated exactly.)",
        False,
    ),
    # words chained by hyphens to slip under a word limit count as the words they are
    (
        "hyphen-chain",
        "instr-003",
        "A vast-salty-restless-blue-wave-tossed expanse of endless sea.",
        False,
    ),
    ("hyphen-chain", "instr-003", "A state-of-the-art sea of deep blue waves.", True),
    ("hyphen-chain", "instr-003", "Endless blue water, wind-whipped and sun-warmed.", True),
    # two events joined by "and", each with its own option: the one whose verb is asked
    ("two-events", "factual-010", "The Wall went up in 1961 and came down in 1989.", True),
    ("two-events", "factual-010", "The Wall came down in 1990 and was built in 1961.", False),
    ("two-events", "factual-010", "It was built in 1961 and fell in 1989.", True),
    # a deed denied with its preposition ("didn't fall in 1989") sets its option aside
    ("negated-deed", "factual-010", "The Berlin Wall didn't fall in 1989; it fell in 1991.", False),
    ("negated-deed", "factual-010", "It didn't fall in 1991; it fell in 1989.", True),
    ("negated-deed", "factual-010", "The Wall did not fall until 1989.", True),
    # an option called the second of the asked superlative, or compared the other way, is not
    # the superlative: "Jupiter is smaller than Saturn" answers "the largest" with Saturn
    (
        "demoted",
        "factual-009",
        "The Pacific is only the second-largest ocean; the Atlantic is bigger.",
        False,
    ),
    (
        "demoted",
        "factual-009",
        "The Atlantic is only the second-largest ocean; the Pacific is bigger.",
        True,
    ),
    ("demoted", "factual-022", "K2 is just the second-highest peak; Everest tops it.", True),
    (
        "demoted",
        "factual-004",
        "Jupiter is smaller than Saturn, which is the largest planet.",
        False,
    ),
    (
        "demoted",
        "factual-004",
        "Saturn is smaller than Jupiter, which is the largest planet.",
        True,
    ),
    ("demoted", "factual-008", "The tibia is shorter than the femur.", True),
    ("demoted", "factual-004", "Jupiter is larger than Saturn.", True),
    ("demoted", "logic-001", "Sam, who is shorter than Leo.", True),
    ("demoted", "logic-009", "Jo came second; Ravi won.", True),
    # a belief turned from after a semicolon as after a "but"
    (
        "belief",
        "factual-013",
        "Mars is often mistaken for the Red Planet; that title belongs to Jupiter.",
        False,
    ),
    (
        "belief",
        "factual-013",
        "Jupiter is often mistaken for the Red Planet; that title belongs to Mars.",
        True,
    ),
    ("belief", "factual-013", "Mars is often called the Red Planet; it looks rusty red.", True),
    # a format the whole reply must have ("Start your reply with Yes, or No,", "Write only the
    # title") is not met by a reply that takes its opening back
    (
        "taken-back",
        "instr-009",
        "Yes, it's a liquid — actually no, wetness is what it does.",
        False,
    ),
    (
        "taken-back",
        "instr-009",
        "No, it only makes things wet. Hmm, actually yes, it is wet.",
        False,
    ),
    (
        "taken-back",
        "instr-009",
        "Yes, it's a liquid. Actually, it also makes other things wet.",
        True,
    ),
    ("taken-back", "instr-020", '"Lost Dog" — wait, "Finding Max"', False),
    ("taken-back", "instr-020", '"Finding Max"', True),
    ("taken-back", "instr-002", "WARM... NO, THE DIRECT OPPOSITE OF COLD IS HOT.", True),
    # a short piece of writing that only says the prompt's one subject back describes nothing
    ("says-nothing", "instr-003", "Sea.", False),
    ("says-nothing", "instr-003", "The sea is the sea.", False),
    ("says-nothing", "instr-003", "Endless blue waves.", True),
    ("says-nothing", "instr-020", '"The Lost Dog"', True),
    # more ways to take an answer back: the answer is what follows
    ("self-correct", "logic-002", "Friday. Hold on — 10 days after Wednesday is Saturday.", True),
    ("self-correct", "logic-002", "Friday. Oh wait, it's Saturday.", True),
    ("self-correct", "logic-015", "4. I miscounted: 3 chairs are to her left.", True),
    ("self-correct", "logic-022", "6 — no no, 9.", True),
    ("self-correct", "logic-022", "6. I stand corrected: 9 red balls.", True),
    ("self-correct", "logic-006", "Yes. Eh, no — not all cats are grey.", True),
    ("self-correct", "logic-019", "B. Rethinking: A.", True),
    ("self-correct", "logic-010", "B. Upon reflection, C — they weigh the same.", True),
    ("self-correct", "logic-017", "No — I take that back: yes.", True),
    ("self-correct", "logic-002", "Saturday. Hold on — no, Friday.", False),
    ("self-correct", "logic-015", "3. I miscounted: 4.", False),
    ("self-correct", "canary-004", "A B C D E F G — that's seven. Fixed: A B C D E F G H", True),
    (
        "self-correct",
        "canary-006",
        "Jan, Feb, Mar... let me write them out in full: January, February, "
        "March, April, May, June, July, August, September, October, November, December.",
        True,
    ),
    ("self-correct", "canary-004", "A B C D E F G H. Fixed: A B C D E F G", False),
    # a day or a compass point named in another of the suite's languages names the option
    ("multilingual", "logic-002", "Samedi.", True),
    ("multilingual", "logic-002", "Es ist Samstag.", True),
    ("multilingual", "logic-002", "Vendredi.", False),
    ("multilingual", "logic-002", "В субботу.", True),
    ("multilingual", "logic-016", "Nord.", True),
    ("multilingual", "logic-016", "Au sud.", False),
    ("multilingual", "logic-016", "Город A находится к северу от C.", True),
    # the answer first, then after a semicolon or in an appositive the givens it comes from
    (
        "answer-first",
        "math-012",
        "It takes 32 minutes; the tank loses 75 L a minute out of 2,400 L.",
        True,
    ),
    ("answer-first", "math-010", "126 cm², the product of 14 and 9.", True),
    ("answer-first", "math-010", "46 cm², the sum of the four sides.", False),
    (
        "answer-first",
        "math-012",
        "It takes 30 minutes; the tank loses 75 L a minute out of 2,400 L.",
        False,
    ),
    # the asked unit second, in brackets, after a value the first unit cannot state as a number
    ("unit-paren", "logic-012", "π/2 rad (90°)", True),
    ("unit-paren", "logic-012", "π/4 rad (45°).", False),
    ("unit-paren", "math-009", "2 hours 35 minutes (155 min)", True),
    ("unit-paren", "math-009", "2 hours 25 minutes (145 min)", False),
    ("unit-paren", "math-007", "1,500 cents ($15)", True),
    ("unit-paren", "math-007", "1,500 cents ($1.50)", False),
    ("labelled", "logic-022", "9 (red), 6 (green)", True),
    ("labelled", "logic-022", "6 (red), 9 (green)", False),
    # a sequence's next item named only to be denied is not given
    ("denied-item", "canary-009", "10 is wrong; the next number is 12.", False),
    ("denied-item", "canary-002", "Thursday is not next; Friday is.", False),
    (
        "denied-item",
        "canary-002",
        "Thursday would be next, but the sequence skips to Friday.",
        False,
    ),
    ("denied-item", "canary-009", "12 is wrong; the next number is 10.", True),
    ("denied-item", "canary-002", "Friday is not next; Thursday is.", True),
    # years of other events around the asked one: the clause that repeats the asked deed
    ("year-before", "factual-010", "1961–1989: the Wall stood 28 years and fell in 1989.", True),
    (
        "year-before",
        "factual-010",
        "Germany reunified in 1990 — a year after the Wall fell (1989).",
        True,
    ),
    (
        "year-before",
        "factual-010",
        "Reagan's 1987 speech came two years before the fall in 1989.",
        True,
    ),
    (
        "year-before",
        "factual-010",
        "Reagan's 1989 speech came two years before the fall in 1991.",
        False,
    ),
    (
        "year-before",
        "factual-010",
        "Germany reunified in 1989 — two years after the Wall fell (1987).",
        False,
    ),
    # numbered steps that finish (drink, remove, serve) before a later step starts (boil, put)
    (
        "step-order",
        "instr-010",
        "1. Drink the tea.\n2. Boil the water.\n3. Steep the tea bag.",
        False,
    ),
    (
        "step-order",
        "instr-010",
        "1. Remove the tea bag.\n2. Boil the water.\n3. Put the tea bag in the cup.",
        False,
    ),
    (
        "step-order",
        "instr-010",
        "1. Boil water.\n2. Steep a tea bag.\n3. Remove the bag and serve.",
        True,
    ),
    (
        "step-order",
        "instr-010",
        "1. Heat water until it boils.\n2. Place a tea bag in a mug and pour the water over it.\n"
        "3. Let it steep, then remove the bag and enjoy.",
        True,
    ),
    # numbers listed under a heading that holds a number itself conclude none
    ("list-readout", "math-002", "Multiples of 12 up to 60: 12, 24, 36, 48, 60", False),
    ("list-readout", "math-011", "Multiples of 2500: 10000, 12500, 15000", False),
    ("list-readout", "math-002", "Step 1: 144 / 12 = 12", True),
    # an option after a comma is the value of the clause before it (an appositive)
    (
        "year-before",
        "factual-010",
        "In 1989 Hungary opened its border; the Wall came down a year later, 1990.",
        False,
    ),
    (
        "year-before",
        "factual-010",
        "In 1987 Reagan gave his speech; the Wall itself fell two years later, 1989.",
        True,
    ),
    # what some countries or textbooks teach, turned from by a "but"
    (
        "distractor-first",
        "factual-003",
        "Some textbooks count six continents, but English-speaking schools teach seven.",
        True,
    ),
    (
        "distractor-first",
        "factual-003",
        "Some countries use seven continents, but the English-speaking model has six.",
        False,
    ),
    # the asked term with another qualifier ("special relativity" for "the general theory")
    (
        "right-terms-wrong-claim",
        "factual-018",
        "Einstein developed special relativity, but general relativity is Bohr's work.",
        False,
    ),
    (
        "right-terms-wrong-claim",
        "factual-018",
        "Einstein worked out special relativity.\nGeneral relativity came from Planck.",
        False,
    ),
    (
        "right-terms-wrong-claim",
        "factual-018",
        "Newton developed classical mechanics, while general relativity is Einstein's.",
        True,
    ),
    ("right-terms-wrong-claim", "factual-018", "Einstein developed general relativity.", True),
    (
        "right-terms-wrong-claim",
        "factual-018",
        "Einstein gave us special relativity in 1905; general relativity, in 1915, was his too.",
        True,
    ),
    (
        "right-terms-wrong-claim",
        "factual-018",
        "The general theory explains gravity. Einstein built it on his special relativity.",
        True,
    ),
    # the prompt echoed back without its bracketed aside
    (
        "echo",
        "instr-008",
        "write one sentence about cats using only lowercase letters",
        False,
    ),
    # "— oh, eight:": a restart after a pause takes back what came before it
    ("self-correct", "canary-004", "A B C D E F — oh, all eight: A B C D E F G H", True),
    ("self-correct", "canary-004", "A B C D E F G H — oh, nine: A B C D E F G H I", False),
    # a bracketed gloss or alternative after the answer when the prompt asks for it only
    (
        "only-asked",
        "ml-007",
        "La bibliothèque ouvre à neuf heures du matin. (« library » = bibliothèque)",
        False,
    ),
    (
        "only-asked",
        "ml-012",
        "Der Zug ist heute verspätet. (Oder auch: Der Zug hat heute Verspätung.)",
        False,
    ),
    ("only-asked", "ml-007", "La bibliothèque ouvre à neuf heures du matin.", True),
    # the text to translate given back beside its translation
    (
        "only-asked",
        "ml-002",
        "Кот спит на подоконнике — The cat is sleeping on the windowsill.",
        False,
    ),
    ("only-asked", "ml-012", "Der Zug ist heute verspätet / The train is late today", False),
    ("only-asked", "ml-013", "Eine Woche hat sieben Tage.", True),
    ("only-asked", "ml-007", "Traduction : La bibliothèque ouvre à neuf heures du matin.", False),
    ("only-asked", "ml-017", "Translation: 我每天早上喝茶。", False),
    ("only-asked", "factual-001", "Ottawa. (It is in Ontario.)", True),
    # a check with an adjective before it ("Quick check:") is still the answer's check
    ("answer-then-check", "math-020", "x = 8\n\nA quick check: 3·8 + 7 = 31 ✓", True),
    ("answer-then-check", "math-019", "21. Final check: 21 × 4 = 84 ✓", True),
    # the answer first, then an appositive relating it to a given
    ("answer-first", "math-013", "−7 °C, 11 degrees lower than the 4 °C at dawn.", True),
    ("answer-first", "math-023", "83 pencils, 37 fewer than the 120 he started with.", True),
    ("answer-first", "math-013", "−15 °C, 11 degrees lower than the 4 °C at dawn.", False),
    # a program's output is what it prints: digits, not number words
    ("code-output", "code-010", "one hundred twenty", False),
    ("code-output", "code-014", "seven", False),
    ("code-output", "code-013", "2.5", True),
    ("code-output", "code-013", "10 / 4 is 2.500 exactly; Python prints `2.5`.", True),
    ("code-output", "code-001", "It prints 11.", True),
    ("code-output", "math-002", "twelve", True),
    # a list of words where prose is asked for
    (
        "word-list",
        "instr-014",
        "River words: water, stream, bank, current, delta, valley, estuary, meander, "
        "floodplain, rapids, waterfall, source, mouth, silt, trout, bridge, ferry, "
        "barge, weir, lock, mill",
        False,
    ),
    (
        "word-list",
        "instr-014",
        "Rivers carve valleys, carry silt to the sea, feed farms and cities, shelter fish and "
        "birds, and for thousands of years have carried boats, trade, stories and people "
        "downstream.",
        True,
    ),
    # more than the one reason asked for
    (
        "one-asked",
        "instr-009",
        "Yes, for two good reasons: it is a liquid and it soaks cloth.",
        False,
    ),
    ("one-asked", "instr-009", "No, and here are several reasons: it flows, it dries.", False),
    ("one-asked", "instr-009", "Yes, for one simple reason: it makes things wet.", True),
    # the task declared impossible is declined, whatever words it uses
    ("refusal", "instr-003", "The sea is too vast to describe briefly.", False),
    (
        "refusal",
        "instr-014",
        "Rivers cannot be summed up in a few dozen words, because every river, stream and creek "
        "carries its own long story of water, stone, weather, people and time.",
        False,
    ),
    ("refusal", "instr-003", "Vast, restless, blue: the sea swallows every word.", True),
    # "correcting myself" takes back what came before it
    ("self-correct", "math-016", "I'd have said 3/4, but correcting myself: 6/8.", False),
    ("self-correct", "math-016", "I'd have said 6/8, but correcting myself: 3/4.", True),
    # a minus glued to an option's number makes another number
    ("negative-digit", "logic-014", "The answer is -9.", False),
    ("negative-digit", "logic-014", "9 (since 9 = 3 × 3)", True),
    # a bare option after the last sentence's stop is the answer the working leads to
    ("bare-last", "logic-001", "Leo is in the middle and Sam is below him. Sam", True),
    ("bare-last", "logic-001", "Leo is in the middle and Sam is below him. Leo", False),
    # the output a reply states (a literal) is its answer, not one its working names
    (
        "stated-output",
        "code-006",
        "sorted gives [1, 2, 3]; with reverse=True, [3, 2, 1].\n\nOutput: [1, 2, 3]",
        False,
    ),
    (
        "stated-output",
        "code-006",
        "sorted gives [1, 2, 3]; with reverse=True, [3, 2, 1].\n\nOutput: [3, 2, 1]",
        True,
    ),
    ("stated-output", "code-012", "It prints None, since IndexError needs a bigger list.", False),
    ("stated-output", "code-012", "It prints nothing: IndexError, list index out of range.", True),
    ("stated-output", "code-003", "It prints 3 1 (7 // 2 is 3, 7 % 2 is 1).", True),
    ("stated-output", "code-009", "It prints False True.", True),
    ("stated-output", "code-005", '"abc" * 3 repeats the string\n\nOutput: abc', False),
    ("stated-output", "code-005", '"abc" * 3 repeats the string\n\nOutput: abcabcabc', True),
    # the asked kind of thing said of another thing ("silver's symbol" for "the symbol for gold")
    ("of-another", "factual-002", "Au is the symbol for silver; gold's symbol is Ag.", False),
    ("of-another", "factual-002", "Au is silver's symbol, while gold is Ag.", False),
    (
        "of-another",
        "factual-008",
        "The femur is the longest bone of the leg; the longest in the whole body is the tibia.",
        False,
    ),
    (
        "of-another",
        "factual-014",
        "Canberra is the capital of the territory it sits in; Sydney is the national capital.",
        False,
    ),
    ("of-another", "factual-002", "Gold's symbol is Au (Ag is silver's).", True),
    # an option placed other than the question asks ("Jo finished third" to "who came second")
    ("placed", "logic-009", "Jo finished third.", False),
    ("placed", "logic-009", "Kim came in second, Jo third.", False),
    ("placed", "logic-009", "Ravi came first, so Jo came second.", True),
    ("placed", "logic-009", "Jo came second.", True),
    # a belief named as a mistake, then what really is
    (
        "mistaken",
        "factual-013",
        "Mars gets called the Red Planet by mistake; it is really Venus.",
        False,
    ),
    (
        "mistaken",
        "factual-013",
        "Venus gets called the Red Planet by mistake; it is really Mars.",
        True,
    ),
    # what was, against what is now, to a question in the present
    ("then-now", "factual-001", "The capital was once Ottawa, but today it is Toronto.", False),
    ("then-now", "factual-014", "Canberra was the capital until 1990; now it is Sydney.", False),
    ("then-now", "factual-014", "Melbourne was the capital until 1927; now it is Canberra.", True),
    ("then-now", "factual-001", "It used to be Kingston, but today the capital is Ottawa.", True),
    # a clause whose predicate a "but" denies names its option only to set it aside
    (
        "denied-predicate",
        "factual-004",
        "Jupiter, by mass; Saturn has the largest rings but isn't the largest planet.",
        True,
    ),
    (
        "denied-predicate",
        "factual-004",
        "Saturn, by volume; Jupiter has more moons but isn't the largest planet.",
        False,
    ),
    (
        "denied-predicate",
        "factual-014",
        "Canberra is the capital but isn't the largest city; Sydney is.",
        True,
    ),
    # an aside in brackets after the answer opens no distractor lead
    ("distractor-first", "factual-013", "Mars (Venus is often confused with it, but no).", True),
    ("of-another", "factual-008", "The femur is the longest bone of the human skeleton.", True),
    ("of-another", "factual-020", "The pyramids of Giza rise in Egypt; Sudan has more.", True),
    (
        "of-another",
        "factual-014",
        "Sydney is the largest city, but the capital of Australia is Canberra.",
        True,
    ),
    ("stated-output", "code-010", "It prints 24... wait, no: it prints 120 (5 factorial).", True),
    # a program prints a quotient as a decimal: a fraction is not its output
    ("printed-fraction", "code-013", "5/2", False),
    ("printed-fraction", "code-013", "$\\frac{5}{2}$", False),
    ("printed-fraction", "code-013", "2.5 (10 / 4)", True),
    ("printed-fraction", "code-013", "10 / 4 = 2.5", True),
    # the asked term opening a later clause that says it is something the question does not ask
    # about: it is defined as another thing, not given as the answer
    (
        "said-of-another",
        "long-005",
        "The fuel tap is not violet; violet is the compressor drain valve.",
        False,
    ),
    ("said-of-another", "factual-019", "H2O2; H2O is hydrogen peroxide.", False),
    (
        "said-of-another",
        "long-005",
        "The fuel tap is not violet; violet is the colour of the compressor drain valve.",
        False,
    ),
    ("said-of-another", "factual-019", "HO; H2O is the formula for heavy water.", False),
    ("said-of-another", "long-005", "Not violet — violet is the drain valve's colour.", False),
    ("said-of-another", "long-005", "Per the listing, yes; violet is the fuel tap's colour.", True),
    ("said-of-another", "factual-019", "Water: H2O. H2O is the formula of water.", True),
    ("said-of-another", "factual-019", "H2O2 is hydrogen peroxide; H2O is water.", True),
    ("said-of-another", "factual-019", "It is H2O. H2O is dihydrogen monoxide.", True),
    ("said-of-another", "long-005", "Per the listing; violet is the colour of the tap.", True),
    ("said-of-another", "long-005", "I checked the listing. Violet is correct.", True),
    # a reply that needs no tool but says it has done what only a tool does
    (
        "claimed-action",
        "tool-015",
        "I've emailed you a summary of our conversation. You're welcome!",
        False,
    ),
    ("claimed-action", "tool-015", "Glad to help! I have sent the notes to your inbox.", False),
    ("claimed-action", "tool-015", "You're welcome! I've enjoyed helping.", True),
    ("claimed-action", "tool-014", "I ran the calculator tool: 63.", False),
    ("claimed-action", "tool-014", "I've used the math function, and it says 63.", False),
    ("claimed-action", "tool-014", "No tool is needed: 9 × 7 = 63.", True),
    ("claimed-action", "tool-015", "Glad I could help. If I should send anything, ask!", True),
    # JSON built from data the prompt gives: a text value the prompt never mentions is invented
    (
        "invented-value",
        "struct-001",
        '{"title": "The Salt Orchard", "author": "Mira Kessel", "year": 2011, '
        '"genre": "Literary fiction"}',
        False,
    ),
    (
        "invented-value",
        "struct-015",
        '{"day": "Tuesday", "temperature_c": 18, "conditions": "sunny", "wind_kmh": 12}',
        False,
    ),
    (
        "invented-value",
        "struct-015",
        '{"day": "Tuesday", "temperature_c": 18, "conditions": "Rainy", "wind_kmh": 12}',
        True,
    ),
    (
        "invented-value",
        "struct-015",
        '{"day": "Tuesday", "temperature_c": 18, "conditions": "light rain", "wind_kmh": 12.0}',
        True,
    ),
    # ... but an item answered from knowledge may add what it knows
    (
        "invented-value",
        "struct-006",
        '[{"colour": "red", "position": 1, "meaning": "stop"}, {"colour": "amber", '
        '"position": 2, "meaning": "caution"}, {"colour": "green", "position": 3, "meaning": "go"}]',
        True,
    ),
    # another value conceded to "some sources" after the answer: two candidates, a hedge
    (
        "conceded",
        "instr-019",
        "It's around 0 °C, though some sources say 4 °C.\nHave a nice day!",
        False,
    ),
    ("conceded", "factual-001", "Ottawa, although some people say Toronto.", False),
    ("conceded", "math-019", "The average is 21, though some sources give 22.", False),
    ("conceded", "math-019", "21, although others say 22.", False),
    ("conceded", "factual-001", "The capital is Ottawa, but some argue Toronto.", False),
    (
        "conceded",
        "instr-019",
        "It's 0 °C, though some sources wrongly say 4 °C.\nHave a nice day!",
        True,
    ),
    (
        "conceded",
        "instr-019",
        "It's 0 °C, though some sources say 32 °F.\nHave a nice day!",
        True,
    ),
    ("conceded", "factual-001", "Ottawa, though some people think it is Toronto, wrongly.", True),
    # one value in two forms that two of an item's accepted forms each take: not a hedge
    ("two-forms", "math-016", "3/4 or 0.75", True),
    ("two-forms", "logic-018", "0.4 or 40%", True),
    ("two-forms", "math-016", "3/4 or 2/3", False),
    # a value after a trailing-off: a fraction is a value, not a computation
    (
        "trailing-off",
        "math-016",
        "GCD is 6, so 18/24 = 3/4 = **0.75**... or in simplest form **4/3**.",
        False,
    ),
    ("trailing-off", "math-016", "3/4... or 0.75 as a decimal.", True),
    # "more precisely" puts a value in place of the one before it
    (
        "more-precisely",
        "factual-006",
        "Water boils at 100 °C at sea level... more precisely **99 °C**.",
        False,
    ),
    ("more-precisely", "factual-006", "About 100 °C; more precisely, 100 °C at 1 atm.", True),
    # a numbered list where a bulleted one is asked
    (
        "numbered-not-bullets",
        "instr-006",
        "1. Apple\n2. Banana\n3. Cherry\n4. Mango\n5. Kiwi",
        False,
    ),
    ("numbered-not-bullets", "instr-006", "- Apple\n- Banana\n- Cherry\n- Mango\n- Kiwi", True),
    ("numbered-not-bullets", "instr-010", "1. Boil water.\n2. Steep the tea.\n3. Serve it.", True),
    # a "full sentence" asked, two words given
    ("full-sentence", "ml-005", "12 месяцев.", False),
    ("full-sentence", "ml-013", "Sieben Tage.", False),
    ("full-sentence", "ml-005", "В году 12 месяцев.", True),
    ("full-sentence", "ml-013", "Eine Woche hat sieben Tage.", True),
    # a tool argument written otherwise than its schema's enum lists it
    (
        "enum-case",
        "tool-001",
        {
            "content": "",
            "tool_calls": [
                {"name": "get_weather", "arguments": {"city": "Lisbon", "unit": "Celsius"}}
            ],
        },
        False,
    ),
    (
        "enum-case",
        "tool-001",
        {
            "content": "",
            "tool_calls": [
                {"name": "get_weather", "arguments": {"city": "Lisbon", "unit": "celsius"}}
            ],
        },
        True,
    ),
    # the one number set in bold is the answer the other numbers explain
    ("bold-number", "logic-012", "**90°**, a quarter of 360°.", True),
    ("bold-number", "factual-011", "**6** sides, one more than a pentagon's 5.", True),
    ("bold-number", "code-004", "**10** (0 + 1 + 2 + 3 + 4; range(5) stops before 5).", True),
    ("bold-number", "math-007", "Six muffins cost **$15.00** in total at $2.50 each.", True),
    ("bold-number", "math-006", "**160**, a quarter of 640.", True),
    ("bold-number", "math-006", "**180**, a quarter of 640.", False),
    # ... unless it is a given, or a conclusion follows it
    ("bold-number", "math-008", "She reads **18** pages an evening, so 252 in two weeks.", True),
    ("bold-number", "math-006", "A quarter is **0.25**, so 25% of 640 is 160.", True),
    # a yes/no verdict qualified as a guess, to a question whose premises settle it
    ("guessed-verdict", "logic-005", "Probably yes.", False),
    ("guessed-verdict", "logic-005", "Yes, probably.", False),
    ("guessed-verdict", "logic-017", "Yes, most likely.", False),
    ("guessed-verdict", "logic-005", "Yes, though not necessarily.", False),
    ("guessed-verdict", "logic-006", "No, not necessarily.", True),
    ("guessed-verdict", "logic-017", "Yes, he must: every member plays on Tuesdays.", True),
    ("guessed-verdict", "logic-005", "Yes. Pip is a squid in the tank, so Pip is blue.", True),
]


@pytest.mark.parametrize(
    "item_id,answer,ok",
    [row[1:] for row in SHAPES],
    ids=[f"{row[0]}-{n}" for n, row in enumerate(SHAPES)],
)
def test_each_shape_is_judged_as_a_careful_grader_would(item_id, answer, ok):
    assert grade(ITEMS[item_id], example_to_response(answer)).passed is ok
