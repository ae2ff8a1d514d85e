"""Write tests/data/grading/answers.jsonl: labelled chat-style answers for every core item.

Run once (`python bench/build_grading_set.py`); the output is committed and is the acceptance set
for the graders. Each row is {id, answer, passed, style, why}: `answer` has the shape of an item's
`accept` example (a string, or {content, tool_calls, reasoning}); `passed` is what a careful human
grader would say. Half the rows are correct answers written the way chat models answer
(step-by-step working, `\\boxed{}`, bold, preambles, explanations that name other options, other
languages' punctuation); half are near misses (hedges, negations, wrong units, distractors, loops,
floods, overshoot, wrong arguments, wrong values).

The rows were written before the graders were changed; `bench/grading_bench.py` grades them and
`tests/test_grading_set.py` holds the held-out half to its error budget.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "grading" / "answers.jsonl"

Row = dict[str, Any]
ROWS: list[Row] = []


def add(item: str, answer: Any, passed: bool, style: str, why: str) -> None:
    ROWS.append({"id": item, "answer": answer, "passed": passed, "style": style, "why": why})


def ok(item: str, style: str, why: str, *answers: Any) -> None:
    for a in answers:
        add(item, a, True, style, why)


def bad(item: str, style: str, why: str, *answers: Any) -> None:
    for a in answers:
        add(item, a, False, style, why)


# ---------------------------------------------------------------- numeric answers
# id: (answer as written, LaTeX form, working that ends in the answer, wrong answer, unit, bad unit)
NUMERIC: dict[str, tuple[str, str, str, str, str, str]] = {
    "math-001": ("8", "8", "5 + 3 = 8", "9", "", ""),
    "math-002": ("12", "12", "144 ÷ 12 = 12 (since 12 × 12 = 144)", "14", "", ""),
    "math-003": ("72", "72", "9 × 8 = 72", "81", "", ""),
    "math-004": ("-8", "-8", "15 − 23 = −8", "8", "", ""),
    "math-005": ("5.75", "5.75", "3.5 + 2.25 = 5.75", "5.25", "", ""),
    "math-006": ("160", "160", "25% of 640 = 0.25 × 640 = 160", "16", "", ""),
    "math-007": ("15", "15", "6 × $2.50 = $15.00", "12.50", " dollars", ""),
    "math-008": ("252", "252", "Two weeks is 14 days, and 18 × 14 = 252", "126", " pages", ""),
    "math-009": (
        "155",
        "155",
        "09:40 → 11:40 is 120 minutes, 11:40 → 12:15 is 35 minutes, 120 + 35 = 155",
        "175",
        " minutes",
        " hours",
    ),
    "math-010": ("126", "126", "Area = 14 × 9 = 126", "46", " cm²", " cm"),
    "math-011": ("10,000", "10{,}000", "1,250 × 8 = 10,000", "1,000", "", ""),
    "math-012": ("32", "32", "2,400 ÷ 75 = 32", "30", " minutes", " hours"),
    "math-013": ("-7", "-7", "4 − 11 = −7", "7", " °C", " °F"),
    "math-014": ("1024", "1024", "2^10 = 2 × 2 × … × 2 (ten times) = 1024", "2048", "", ""),
    "math-015": ("14", "14", "14 × 14 = 196, so √196 = 14", "13", "", ""),
    "math-017": ("29", "29", "87 ÷ 3 = 29", "27", " dollars", ""),
    "math-018": ("34", "34", "15% of $40 is $6, and $40 − $6 = $34", "6", " dollars", ""),
    "math-019": ("21", "21", "12 + 18 + 25 + 29 = 84, and 84 ÷ 4 = 21", "84", "", ""),
    "math-020": ("8", "8", "3x = 31 − 7 = 24, so x = 24 ÷ 3 = 8", "24", "", ""),
    "math-021": ("72", "72", "180 km ÷ 2.5 h = 72 km/h", "90", " km/h", " mph"),
    "math-022": ("10,800", "10\\,800", "3 × 60 × 60 = 10,800", "180", " seconds", " minutes"),
    "math-023": ("83", "83", "5 × 24 = 120 pencils, and 120 − 37 = 83", "93", " pencils", ""),
    "math-024": ("71", "71", "7 × 13 = 91, then 91 − 20 = 71", "61", "", ""),
    "logic-004": ("4", "4", "'All but 4 are broken' means 4 are not broken", "5", " jars", ""),
    "logic-011": (
        "17",
        "17",
        "Tom is 2 × 7 = 14 now, so in 3 years he is 14 + 3 = 17",
        "14",
        "",
        "",
    ),
    "logic-012": (
        "90",
        "90",
        "Each hour mark is 30°, and 3 marks apart gives 3 × 30° = 90°",
        "45",
        "°",
        "",
    ),
    "logic-015": (
        "3",
        "3",
        "Chair 4 is the middle of 7, so 3 chairs are to her left",
        "4",
        " chairs",
        "",
    ),
    "logic-022": (
        "9",
        "9",
        "green = g, red = g + 3, so 2g + 3 = 15, g = 6 and red = 9",
        "6",
        "",
        "",
    ),
    "factual-003": (
        "7",
        "7",
        "There are 7: Africa, Antarctica, Asia, Australia, Europe, North America and South America",
        "6",
        "",
        "",
    ),
    "factual-006": (
        "100",
        "100",
        "At standard pressure, pure water boils at 100",
        "90",
        " °C",
        " °F",
    ),
    "factual-011": ("6", "6", "'Hexa' means six, so a hexagon has 6 sides", "8", " sides", ""),
    "factual-012": ("32", "32", "On the Fahrenheit scale water freezes at 32", "0", " °F", " °C"),
    "factual-017": ("2", "2", "2 is divisible only by 1 and itself", "1", "", ""),
    "code-001": ("11", "11", '"hello world" has 5 + 1 + 5 = 11 characters', "10", "", ""),
    "code-002": ("4", "4", "y is the same list as x, so after the append len(x) = 4", "3", "", ""),
    "code-004": ("10", "10", "0 + 1 + 2 + 3 + 4 = 10", "15", "", ""),
    "code-010": ("120", "120", "f(5) = 5 × 4 × 3 × 2 × 1 = 120", "24", "", ""),
    "code-013": ("2.5", "2.5", "/ is true division in Python 3, so 10 / 4 = 2.5", "2", "", ""),
    "code-014": ("7", "7", 'd becomes {"a": 5, "b": 2}, and 5 + 2 = 7', "3", "", ""),
}


def numeric_rows() -> None:
    for item, (ans, latex, work, wrong, unit, bad_unit) in NUMERIC.items():
        u = unit
        ok(
            item,
            "stepwise",
            "working first, answer in a closing sentence",
            f"Let's work through this step by step.\n\n{work}.\n\nSo the answer is **{ans}{u}**.",
        )
        ok(
            item,
            "boxed",
            "Qwen-style boxed answer after the working",
            f"{work}.\n\n$\\boxed{{{latex}}}$",
        )
        ok(
            item,
            "explain-after",
            "answer first, explanation with other numbers after it",
            f"{ans}{u}\n\nExplanation: {work}.",
        )
        ok(item, "bold-marker", "bold Answer marker followed by the working", f"**Answer:** {work}")
        ok(
            item,
            "negation-ok",
            "names a wrong value only to reject it",
            f"Not {wrong}{u} — it's {ans}{u}.",
        )
        bad(item, "wrong-value", "a plausible wrong result", f"{wrong}{u}")
        bad(
            item,
            "wrong-boxed",
            "the working mentions the right value, the boxed answer is wrong",
            f"It is tempting to say {ans}, but on reflection the result is {wrong}.\n\n"
            f"$\\boxed{{{wrong}}}$",
        )
        bad(
            item, "hedge", "names two candidates as the answer", f"It's either {ans} or {wrong}{u}."
        )
        bad(
            item,
            "negation",
            "the right value named after 'not'",
            f"The answer is {wrong}{u}, not {ans}.",
        )
        if bad_unit:
            bad(item, "wrong-unit", "right number, wrong unit", f"The answer is {ans}{bad_unit}.")


# ---------------------------------------------------------------- choice by name

# id: (correct text, a wrong option, a reason)
NAMED: dict[str, tuple[str, str, str]] = {
    "logic-001": ("Sam", "Leo", "Mia > Leo > Sam, so Sam is at the bottom"),
    "logic-002": (
        "Saturday",
        "Friday",
        "10 days is one week plus 3 days, and Wednesday + 3 is Saturday",
    ),
    "logic-008": ("Cleo", "Ben", "Anna has the cat and Ben has no fish, so the fish is Cleo's"),
    "logic-009": ("Jo", "Kim", "the order is Ravi, Jo, Kim, Lu, Pat"),
    "logic-013": ("carrot", "cherry", "it is the only vegetable; the others are fruits"),
    "logic-014": ("9", "2", "it is the only number in the list that is not prime"),
    "logic-016": ("North", "South", "A is north of B, and B is north of C"),
    "factual-001": ("Ottawa", "Toronto", "Toronto is the largest city, but Ottawa is the capital"),
    "factual-002": ("Au", "Ag", "from the Latin aurum; Ag is silver"),
    "factual-004": (
        "Jupiter",
        "Saturn",
        "it is more than twice as massive as all other planets combined",
    ),
    "factual-005": ("Jane Austen", "Charlotte Brontë", "it was published in 1813"),
    "factual-007": ("carbon dioxide", "oxygen", "they release oxygen as a by-product"),
    "factual-008": ("the femur", "the tibia", "the thigh bone is longer than the shin bone"),
    "factual-009": (
        "the Pacific Ocean",
        "the Atlantic Ocean",
        "it covers about a third of the planet",
    ),
    "factual-010": ("1989", "1991", "it fell on 9 November 1989"),
    "factual-013": ("Mars", "Jupiter", "iron oxide on its surface makes it look red"),
    "factual-014": (
        "Canberra",
        "Sydney",
        "Sydney is larger, but Canberra was built as the capital",
    ),
    "factual-015": ("diamond", "quartz", "it scores 10 on the Mohs scale"),
    "factual-016": ("Portuguese", "Spanish", "Brazil was a Portuguese colony"),
    "factual-018": ("Albert Einstein", "Isaac Newton", "he published it in 1915"),
    "factual-020": ("Egypt", "Sudan", "they stand on the Giza plateau near Cairo"),
    "factual-022": ("Mount Everest", "K2", "its summit is 8,849 m above sea level"),
    "tool-016": ("Ottawa", "Toronto", "Ottawa has been the capital since 1857"),
    "logic-021": ("Priya", "Omar", "Lena > Omar > Priya, so Priya has the fewest"),
}


def named_rows() -> None:
    for item, (right, wrong, reason) in NAMED.items():
        cap = right[0].upper() + right[1:]
        ok(item, "bold", "bold answer with a short reason", f"**{cap}** — {reason}.")
        ok(
            item,
            "names-others",
            "explanation names another option as not the answer",
            f"The answer is {right}. It is not {wrong}: {reason}.",
        )
        ok(item, "preamble", "chatty preamble before the answer", f"Sure! The answer is {right}.")
        ok(
            item,
            "stepwise",
            "reasoning first, answer last",
            f"Let me think about this.\n\n{reason[0].upper() + reason[1:]}.\n\n**Final answer:** {cap}",
        )
        bad(item, "wrong-value", "a plausible wrong option", f"{wrong[0].upper() + wrong[1:]}.")
        bad(item, "hedge", "names two candidates", f"It's either {right} or {wrong}.")
        bad(
            item,
            "negation",
            "names the right option only to reject it",
            f"It's not {right}; it's {wrong}.",
        )
        bad(
            item,
            "although",
            "concedes the right option, then picks the wrong one",
            f"Although {right} is often mentioned, the answer is {wrong}.",
        )


# ---------------------------------------------------------------- lettered multiple choice
# id: (letter, option text, wrong letter, wrong text, reason)
LETTERED: dict[str, tuple[str, str, str, str, str]] = {
    "logic-003": ("D", "48", "A", "36", "each number doubles, and 24 × 2 = 48"),
    "logic-010": ("C", "they weigh the same", "B", "the nails", "both are two kilograms"),
    "logic-019": (
        "A",
        "No robins are trout",
        "D",
        "Some trout are robins",
        "trout are fish and no robin is a fish",
    ),
    "factual-021": ("B", "dolphin", "A", "shark", "dolphins breathe air and nurse their young"),
    "code-008": (
        "C",
        "It should compare with 0 instead of 1",
        "A",
        "It should use // instead of %",
        "an even number leaves remainder 0",
    ),
}


def lettered_rows() -> None:
    for item, (L, text, W, wtext, reason) in LETTERED.items():
        ok(item, "bold", "bold letter and option", f"**{L}) {text}**")
        ok(
            item,
            "stepwise",
            "reasoning naming other options, letter last",
            f"Let's check the options.\n\n- {W}) {wtext}: no.\n- {L}) {text}: yes, {reason}.\n\n"
            f"The answer is **{L}**.",
        )
        ok(
            item,
            "llama",
            "Llama-style 'The correct answer is'",
            f"The correct answer is: {L}) {text}",
        )
        ok(
            item,
            "names-others",
            "explanation rejects another letter",
            f"{L}. Not {W}, because {reason}.",
        )
        ok(item, "boxed", "boxed letter", f"{reason[0].upper() + reason[1:]}.\n\n$\\boxed{{{L}}}$")
        bad(item, "wrong-value", "a wrong letter with its text", f"{W}) {wtext}")
        bad(item, "hedge", "two letters", f"{L} or {W}")
        bad(item, "negation", "the right letter named after 'not'", f"Not {L}. The answer is {W}.")
        bad(
            item,
            "wrong-working",
            "reasoning that lands on a wrong letter",
            f"Looking at each option, {W} fits best.\n\nAnswer: {W}",
        )


# ---------------------------------------------------------------- yes / no
# id: (yes or no, reason)
YESNO: dict[str, tuple[str, str]] = {
    "logic-005": ("Yes", "every squid in the tank is blue and Pip is one of them"),
    "logic-006": ("No", "only some cats are grey, so Tom need not be"),
    "logic-007": ("No", "rain would have made the street wet, and it is dry"),
    "logic-017": ("Yes", "every club member plays on Tuesdays and Dev is a member"),
}


def yesno_rows() -> None:
    for item, (yes, reason) in YESNO.items():
        no = "No" if yes == "Yes" else "Yes"
        ok(item, "marker", "Answer: marker", f"Answer: {yes}")
        ok(item, "sentence", "'The answer is' sentence", f"The answer is {yes.lower()}.")
        ok(
            item,
            "stepwise",
            "reasoning then verdict",
            f"Let's reason it through: {reason}.\n\nSo, **{yes}**.",
        )
        ok(
            item,
            "bold",
            "bold verdict with reason",
            f"**{yes}.** {reason[0].upper() + reason[1:]}.",
        )
        ok(item, "preamble", "chatty preamble", f"Great question! {yes}, because {reason}.")
        bad(item, "wrong-value", "the opposite verdict", f"{no}.")
        bad(item, "marker", "opposite verdict with a marker", f"Answer: {no}")
        bad(
            item,
            "anchor",
            "opposite verdict; the right word starts a later line",
            f"{no}, I don't think so.\n{yes} would need more information.",
        )
        bad(item, "hedge", "both verdicts", f"{yes} or {no}: it depends on how you read it.")


# ---------------------------------------------------------------- canaries


COPY = {
    "canary-001": ("The blue kettle sings at dawn.", "The blue kettle sings at dusk."),
    "canary-005": (
        "A small boat drifted across the quiet lake.",
        "A small boat drifted across the quiet sea.",
    ),
    "canary-008": (
        "The north wind carried the smell of pine.",
        "The north wind carried the scent of pine.",
    ),
    "canary-010": ("Hello, world!", "Hello, World! Hello, world!"),
    "canary-011": ("Good morning, everyone.", "Good morning, everybody."),
    "canary-012": ("The library opens at nine o'clock.", "The library opens at nine thirty."),
}


def canary_rows() -> None:
    for item, (text, wrong) in COPY.items():
        words = text.rstrip(".!").split()
        ok(item, "quoted", "typographic quotes", f"“{text}”")
        ok(item, "bold", "bold copy", f"**{text}**")
        ok(
            item,
            "preamble",
            "preamble then the copy on its own line",
            f"Sure! Here it is:\n\n{text}",
        )
        ok(item, "blockquote", "markdown blockquote", f"> {text}")
        bad(item, "wrong-value", "one word changed", wrong)
        bad(item, "loop", "a repetition loop", " ".join([text] * 6))
        bad(item, "flood", "the last word repeated", text.rstrip(".!") + (" " + words[-1]) * 12)
        bad(
            item,
            "appended",
            "extra words appended to the copy",
            text.rstrip(".!") + " and then it was quiet again.",
        )
    # continuation / counting canaries: hand-written
    ok("canary-002", "sentence", "a sentence naming the next day", "The next day is Thursday.")
    ok("canary-002", "bold", "bold next day", "**Thursday**")
    ok("canary-002", "continued", "the rest of the week", "Thursday, Friday, Saturday, Sunday.")
    ok(
        "canary-002",
        "preamble",
        "preamble and the sequence",
        "Sure! Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday",
    )
    bad("canary-002", "wrong-value", "skips Thursday", "Friday")
    bad(
        "canary-002",
        "loop",
        "a loop of one word",
        "Thursday Thursday Thursday Thursday Thursday Thursday Thursday Thursday",
    )
    bad(
        "canary-002",
        "loop",
        "the week wraps round again and again",
        ", ".join(
            ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"] * 3
        ),
    )
    bad(
        "canary-002",
        "negation",
        "names Thursday only to reject it",
        "Not Thursday — the next one is Friday.",
    )
    ok("canary-003", "spaces", "spaces after commas, period", "1, 2, 3, 4, 5, 6, 7, 8, 9, 10.")
    ok("canary-003", "preamble", "preamble", "Sure! Here you go:\n\n1, 2, 3, 4, 5, 6, 7, 8, 9, 10")
    ok("canary-003", "bold", "bold", "**1, 2, 3, 4, 5, 6, 7, 8, 9, 10**")
    bad(
        "canary-003",
        "overshoot",
        "keeps counting past 10",
        "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13",
    )
    bad("canary-003", "loop", "the count loops", ", ".join(str(i) for i in list(range(1, 11)) * 3))
    bad("canary-003", "flood", "a flood of tens", "1, 2, 3, 4, 5, 6, 7, 8, 9, 10" + ", 10" * 12)
    bad("canary-003", "wrong-value", "counts from 0", "0, 1, 2, 3, 4, 5, 6, 7, 8, 9")
    ok("canary-004", "commas", "commas between letters", "A, B, C, D, E, F, G, H")
    ok("canary-004", "preamble", "preamble", "Sure! The first eight letters are: A B C D E F G H")
    ok("canary-004", "bold", "bold", "**A B C D E F G H**")
    bad("canary-004", "overshoot", "runs on past H", "A B C D E F G H I J K L M N")
    bad("canary-004", "loop", "the alphabet loops", " ".join("ABCDEFGH" * 4))
    bad("canary-004", "wrong-value", "seven letters", "A B C D E F G")
    bad("canary-004", "flood", "a flood of H", "A B C D E F G H" + " H" * 15)
    ok(
        "canary-006",
        "numbered",
        "numbered markdown list",
        "\n".join(f"{i}. **{m}**" for i, m in enumerate(MONTHS, 1)),
    )
    ok(
        "canary-006",
        "preamble",
        "preamble then a comma list",
        "Sure! Here are the twelve months:\n\n" + ", ".join(MONTHS) + ".",
    )
    ok("canary-006", "bullets", "bullet list", "\n".join(f"- {m}" for m in MONTHS))
    bad("canary-006", "loop", "the list starts again", ", ".join(MONTHS * 2))
    bad(
        "canary-006",
        "overshoot",
        "January again at the end",
        ", ".join(MONTHS + ["January", "February", "March"]),
    )
    bad(
        "canary-006",
        "wrong-value",
        "misses November",
        ", ".join(m for m in MONTHS if m != "November"),
    )
    bad("canary-006", "flood", "December flood", ", ".join(MONTHS) + ", December" * 10)
    ok("canary-007", "preamble", "preamble", "Sure: 7 3 9 1 5")
    ok("canary-007", "bold", "bold", "**7 3 9 1 5**")
    ok("canary-007", "dashes", "dashes between numbers", "7 - 3 - 9 - 1 - 5")
    bad("canary-007", "loop", "the numbers loop", "7 3 9 1 5 " * 5)
    bad("canary-007", "appended", "an extra number appended", "7 3 9 1 5 2")
    bad("canary-007", "wrong-value", "sorted instead of copied", "1 3 5 7 9")
    bad("canary-007", "flood", "a flood of fives", "7 3 9 1 5" + " 5" * 14)
    ok("canary-009", "sentence", "a sentence with the next number", "After 8 comes 10.")
    ok("canary-009", "bold", "bold", "**10**")
    ok("canary-009", "continued", "the sequence written out", "2, 4, 6, 8, 10")
    ok("canary-009", "explain", "answer with its rule", "10 (each number goes up by 2)")
    bad("canary-009", "flood", "a flood of tens", "10 10 10 10 10 10 10 10 10 10 10 10")
    bad("canary-009", "loop", "runs on for ever", ", ".join(str(n) for n in range(10, 60, 2)))
    bad("canary-009", "wrong-value", "off by two", "The next number is 12.")
    bad("canary-009", "hedge", "two candidates", "10 or 12")


MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


# ---------------------------------------------------------------- instruction following


def instruction_rows() -> None:
    i = "instr-001"
    ok(i, "bold", "bold bullets", "- **Red**\n- **Green**\n- **Blue**")
    ok(i, "numbered", "numbered list counts as bullets", "1. Red\n2. Green\n3. Blue")
    ok(i, "trailing-newline", "bullets and a trailing newline", "* Red\n* Green\n* Blue\n")
    bad(i, "wrong-value", "paint primaries, not light", "- Red\n- Yellow\n- Blue")
    bad(
        i,
        "extra-text",
        "a preamble the prompt forbids",
        "Here are the three primary colours of light:\n\n- Red\n- Green\n- Blue",
    )
    bad(
        i,
        "extra-text",
        "a closing remark the prompt forbids",
        "- Red\n- Green\n- Blue\n\nMixing all three gives white light.",
    )
    bad(
        i,
        "negation",
        "lists red and green as not primaries",
        "- Blue\n- Yellow (not red)\n- Magenta (not green)",
    )

    i = "instr-002"
    ok(i, "bold", "bold caps", "**HOT**")
    ok(i, "sentence", "caps sentence", 'THE OPPOSITE OF "COLD" IS "HOT".')
    ok(i, "preamble", "caps preamble", "SURE! THE ANSWER IS HOT.")
    bad(i, "format", "not all caps", "The opposite of cold is hot.")
    bad(i, "wrong-value", "caps but wrong word", "WARM")
    bad(i, "negation", "caps, says it is not hot", "IT IS NOT HOT; THE OPPOSITE IS WARM.")
    bad(i, "format", "mixed case", "HOT (as in hot weather)")

    i = "instr-003"
    ok(i, "short", "seven words", "Vast, restless blue water stretching to the horizon.")
    ok(i, "bold", "bold, under ten words", "**Endless, salty, and always in motion.**")
    ok(i, "fragment", "a two-word description", "Deep blue.")
    bad(
        i,
        "too-long",
        "twelve words",
        "The sea is a huge, deep, salty body of water that never rests.",
    )
    bad(
        i,
        "too-long",
        "a preamble pushes it past ten words",
        "Sure! Here is a description of the sea: vast, blue, deep and full of life.",
    )
    bad(i, "off-topic", "describes the sky instead", "A clear blue sky with a few white clouds.")

    i = "instr-004"
    ok(i, "reordered", "keys in another order", '{"legs": 2, "animal": "owl"}')
    ok(i, "fence-plain", "a plain fence", '```\n{"animal": "owl", "legs": 2}\n```')
    ok(i, "compact", "no spaces", '{"animal":"owl","legs":2}')
    bad(
        i,
        "extra-text",
        "prose after the JSON",
        '{"animal": "owl", "legs": 2}\n\nOwls have two legs, like all birds.',
    )
    bad(i, "wrong-value", "wrong number of legs", '{"animal": "owl", "legs": 4}')
    bad(i, "type", "legs as a word", '{"animal": "owl", "legs": "two"}')

    i = "instr-005"
    ok(
        i,
        "plain",
        "one sentence then the phrase",
        "People carry umbrellas so they don't get wet in the rain. Over and out.",
    )
    ok(
        i,
        "newline",
        "the phrase on its own line",
        "Umbrellas keep people dry when it rains.\nOver and out.",
    )
    ok(
        i,
        "sun",
        "shade from the sun",
        "People carry umbrellas to shield themselves from rain and strong sun. Over and out.",
    )
    bad(i, "format", "missing the closing phrase", "People carry umbrellas to stay dry.")
    bad(
        i,
        "format",
        "phrase changed",
        "People carry umbrellas to stay dry when it rains. Over and out!!! Bye.",
    )
    bad(
        i,
        "too-long",
        "three sentences, not one",
        "It rains a lot. People hate being wet. So they carry umbrellas to stay dry. Over and out.",
    )

    i = "instr-006"
    ok(i, "star", "star bullets", "* Apple\n* Banana\n* Mango\n* Pear\n* Kiwi")
    ok(
        i,
        "bold",
        "bold bullets",
        "- **Strawberry**\n- **Orange**\n- **Grape**\n- **Peach**\n- **Plum**",
    )
    ok(i, "numbered", "numbered", "1. Apple\n2. Orange\n3. Lemon\n4. Cherry\n5. Fig")
    bad(
        i, "wrong-value", "vegetables, not fruits", "- Carrot\n- Potato\n- Onion\n- Leek\n- Cabbage"
    )
    bad(
        i,
        "extra-text",
        "a preamble the prompt forbids",
        "Here are five fruits:\n- Apple\n- Banana\n- Cherry\n- Mango\n- Pear",
    )
    bad(i, "too-long", "six bullets", "- Apple\n- Banana\n- Cherry\n- Mango\n- Pear\n- Plum")

    i = "instr-007"
    ok(i, "caps", "capitalised word", "GREEN")
    ok(i, "period", "word and period", "Green.")
    ok(i, "quoted", "quoted word", '"Green"')
    bad(i, "too-long", "a sentence, not one word", "It is green.")
    bad(i, "wrong-value", "wrong colour", "Brown")
    bad(i, "hedge", "two words", "Green/yellow")

    i = "instr-008"
    ok(i, "plain", "lowercase sentence", "cats spend most of the day napping in the sun.")
    ok(i, "plain", "lowercase sentence", "my neighbour's cat visits our garden every morning.")
    ok(
        i,
        "no-period",
        "lowercase without a period",
        "a cat will always find the warmest spot in the house",
    )
    bad(i, "format", "capital at the start", "My cat sleeps all day.")
    bad(i, "off-topic", "lowercase but about dogs", "dogs love to run in the park.")
    bad(
        i,
        "too-long",
        "three sentences",
        "cats are curious. they climb everything. they also sleep a lot.",
    )

    i = "instr-009"
    ok(i, "plain", "No, with a reason", "No, water is what makes other things wet.")
    ok(i, "plain", "Yes, with a reason", "Yes, because it is a liquid that sticks to surfaces.")
    ok(i, "bold", "bold opening", "**No,** wetness is what water does to other things.")
    bad(i, "format", "no comma after Yes", "Yes it is wet.")
    bad(i, "format", "starts with a preamble", "Great question! Yes, water feels wet.")
    bad(i, "format", "Yes but no reason", "Yes,")

    i = "instr-010"
    ok(
        i,
        "bold",
        "bold step names",
        "1. **Boil** the water.\n2. **Steep** the tea bag for three minutes.\n3. **Serve** with milk if you like.",
    )
    ok(
        i,
        "paren",
        "1) style numbering",
        "1) Boil water.\n2) Pour it over a tea bag.\n3) Let it steep, then remove the bag.",
    )
    ok(
        i,
        "plain",
        "plain steps",
        "1. Heat fresh water until it boils.\n2. Put loose tea or a bag in a cup and add the water.\n3. Steep for 3-5 minutes and enjoy.",
    )
    bad(
        i,
        "extra-text",
        "a preamble the prompt forbids",
        "Here's how:\n1. Boil water.\n2. Add tea.\n3. Steep and serve.",
    )
    bad(
        i,
        "extra-text",
        "a closing line the prompt forbids",
        "1. Boil water.\n2. Add tea.\n3. Steep and serve.\n\nEnjoy your tea!",
    )
    bad(i, "too-long", "four steps", "1. Boil water.\n2. Add tea.\n3. Steep.\n4. Serve.")

    i = "instr-011"
    ok(i, "plain", "no 'the'", "A pale moon hung over silent hills.")
    ok(i, "plain", "no 'the'", "Tonight's moon is bright and round.")
    ok(i, "theme", "'their' is not 'the'", "Sailors trust their moon to guide them home.")
    bad(i, "format", "uses 'The'", "The moon is bright tonight.")
    bad(i, "format", "uses 'the' mid-sentence", "A bright moon rose over the sea.")
    bad(i, "off-topic", "about the sun", "Our sun warms every field.")

    i = "instr-012"
    ok(i, "caps", "OK with exclamation", "OK!")
    ok(i, "quoted", "quoted", '"OK"')
    ok(i, "space", "trailing newline", "OK\n")
    bad(i, "preamble", "a preamble line before OK", "Sure!\nOK")
    bad(i, "extra-text", "OK and more", "OK\nLet me know if you need anything else.")
    bad(i, "wrong-value", "Okay instead of OK", "Okay.")

    i = "instr-013"
    ok(i, "plain", "four planets", "Venus, Earth, Mars, Saturn")
    ok(i, "and", "with 'and'", "Mercury, Venus, Mars and Neptune")
    ok(i, "period", "with a period", "Jupiter, Saturn, Uranus, Neptune.")
    bad(i, "wrong-value", "Pluto is not a planet", "Earth, Mars, Jupiter, Pluto")
    bad(i, "extra-text", "a preamble", "Sure! Mercury, Venus, Earth, Mars")
    bad(i, "format", "one per line", "Mercury\nVenus\nEarth\nMars")

    i = "instr-014"
    ok(
        i,
        "plain",
        "28 words",
        "Rivers begin as small streams in the mountains and grow as they collect rain. They carve valleys, water farms, and carry boats, sediment and life to the sea.",
    )
    ok(
        i,
        "plain",
        "about 25 words",
        "A river is fresh water on the move, winding through forests and cities, feeding wetlands, and finally spilling its load into a lake or the sea.",
    )
    ok(
        i,
        "bold",
        "a bold title inside the limit",
        "**Rivers**\n\nRivers shape the land they cross. Over thousands of years they cut canyons, build deltas, and give people water, food and a way to travel.",
    )
    bad(
        i,
        "too-short",
        "twelve words",
        "Rivers flow from the mountains to the sea, carrying water and life.",
    )
    bad(
        i,
        "too-long",
        "far over 40 words",
        " ".join(
            ["Rivers carry water from the hills to the sea and shape the valleys around them."] * 4
        ),
    )
    bad(
        i,
        "off-topic",
        "about mountains",
        "Mountains rise high above the plains, their peaks covered in snow for most of the year, and climbers travel from all over the world to test themselves on their steep rocky slopes.",
    )

    i = "instr-015"
    ok(
        i,
        "plain",
        "three uses in three sentences",
        "The old lantern flickered in the wind. Ella held the lantern high to light the path. When they reached home, she blew out the lantern.",
    )
    ok(
        i,
        "plural",
        "lanterns count",
        "Lanterns lined the harbour wall. One lantern was blue. Tom chose that lantern for his boat.",
    )
    ok(
        i,
        "two-sentences",
        "two sentences, four uses",
        "A lantern hung by the door, and a second lantern sat on the table. Every night Grandpa lit one lantern and told us a lantern story.",
    )
    bad(i, "too-short", "only twice", "The lantern glowed. Mia carried the lantern home.")
    bad(
        i,
        "too-long",
        "five sentences",
        "Mia found a lantern. The lantern was old. She cleaned the lantern. It shone. She smiled.",
    )
    bad(
        i,
        "wrong-value",
        "lamp, not lantern",
        "The lamp glowed. Mia took the lamp home. The lamp lit her room.",
    )

    i = "instr-016"
    ok(i, "plain", "digit and newline", "8\n")
    ok(i, "bold", "bold digit with period", "**8.**")
    ok(i, "quoted", "backticks", "`8`")
    bad(i, "wrong-value", "insects have six", "6")
    bad(i, "format", "spelled out", "Eight")
    bad(i, "extra-text", "a sentence", "Spiders have 8 legs.")

    i = "instr-017"
    ok(i, "plain", "no commas", "Autumn paints the hills in shades of red and gold.")
    ok(i, "plain", "no commas", "Cool autumn mornings smell of wood smoke and wet leaves.")
    ok(i, "exclaim", "exclamation", "I love how autumn leaves crunch under my boots!")
    bad(i, "format", "a comma", "In autumn, leaves fall.")
    bad(
        i,
        "format",
        "a full-width comma",
        "Autumn leaves drift down slowly，covering the paths in gold.",
    )
    bad(i, "too-long", "two sentences", "Autumn is here. The leaves are falling.")

    i = "instr-018"
    ok(
        i,
        "aligned",
        "aligned columns",
        "| Country | Capital |\n|:--------|:--------|\n| Italy   | Rome    |\n| Japan   | Tokyo   |",
    )
    ok(
        i,
        "bold-header",
        "bold header cells",
        "| **Country** | **Capital** |\n| --- | --- |\n| Italy | Rome |\n| Japan | Tokyo |",
    )
    ok(
        i,
        "preamble",
        "short preamble then the table",
        "Here is the table:\n\n| Country | Capital |\n|---|---|\n| Italy | Rome |\n| Japan | Tokyo |",
    )
    bad(
        i,
        "too-long",
        "three rows",
        "| Country | Capital |\n|---|---|\n| Italy | Rome |\n| Japan | Tokyo |\n| France | Paris |",
    )
    bad(
        i,
        "wrong-value",
        "Milan for Italy",
        "| Country | Capital |\n|---|---|\n| Italy | Milan |\n| Japan | Tokyo |",
    )
    bad(i, "format", "a list, not a table", "- Italy: Rome\n- Japan: Tokyo")

    i = "instr-019"
    sysline = "Have a nice day!"
    ok(i, "plain", "answer and sign-off", f"The freezing point of water is 0 °C.\n\n{sysline}")
    ok(i, "bold", "bold answer and sign-off", f"**0 °C** (32 °F).\n{sysline}")
    ok(i, "words", "zero in words", f"Water freezes at zero degrees Celsius. {sysline}")
    bad(i, "format", "sign-off missing", "Water freezes at 0 degrees Celsius (32 °F).")
    bad(
        i,
        "wrong-value",
        "Fahrenheit value as the answer",
        f"It freezes at 32 degrees Celsius. {sysline}",
    )
    bad(i, "wrong-value", "boiling point", f"Water boils at 100 °C. {sysline}")

    i = "instr-020"
    ok(i, "plain", "straight quotes", '"Finding Max"')
    ok(i, "curly", "curly quotes", "“Paws on the Way Home”")
    ok(i, "plain", "short title", '"Lost in the Rain"')
    bad(i, "format", "no quotes", "Finding Max")
    bad(i, "extra-text", "a preamble", 'Sure! "Finding Max"')
    bad(i, "too-long", "nine words", '"The Little Dog Who Found His Way Back Home Again"')

    i = "instr-021"
    tips = [
        "Place your plant near a bright window so that it receives plenty of indirect light for most of the day without being scorched.",
        "Water the plant only when the top layer of soil feels dry to the touch, because constantly soggy soil will rot the roots.",
        "Make sure the pot has drainage holes in the bottom so that any extra water can drain away instead of pooling around the roots.",
        "Wipe dust off the leaves with a soft damp cloth every couple of weeks so the plant can absorb as much light as possible.",
        "Feed the plant with a diluted liquid fertiliser roughly once a month during the spring and summer when it is actively growing.",
        "Keep the plant away from cold draughts, heaters and air-conditioning vents, because sudden temperature swings can stress it badly.",
        "Rotate the pot a little every week so that each side of the plant gets an even share of light and the stems grow straight.",
        "Inspect the undersides of the leaves regularly for pests such as spider mites or aphids and treat any problem as early as possible.",
    ]
    ok(i, "dash", "eight long bullets", "\n".join(f"- {t}" for t in tips))
    ok(i, "numbered", "eight numbered tips", "\n".join(f"{n}. {t}" for n, t in enumerate(tips, 1)))
    ok(
        i,
        "bold-lead",
        "bold lead-ins",
        "\n".join(f"* **Tip {n}:** {t}" for n, t in enumerate(tips, 1)),
    )
    bad(i, "too-short", "seven bullets", "\n".join(f"- {t}" for t in tips[:7]))
    bad(
        i,
        "too-short",
        "one short bullet",
        "\n".join(f"- {t}" for t in tips[:7]) + "\n- Talk to it.",
    )
    bad(i, "loop", "the same tip eight times", "\n".join(f"- {tips[0]}" for _ in range(8)))

    i = "instr-022"
    ok(i, "bold", "bold caps", "**HONEY**")
    ok(i, "exclaim", "caps with exclamation", "HONEY!")
    ok(i, "two-words", "two caps words", "RAW HONEY")
    bad(i, "format", "lowercase", "honey")
    bad(i, "too-long", "three words", "IT IS HONEY")
    bad(i, "wrong-value", "wax is not sweet food", "BEESWAX")


# ---------------------------------------------------------------- multilingual


def multilingual_rows() -> None:
    i = "ml-001"
    ok(i, "sentence", "a full Russian sentence", "Столица Франции — Париж.")
    ok(i, "period", "word with a period", "Париж.")
    ok(i, "quoted", "Russian quotes", "«Париж»")
    bad(i, "wrong-value", "another city", "Марсель")
    bad(i, "language", "answered in English", "The capital of France is Paris.")
    bad(i, "negation", "says it is not Paris", "Не Париж, а Лион.")

    i = "ml-002"
    ok(i, "quoted", "Russian quotes", "«Кошка спит на подоконнике.»")
    ok(i, "order", "another word order", "На подоконнике спит кот.")
    ok(i, "diminutive", "diminutive", "Котик спит на подоконнике.")
    bad(i, "negation", "the cat is NOT sleeping", "Кот не спит на подоконнике.")
    bad(i, "wrong-value", "the cat sleeps on the sofa", "Кот спит на диване.")
    bad(
        i,
        "extra-text",
        "explains after the translation in English",
        "Кот спит на подоконнике. (This is the translation of your sentence, which means the cat is resting by the window.)",
    )

    i = "ml-003"
    ok(i, "bold", "bold", "**Понедельник**")
    ok(i, "sentence", "a sentence", "По-русски это «понедельник».")
    ok(i, "caps", "capitalised with a period", "Понедельник.")
    bad(i, "wrong-value", "Sunday", "Воскресенье")
    bad(i, "negation", "names Monday and rejects it", "Это не понедельник, а вторник.")
    bad(i, "language", "transliterated", "Ponedelnik")

    i = "ml-004"
    ok(i, "plain", "enjoy reading", "I enjoy reading books in the evening.")
    ok(i, "quoted", "quoted", "“I love to read books in the evenings.”")
    ok(i, "plain", "at night", "I like reading books at night.")
    bad(i, "negation", "does not like reading", "I don't like reading books in the evenings.")
    bad(i, "wrong-value", "in the morning", "I love reading books in the morning.")
    bad(i, "wrong-value", "writing, not reading", "I like to write books in the evenings.")

    i = "ml-005"
    ok(i, "plain", "a sentence", "В году двенадцать месяцев.")
    ok(i, "digits", "digits", "Год состоит из 12 месяцев.")
    ok(i, "bold", "bold number", "В одном году **12** месяцев.")
    bad(i, "wrong-value", "eleven", "В году одиннадцать месяцев.")
    bad(i, "negation", "twelve named after не", "В году не двенадцать месяцев, а тринадцать.")
    bad(i, "language", "English", "A year has twelve months.")

    i = "ml-006"
    ok(i, "caps", "capitalised", "Зима, снег, холод")
    ok(i, "bullets", "bullet list", "- зима\n- снег\n- холод")
    ok(i, "adjective", "adjective for cold", "зима, снег, холодно")
    bad(i, "wrong-value", "summer instead of winter", "лето, снег, холод")
    bad(i, "language", "transliterated", "zima, sneg, kholod")
    bad(i, "wrong-value", "warm instead of cold", "зима, снег, тепло")

    i = "ml-007"
    ok(i, "plain", "9 heures", "La bibliothèque ouvre à 9 heures du matin.")
    ok(
        i,
        "quoted",
        "French quotes with a space",
        "« La bibliothèque ouvre à neuf heures du matin. »",
    )
    ok(i, "9h", "9h written together", "La bibliothèque ouvre à 9h du matin.")
    bad(i, "negation", "does not open", "La bibliothèque n'ouvre pas à neuf heures du matin.")
    bad(i, "wrong-value", "ten o'clock", "La bibliothèque ouvre à dix heures du matin.")
    bad(i, "wrong-value", "closes", "La bibliothèque ferme à 9 heures du matin.")

    i = "ml-008"
    ok(i, "plain", "a sentence", "Quand il fait beau, le ciel est bleu !")
    ok(i, "plain", "a sentence", "Par beau temps, le ciel est d'un bleu clair.")
    ok(i, "bold", "bold colour", "Le ciel est **bleu** quand il fait beau.")
    bad(i, "negation", "not blue", "Le ciel n'est pas bleu, il est blanc.")
    bad(i, "wrong-value", "grey", "Le ciel est gris.")
    bad(i, "language", "Spanish", "El cielo es azul cuando hace buen tiempo.")

    i = "ml-009"
    ok(i, "bold", "bold", "**Merci beaucoup !**")
    ok(i, "plain", "merci bien", "Merci bien.")
    ok(i, "plain", "mille fois", "Merci mille fois !")
    bad(i, "wrong-value", "just thank you", "Merci !")
    bad(i, "wrong-value", "Spanish", "Muchas gracias")
    bad(i, "wrong-value", "you're welcome", "De rien.")

    i = "ml-010"
    ok(i, "plain", "asleep", "The black cat is asleep under the table.")
    ok(i, "quoted", "quoted", "“The black cat sleeps beneath the table.”")
    ok(i, "plain", "sleeping", "The black cat is sleeping underneath the table.")
    bad(i, "negation", "is not sleeping", "The black cat is not sleeping under the table.")
    bad(i, "wrong-value", "on the table", "The black cat sleeps on top of the table.")
    bad(i, "wrong-value", "chair, not table", "The black cat sleeps under the chair.")

    i = "ml-011"
    ok(i, "bold", "bold", "**Pomme**")
    ok(i, "article", "with article", "La pomme.")
    ok(i, "sentence", "a short sentence", "On dit « pomme ».")
    bad(i, "wrong-value", "potato", "Pomme de terre.")
    bad(i, "wrong-value", "pear", "Poire.")
    bad(i, "negation", "names pomme and rejects it", "Ce n'est pas « pomme », c'est « poire ».")

    i = "ml-012"
    ok(i, "plain", "hat Verspätung", "Der Zug hat heute Verspätung.")
    ok(i, "quoted", "German quotes", "„Der Zug ist heute verspätet.“")
    ok(i, "plain", "kommt zu spät", "Der Zug kommt heute zu spät.")
    bad(i, "negation", "the train is not late", "Der Zug ist heute nicht verspätet.")
    bad(i, "wrong-value", "yesterday", "Der Zug war gestern verspätet.")
    bad(i, "wrong-value", "on time", "Der Zug ist heute pünktlich.")

    i = "ml-013"
    ok(i, "plain", "sieben", "Eine Woche hat sieben Tage.")
    ok(i, "bold", "bold number", "Eine Woche hat **7** Tage.")
    ok(i, "plain", "besteht aus", "Eine Woche besteht aus 7 Tagen.")
    bad(i, "wrong-value", "five", "Eine Woche hat fünf Tage.")
    bad(i, "negation", "not seven", "Eine Woche hat nicht sieben, sondern acht Tage.")
    bad(i, "language", "English", "A week has 7 days.")

    i = "ml-014"
    ok(i, "articles", "with articles", "das Haus, der Garten")
    ok(i, "bold", "bold", "**Haus**, **Garten**")
    ok(i, "mapped", "mapping", "house → Haus, garden → Garten")
    bad(i, "wrong-value", "French", "maison, jardin")
    bad(i, "wrong-value", "gardener", "Haus, Gärtner")
    bad(i, "wrong-value", "Dutch", "huis, tuin")

    i = "ml-015"
    ok(i, "plain", "playing", "The dog is playing in the park with a red ball.")
    ok(i, "quoted", "quoted", "“The dog plays with a red ball in the park.”")
    ok(i, "plain", "word order", "In the park, the dog plays with a red ball.")
    bad(i, "negation", "not playing", "The dog does not play in the park with a red ball.")
    bad(i, "wrong-value", "blue ball", "The dog plays in the park with a blue ball.")
    bad(i, "wrong-value", "garden, not park", "The dog plays in the garden with a red ball.")

    i = "ml-016"
    ok(i, "plain", "a sentence", "Die Hauptstadt Österreichs ist Wien.")
    ok(i, "period", "word and period", "Wien.")
    ok(i, "quoted", "German quotes", "„Wien“")
    bad(i, "wrong-value", "English name", "Vienna")
    bad(i, "wrong-value", "Graz", "Die Hauptstadt von Österreich ist Graz.")
    bad(i, "negation", "not Wien", "Nicht Wien, sondern Salzburg.")

    i = "ml-017"
    ok(i, "plain", "早晨", "我每天早晨喝茶。")
    ok(i, "quoted", "Chinese quotes", "“我每天早上都喝茶。”")
    ok(i, "plain", "一杯茶", "我每天早上喝一杯茶。")
    bad(i, "negation", "不喝茶", "我每天早上喝咖啡，不喝茶。")
    bad(i, "negation", "不喝", "我每天早上不喝茶。")
    bad(i, "wrong-value", "evening", "我每天晚上喝茶。")

    i = "ml-018"
    ok(i, "plain", "a sentence", "一年有12个月。")
    ok(i, "plain", "a short phrase", "十二个月。")
    ok(i, "bold", "bold", "一年共有**十二**个月。")
    bad(i, "wrong-value", "eleven", "一年有十一个月。")
    bad(i, "language", "English", "A year has 12 months.")
    bad(i, "negation", "not twelve", "一年不是十二个月，而是十三个月。")

    i = "ml-019"
    ok(i, "plain", "full-width comma", "水，火")
    ok(i, "plain", "ideographic comma with period", "水、火。")
    ok(i, "bold", "bold", "**水**，**火**")
    bad(i, "wrong-value", "earth instead of fire", "水，土")
    bad(i, "wrong-value", "wood instead of water", "木，火")
    bad(i, "language", "pinyin", "shui, huo")

    i = "ml-020"
    ok(i, "plain", "enjoy", "I enjoy reading books in the park.")
    ok(i, "quoted", "quoted", "“I like to read in the park.”")
    ok(i, "plain", "love", "I love reading in the park.")
    bad(i, "negation", "does not like", "I don't like reading in the park.")
    bad(i, "wrong-value", "library", "I like reading in the library.")
    bad(i, "wrong-value", "running", "I like running in the park.")


# ---------------------------------------------------------------- code, other graders


def code_rows() -> None:
    i = "code-003"
    ok(i, "fence", "output in a fence", "```\n3 1\n```")
    ok(i, "explain-after", "output then explanation", "3 1\n\n7 // 2 is 3 and 7 % 2 is 1.")
    ok(i, "bold", "bold", "**3 1**")
    bad(i, "wrong-value", "float division", "3.5 1")
    bad(i, "negation", "the right output named and rejected", "It prints 4 1, not 3 1.")
    bad(i, "wrong-value", "tuple", "(3, 1)")

    i = "code-005"
    ok(i, "fence", "fenced", "```\nabcabcabc\n```")
    ok(i, "bold", "bold", "**abcabcabc**")
    ok(i, "explain", "explained", "`abcabcabc` — string repetition joins three copies.")
    bad(i, "wrong-value", "spaces between copies", "abc abc abc")
    bad(i, "negation", "names it and rejects it", "Not abcabcabc; it raises a TypeError.")
    bad(i, "wrong-value", "list", "['abc', 'abc', 'abc']")

    i = "code-006"
    ok(i, "fence", "fenced", "```\n[3, 2, 1]\n```")
    ok(i, "bold", "bold", "**[3, 2, 1]**")
    ok(
        i,
        "explain",
        "explanation after",
        "[3, 2, 1] — sorted in descending order because of reverse=True.",
    )
    bad(i, "wrong-value", "ascending", "[1, 2, 3]")
    bad(
        i,
        "negation",
        "rejects the right output",
        "It prints [1, 2, 3], not [3, 2, 1], since sorted ignores reverse.",
    )
    bad(i, "wrong-value", "tuple", "(3, 2, 1)")

    i = "code-007"
    ok(i, "quoted", "quoted", '"object"')
    ok(i, "fence", "fenced", "```\nobject\n```")
    ok(
        i,
        "explain",
        "explanation naming null",
        "It prints `object`. Even though the value is null, typeof reports object (a historical bug).",
    )
    bad(i, "wrong-value", "null", 'It prints "null".')
    bad(i, "negation", "object named after not", 'It prints "null", not "object".')
    bad(i, "wrong-value", "undefined", "undefined")

    i = "code-009"
    ok(i, "fence", "fenced", "```\nFalse True\n```")
    ok(i, "bold", "bold", "**False True**")
    ok(
        i,
        "explain",
        "explanation",
        'False True — the empty string is falsy, but "0" is a non-empty string.',
    )
    bad(i, "wrong-value", "both False", "False False")
    bad(i, "wrong-value", "reversed", "True False")
    bad(i, "wrong-value", "JS-style lowercase", "false true")

    i = "code-011"
    ok(i, "fence", "fenced", "```\nyth\n```")
    ok(i, "bold", "bold", "**yth**")
    ok(i, "explain", "explanation", "yth (characters at indices 1, 2 and 3)")
    bad(i, "wrong-value", "off by one", "ytho")
    bad(i, "wrong-value", "from index 0", "Pyt")
    bad(i, "negation", "names yth and rejects it", "Not yth — it prints ytho.")

    i = "code-012"
    ok(i, "fence", "traceback in a fence", "```\nIndexError: list index out of range\n```")
    ok(
        i,
        "explain",
        "explanation",
        "It raises **IndexError**, because the last valid index is 2 and len(items) is 3.",
    )
    ok(i, "plain", "plain", "An IndexError is raised.")
    bad(i, "wrong-value", "KeyError", "It raises a KeyError.")
    bad(
        i,
        "negation",
        "says no IndexError",
        "It prints 3; there is no IndexError because len(items) is 3.",
    )
    bad(i, "wrong-value", "None", "It prints None.")

    i = "code-015"
    ok(i, "fence", "fenced", "```\n0\n```")
    ok(
        i,
        "explain",
        "explanation naming 3",
        "0 — `count + 1` computes a value but never stores it, so count stays 0 even though there are 3 a's.",
    )
    ok(i, "bold", "bold", "**0**")
    bad(i, "wrong-value", "three", "3")
    bad(i, "negation", "zero named and rejected", "It prints 3, not 0.")
    bad(i, "wrong-value", "error", "It raises a SyntaxError.")

    i = "code-016"
    ok(i, "fence", "fenced", "```\n[2, 5, 8]\n```")
    ok(i, "bold", "bold", "**[2, 5, 8]**")
    ok(i, "explain", "explanation", "[2, 5, 8] — start at 2, step 3, stop before 10.")
    bad(i, "wrong-value", "includes 11", "[2, 5, 8, 11]")
    bad(i, "wrong-value", "range object", "range(2, 10, 3)")
    bad(i, "negation", "names and rejects", "Not [2, 5, 8]; it prints [2, 5, 8, 11].")


def misc_rows() -> None:
    i = "math-016"
    ok(
        i,
        "boxed",
        "boxed LaTeX fraction",
        "Divide top and bottom by 6:\n\n$$\\frac{18}{24} = \\boxed{\\frac{3}{4}}$$",
    )
    ok(i, "bold", "bold", "**3/4**")
    ok(
        i,
        "stepwise",
        "working",
        "The GCD of 18 and 24 is 6. 18 ÷ 6 = 3 and 24 ÷ 6 = 4, so the answer is 3/4.",
    )
    ok(i, "dfrac", "\\dfrac", "$\\dfrac{3}{4}$")
    bad(i, "wrong-value", "only partly simplified", "9/12")
    bad(i, "hedge", "two candidates", "3/4 or 2/3")
    bad(i, "negation", "rejects 3/4", "It is not 3/4; it simplifies to 2/3.")
    bad(i, "wrong-boxed", "boxed 2/3", "$\\boxed{\\frac{2}{3}}$")

    i = "logic-018"
    ok(i, "boxed", "boxed", "4 red out of 10 marbles.\n\n$\\boxed{0.4}$")
    ok(
        i,
        "stepwise",
        "working",
        "There are 4 + 6 = 10 marbles and 4 are red, so P(red) = 4/10 = **0.4**.",
    )
    ok(i, "explain-after", "answer first", "0.4 (that's 4 out of 10)")
    ok(i, "leading-dot", "leading decimal point", ".4")
    bad(i, "wrong-value", "blue", "0.6")
    bad(i, "hedge", "two candidates", "0.4 or 0.6")
    bad(i, "negation", "rejects 0.4", "Not 0.4 — it is 0.6.")
    bad(i, "wrong-value", "red over blue", "4/6 ≈ 0.67")

    i = "logic-020"
    ok(i, "code", "backticks", "`ABCDE`")
    ok(i, "explain", "rule", "ABCDE — each item adds the next letter.")
    ok(i, "stepwise", "working", "AB has 2 letters, ABC 3, ABCD 4, so the next has 5: **ABCDE**")
    bad(i, "overshoot", "one too many", "ABCDEF")
    bad(i, "negation", "rejects ABCDE", "Not ABCDE; it is ABCDEF.")
    bad(i, "hedge", "two candidates", "ABCDE or ABCDEF")

    i = "factual-019"
    ok(i, "latex", "LaTeX subscript", "$H_2O$")
    ok(i, "latex", "LaTeX text subscript", "The formula is $\\text{H}_2\\text{O}$.")
    ok(i, "html", "unicode subscript in bold", "**H₂O**")
    ok(i, "explain", "explanation", "H2O — two hydrogen atoms bonded to one oxygen atom.")
    bad(i, "wrong-value", "hydrogen peroxide", "H₂O₂")
    bad(i, "negation", "rejects H2O", "It is not H2O; it is HO.")
    bad(i, "wrong-value", "carbon dioxide", "$CO_2$")


# ---------------------------------------------------------------- tool calls


def call(name: str, args: Any, content: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"tool_calls": [{"name": name, "arguments": args}]}
    if content is not None:
        out["content"] = content
    return out


def tool_rows() -> None:
    i, f = "tool-001", "get_weather"
    ok(
        i,
        "preamble",
        "a sentence before the call",
        call(
            f,
            {"city": "Lisbon", "unit": "celsius"},
            "Sure — checking the current weather in Lisbon.",
        ),
    )
    ok(i, "country", "city with country code", call(f, '{"city": "Lisbon, PT", "unit": "celsius"}'))
    ok(i, "native", "Portuguese name", call(f, {"city": "Lisboa", "unit": "celsius"}))
    bad(i, "wrong-arg", "unit missing though celsius was asked", call(f, {"city": "Lisbon"}))
    bad(i, "wrong-arg", "Porto, not Lisbon", call(f, {"city": "Porto", "unit": "celsius"}))
    bad(
        i,
        "no-call",
        "answers from memory",
        "It's usually around 20 °C in Lisbon this time of year.",
    )

    i, f = "tool-002", "convert_currency"
    ok(
        i,
        "string-number",
        "amount as a string",
        call(f, {"amount": "250", "from_currency": "USD", "to_currency": "EUR"}),
    )
    ok(
        i,
        "float",
        "amount as a float, lowercase codes",
        call(
            f,
            '{"amount": 250.00, "from_currency": "usd", "to_currency": "eur"}',
            "Let me convert that for you.",
        ),
    )
    ok(
        i,
        "order",
        "arguments in another order",
        call(f, {"to_currency": "EUR", "amount": 250, "from_currency": "USD"}),
    )
    bad(
        i,
        "wrong-arg",
        "amount off by ten",
        call(f, {"amount": 25, "from_currency": "USD", "to_currency": "EUR"}),
    )
    bad(
        i,
        "wrong-arg",
        "direction swapped",
        call(f, {"amount": 250, "from_currency": "EUR", "to_currency": "USD"}),
    )
    bad(i, "no-call", "guesses a rate", "250 USD is roughly 215 EUR at current rates.")

    i, f = "tool-003", "create_calendar_event"
    ok(
        i,
        "preamble",
        "a sentence before the call",
        call(
            f,
            {"title": "Dentist", "date": "2027-03-14", "time": "15:30"},
            "I'll add that to your calendar.",
        ),
    )
    ok(
        i,
        "string-args",
        "JSON-string arguments",
        call(f, '{"title":"Dentist","date":"2027-03-14","time":"15:30"}'),
    )
    ok(
        i,
        "extra-arg",
        "an optional extra argument",
        call(
            f, {"title": "Dentist", "date": "2027-03-14", "time": "15:30", "duration_minutes": 60}
        ),
    )
    bad(
        i,
        "wrong-arg",
        "wrong day",
        call(f, {"title": "Dentist", "date": "2027-03-15", "time": "15:30"}),
    )
    bad(
        i,
        "wrong-arg",
        "wrong hour",
        call(f, {"title": "Dentist", "date": "2027-03-14", "time": "13:30"}),
    )
    bad(
        i,
        "no-call",
        "claims it is done without a call",
        "Done! Your dentist appointment is in the calendar for 14 March 2027 at 15:30.",
    )

    i, f = "tool-004", "send_email"
    ok(
        i,
        "body",
        "a friendly body",
        call(
            f,
            {
                "to": "sam@example.org",
                "subject": "Lunch moved",
                "body": "Hi Sam,\n\nJust a heads-up: lunch is now at 1pm.\n\nThanks!",
            },
        ),
    )
    ok(
        i,
        "body",
        "13:00 in the body",
        call(
            f,
            {
                "to": "sam@example.org",
                "subject": "Lunch moved",
                "body": "Lunch has been moved to 13:00.",
            },
        ),
    )
    ok(
        i,
        "preamble",
        "a sentence before the call",
        call(
            f,
            {
                "to": "sam@example.org",
                "subject": "Lunch moved",
                "body": "Hi Sam, lunch is now at 1 p.m.",
            },
            "Sending the email now.",
        ),
    )
    bad(
        i,
        "wrong-arg",
        "the body gives the wrong time",
        call(
            f,
            {
                "to": "sam@example.org",
                "subject": "Lunch moved",
                "body": "Hi Sam, lunch is now at 12pm.",
            },
        ),
    )
    bad(
        i,
        "wrong-arg",
        "no body at all",
        call(f, {"to": "sam@example.org", "subject": "Lunch moved"}),
    )
    bad(
        i,
        "wrong-arg",
        "wrong address",
        call(
            f, {"to": "sam@example.net", "subject": "Lunch moved", "body": "Lunch is now at 1pm."}
        ),
    )

    i, f = "tool-005", "search_products"
    ok(i, "under", "a price just under 80", call(f, {"query": "running shoes", "max_price": 79.99}))
    ok(
        i,
        "string-args",
        "JSON-string arguments",
        call(
            f,
            '{"query": "running shoes", "max_price": 80}',
            "Searching for running shoes under $80.",
        ),
    )
    ok(i, "singular", "singular query", call(f, {"query": "running shoe", "max_price": 80}))
    bad(i, "wrong-arg", "price cap too high", call(f, {"query": "running shoes", "max_price": 120}))
    bad(i, "wrong-arg", "lost the word running", call(f, {"query": "shoes", "max_price": 80}))
    bad(
        i,
        "no-call",
        "recommends from memory",
        "Try the Nike Revolution 6; it usually costs about $65.",
    )

    i, f = "tool-006", "set_timer"
    ok(i, "string-number", "minutes as a string", call(f, {"minutes": "12", "label": "pasta"}))
    ok(
        i,
        "label",
        "capitalised label",
        call(f, {"minutes": 12, "label": "Pasta"}, "Starting a 12-minute pasta timer."),
    )
    ok(i, "float", "minutes as a float", call(f, '{"minutes": 12.0}'))
    bad(i, "wrong-arg", "seconds passed as minutes", call(f, {"minutes": 720, "label": "pasta"}))
    bad(i, "wrong-arg", "two minutes", call(f, {"minutes": 2, "label": "pasta"}))
    bad(i, "no-call", "claims the timer is set", "Timer set for 12 minutes — enjoy your pasta!")

    i, f = "tool-007", "get_stock_price"
    ok(
        i,
        "preamble",
        "a sentence before the call",
        call(f, {"ticker": "NVDA"}, "Let me fetch the latest NVDA price."),
    )
    ok(i, "string-args", "JSON-string arguments", call(f, '{"ticker":"NVDA"}'))
    ok(i, "lower", "lowercase ticker", call(f, {"ticker": "nvda"}))
    bad(i, "wrong-arg", "another ticker", call(f, {"ticker": "AMD"}))
    bad(i, "no-call", "an invented price", "NVDA is trading at about $135 per share.")
    bad(i, "wrong-arg", "company name, not ticker", call(f, {"ticker": "Nvidia Corporation"}))

    i, f = "tool-008", "translate_text"
    ok(i, "code", "language code", call(f, {"text": "good luck", "target_language": "es"}))
    ok(
        i,
        "native",
        "native language name",
        call(f, {"text": "Good luck", "target_language": "Español"}),
    )
    ok(
        i,
        "preamble",
        "a sentence before the call",
        call(
            f, {"text": "good luck", "target_language": "spanish"}, "I'll use the translation tool."
        ),
    )
    bad(i, "wrong-arg", "French", call(f, {"text": "good luck", "target_language": "French"}))
    bad(i, "no-call", "translates itself though the tool was asked for", "¡Buena suerte!")
    bad(i, "wrong-arg", "wrong text", call(f, {"text": "good night", "target_language": "Spanish"}))

    i, f = "tool-009", "get_route"
    ok(
        i,
        "country",
        "with countries",
        call(f, {"origin": "Lyon, France", "destination": "Genève", "mode": "driving"}),
    )
    ok(
        i,
        "string-args",
        "JSON-string arguments",
        call(
            f,
            '{"origin":"Lyon","destination":"Geneva","mode":"driving"}',
            "Checking the driving route.",
        ),
    )
    ok(
        i,
        "order",
        "arguments in another order",
        call(f, {"mode": "driving", "destination": "Geneva", "origin": "Lyon"}),
    )
    bad(
        i,
        "wrong-arg",
        "walking",
        call(f, {"origin": "Lyon", "destination": "Geneva", "mode": "walking"}),
    )
    bad(
        i,
        "wrong-arg",
        "swapped",
        call(f, {"origin": "Geneva", "destination": "Lyon", "mode": "driving"}),
    )
    bad(i, "no-call", "answers from memory", "It's about a 1 hour 45 minute drive.")

    i, f = "tool-010", "book_table"
    ok(
        i,
        "curly",
        "curly apostrophe",
        call(f, {"restaurant": "Luigi’s", "party_size": 4, "time": "19:00"}),
    )
    ok(
        i,
        "string-number",
        "party size as a string",
        call(f, {"restaurant": "Luigi's", "party_size": "4", "time": "19:00"}, "Booking now."),
    )
    ok(
        i,
        "string-args",
        "JSON-string arguments",
        call(f, '{"restaurant": "Luigi\'s", "party_size": 4, "time": "19:00"}'),
    )
    bad(
        i,
        "wrong-arg",
        "party of 2",
        call(f, {"restaurant": "Luigi's", "party_size": 2, "time": "19:00"}),
    )
    bad(
        i,
        "wrong-arg",
        "7 in the morning",
        call(f, {"restaurant": "Luigi's", "party_size": 4, "time": "07:00"}),
    )
    bad(i, "no-call", "claims the booking", "Your table for 4 at Luigi's is booked for 19:00!")

    i, f = "tool-011", "set_thermostat"
    ok(i, "float", "float temperature", call(f, {"room": "bedroom", "temperature": 21.0}))
    ok(
        i,
        "capital",
        "capitalised room",
        call(f, {"room": "Bedroom", "temperature": 21}, "Warming up the bedroom."),
    )
    ok(
        i,
        "string-number",
        "temperature as a string",
        call(f, '{"room": "bedroom", "temperature": "21"}'),
    )
    bad(i, "wrong-arg", "wrong temperature", call(f, {"room": "bedroom", "temperature": 25}))
    bad(i, "wrong-arg", "wrong room", call(f, {"room": "kitchen", "temperature": 21}))
    bad(i, "no-call", "claims it is done", "Done — the bedroom is now set to 21 degrees.")

    i, f = "tool-012", "get_weather"
    ok(
        i,
        "country",
        "city, state and country",
        call(f, {"city": "Chicago, IL, USA", "unit": "fahrenheit"}),
    )
    ok(i, "country", "city and country", call(f, {"city": "Chicago, US", "unit": "fahrenheit"}))
    ok(
        i,
        "preamble",
        "a sentence before the call",
        call(f, {"city": "Chicago", "unit": "fahrenheit"}, "Let me check Chicago's weather."),
    )
    bad(
        i,
        "wrong-arg",
        "celsius although Fahrenheit was asked",
        call(f, {"city": "Chicago", "unit": "celsius"}),
    )
    bad(i, "wrong-arg", "unit missing", call(f, {"city": "Chicago"}))
    bad(
        i,
        "no-call",
        "a guess without a call",
        "It's probably around 40 °F, so yes, bring a jacket.",
    )

    i, f = "tool-013", "lookup_definition"
    ok(i, "capital", "capitalised word", call(f, {"word": "Petrichor"}, "Let me look that up."))
    ok(i, "string-args", "JSON-string arguments", call(f, '{"word": "petrichor"}'))
    ok(i, "space", "stray spaces", call(f, {"word": " petrichor "}))
    bad(i, "wrong-arg", "misspelt", call(f, {"word": "petricor"}))
    bad(
        i,
        "no-call",
        "answers from memory although asked to look it up",
        "Petrichor is the pleasant earthy smell after rain.",
    )
    bad(i, "wrong-arg", "another word", call(f, {"word": "rain"}))

    i = "tool-014"
    ok(i, "bold", "bold", "9 × 7 = **63**")
    ok(i, "latex", "LaTeX", "$9 \\times 7 = 63$")
    ok(i, "content-object", "content in an object", {"content": "The product is 63."})
    bad(i, "wrong-value", "wrong product", "9 times 7 is 54.")
    bad(i, "tool", "a needless tool call", call("set_timer", {"minutes": 63}))
    bad(i, "hedge", "two answers", "63 or 56")

    i = "tool-015"
    ok(i, "plain", "a short goodbye", "You're welcome! Have a great day.")
    ok(i, "plain", "a short goodbye", "Anytime — take care!")
    ok(i, "plain", "a short goodbye", "Happy to help. See you next time!")
    bad(
        i,
        "tool",
        "emails the user",
        call("send_email", {"to": "me", "subject": "Thanks", "body": "You're welcome"}),
    )
    bad(i, "tool", "sets a timer for no reason", call("set_timer", {"minutes": 1}, "Bye!"))
    bad(i, "empty", "no content at all", {"content": ""})


# ---------------------------------------------------------------- long context
# id: (answer, the needle restated, distractor answer)
LONG: dict[str, tuple[str, str, str]] = {
    "long-001": (
        "AMBER-HERON-42",
        "The override passphrase for the north loading gate is",
        "COPPER-FINCH-17",
    ),
    "long-002": (
        "PLUM 318",
        "The spare key to the acid cabinet is kept inside the box labelled",
        "FIG 207",
    ),
    "long-003": ("58193", "The new combination for the church safe is", "27460"),
    "long-004": (
        "4471",
        "The maintenance engineer on call tonight, Solveig Tarrant, is on extension",
        "3350",
    ),
    "long-005": ("violet", "The emergency generator fuel tap is painted", "orange"),
    "long-006": ("Wilhelmina Crabtree", "The autumn scarecrow contest was won by", "Albert Nye"),
    "long-007": (
        "TANGERINE-880",
        "The courier will collect the sealed sample case using pickup code",
        "LIME-519",
    ),
    "long-008": ("7,340", "The village's reserve fund after the roof repairs stands at", "4,125"),
}


def long_rows() -> None:
    for item, (ans, needle, wrong) in LONG.items():
        ok(item, "bold", "bold answer", f"**{ans}**")
        ok(item, "sentence", "the needle restated", f"{needle} {ans}.")
        ok(
            item,
            "preamble",
            "preamble and code span",
            f"Sure! According to the document, the answer is `{ans}`.",
        )
        bad(item, "distractor", "the other record's value", f"{needle} {wrong}.")
        bad(item, "hedge", "both values", f"It's either {ans} or {wrong}.")
        bad(
            item,
            "dump",
            "both records dumped without choosing",
            f"The document mentions {ans} and {wrong}.",
        )
        bad(item, "refusal", "claims it is not there", "The document does not mention this.")


# ---------------------------------------------------------------- structured output


def _set(value: Any, path: str, new: Any) -> Any:
    out = json.loads(json.dumps(value))
    parts = path.split(".")
    cur = out
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    last = parts[-1]
    if isinstance(cur, list):
        cur[int(last)] = new
    else:
        cur[last] = new
    return out


def _wrong(v: Any) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return v + "s" if v.isalpha() else v[::-1]
    return None


STRUCT_SPECIFIC: dict[str, list[tuple[Any, bool, str, str]]] = {
    "struct-006": [
        (
            '[{"colour": "red", "position": 1}, {"colour": "blue", "position": 2}, {"colour": "green", "position": 3}]',
            False,
            "wrong-value",
            "a blue middle light",
        ),
        (
            '[{"colour": "red", "position": 1}, {"colour": "yellow", "position": 2}, {"colour": "green", "position": 3}]',
            True,
            "synonym",
            "yellow for amber",
        ),
    ],
    "struct-017": [
        (
            '{"sentiment": "positive", "confidence": 95}',
            False,
            "wrong-value",
            "confidence outside 0-1",
        ),
        ('{"sentiment": "positive", "confidence": 0.9}', True, "value", "another confidence"),
    ],
    "struct-022": [
        (
            '{"name": "Rosa Lind", "phone": "+46 70 123 45 76"}',
            False,
            "wrong-value",
            "digits swapped in the phone number",
        ),
        ('{"name": "Rosa Lind", "phone": "+46701234567"}', True, "spacing", "phone without spaces"),
    ],
    "struct-009": [
        (
            '{"order_id": "A-1043", "items": [{"name": "notebook", "quantity": 2, "unit_price": 3.0}, {"name": "pen", "quantity": 1, "unit_price": 1.5}], "total": 7.5}',
            True,
            "compact",
            "singular names",
        ),
    ],
    "struct-003": [("[2, 4, 6, 8, 10, 12]", False, "overshoot", "six numbers")],
    "struct-008": [('["Apples", "Pears", "Plums"]', True, "case", "capitalised")],
}


def structured_rows(items: dict[str, dict[str, Any]]) -> None:
    for item_id, item in items.items():
        if item["category"] != "structured":
            continue
        first = item["accept"][0]
        value = json.loads(first)
        ok(
            item_id,
            "compact",
            "compact JSON",
            json.dumps(value, separators=(",", ":"), ensure_ascii=False),
        )
        ok(
            item_id,
            "fence-4",
            "fenced, four-space indent",
            "```json\n" + json.dumps(value, indent=4, ensure_ascii=False) + "\n```",
        )
        if isinstance(value, dict):
            flipped = dict(reversed(list(value.items())))
            ok(
                item_id,
                "reordered",
                "keys in another order",
                json.dumps(flipped, ensure_ascii=False),
            )
        else:
            ok(item_id, "fence-plain", "a plain fence", "```\n" + json.dumps(value) + "\n```")
        vals = item["grader"].get("values", {})
        for path, want in list(vals.items())[:2]:
            wrong = _wrong(want)
            if wrong is None:
                continue
            bad(
                item_id,
                "wrong-value",
                f"{path} changed",
                json.dumps(_set(value, path, wrong), ensure_ascii=False),
            )
        bad(
            item_id,
            "extra-text",
            "a preamble although JSON only was asked",
            "Here is the JSON you asked for:\n\n```json\n"
            + json.dumps(value, indent=2, ensure_ascii=False)
            + "\n```",
        )
        bad(
            item_id,
            "truncated",
            "cut off mid-object",
            json.dumps(value, indent=2, ensure_ascii=False)[: max(8, len(first) // 2)],
        )
        for answer, passed, style, why in STRUCT_SPECIFIC.get(item_id, []):
            add(item_id, answer, passed, style, why)


# ---------------------------------------------------------------- degenerate answers


def degenerate_rows() -> None:
    bad(
        "math-001",
        "reasoning-only",
        "the answer sits only in the reasoning channel",
        {"content": "", "reasoning": "5 + 3 = 8"},
    )
    bad(
        "factual-001",
        "reasoning-only",
        "the answer sits only in the reasoning channel",
        {"content": None, "reasoning": "The capital of Canada is Ottawa."},
    )
    bad(
        "math-003",
        "garble",
        "token soup",
        "72 ,,..,,,,ß,,.s,ß,gen,gen,,ß,,.s,ß,gen,gen ß,,.s,ß,gen",
    )
    bad(
        "factual-004",
        "garble",
        "multilingual soup",
        "Jupiter Mh giàu され rodas reliablyacheteurδε Są giàu され rodas δε Są",
    )
    bad(
        "canary-001",
        "garble",
        "a flood",
        "The blue kettle sings at dawn!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
    )
    bad(
        "logic-005",
        "garble",
        "a loop of fragments",
        "Yes carecarecarecarecarecarecarecarecarecarecarecarecarecarecare",
    )
    bad(
        "code-001",
        "garble",
        "dummy weights",
        "11 loguploadloguploadloguploadloguploadloguploadloguploadlogupload",
    )
    bad(
        "ml-001",
        "garble",
        "pad tokens",
        "Париж<pad><pad><pad><pad><pad><pad><pad><pad><pad><pad><pad><pad>",
    )
    bad(
        "long-001",
        "garble",
        "collapse after a correct start",
        "AMBER-HERON-42 ' 42.\nC# | C# | C# | C# | C# | C# | C# | C# | C# | C# |",
    )
    bad("instr-012", "garble", "hash flood", "OK ################################################")


def main() -> None:
    items = {}
    with (ROOT / "suites" / "core" / "items.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                it = json.loads(line)
                items[it["id"]] = it
    numeric_rows()
    named_rows()
    lettered_rows()
    yesno_rows()
    canary_rows()
    instruction_rows()
    multilingual_rows()
    code_rows()
    misc_rows()
    tool_rows()
    long_rows()
    structured_rows(items)
    degenerate_rows()
    unknown = {r["id"] for r in ROWS} - set(items)
    assert not unknown, unknown
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as fh:
        for row in ROWS:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    per_item: dict[str, int] = {}
    for r in ROWS:
        per_item[r["id"]] = per_item.get(r["id"], 0) + 1
    thin = sorted(i for i in items if per_item.get(i, 0) < 5)
    good = sum(r["passed"] for r in ROWS)
    print(f"{len(ROWS)} rows ({good} correct, {len(ROWS) - good} wrong) over {len(per_item)} items")
    if thin:
        print("items with fewer than 5 rows:", ", ".join(thin))


if __name__ == "__main__":
    main()
