"""A reply naming a program's right output for a false reason about the code fails; a true
reason, a denied misbelief, or one the reply turns from, does not."""

from __future__ import annotations

import pytest
from support.core_replies import grade_reply

from evalrun.grading.code_claims import false_code_claim

CASES = [
    # assignment binds, it does not copy
    (
        "code-002",
        "Because y = x creates a copy, appending to y leaves x unchanged, so it prints 4.",
        False,
    ),
    ("code-002", "4 — y is a copy of x, but len counts the original list.", False),
    ("code-002", "It prints 4. x and y are two separate lists, yet both grew.", False),
    ("code-002", "It prints 4, because y and x are the same list.", True),
    ("code-002", "4. `y = x` does not create a copy, so appending to y changes x.", True),
    ("code-002", "4 — if y were a copy, x would be unchanged and it would print 3.", True),
    ("code-002", "You might think y is a copy, but it is the same list: 4.", True),
    ("code-002", "4 (y isn't a copy; both names point to one list)", True),
    # an expression on its own line assigns nothing
    ("code-015", 'count + 1 increments count each time an "a" is seen, so it prints 0.', False),
    ("code-015", "0 — the loop adds 1 to count three times but prints before.", False),
    ("code-015", "0, because `count + 1` never updates count.", True),
    (
        "code-015",
        "It prints 0: count + 1 computes a value and throws it away; count is never incremented.",
        True,
    ),
    ("code-015", "0", True),
    # range(n) stops before n
    ("code-004", "10 — range(5) goes up to 5, and the sum is 10.", False),
    ("code-004", "It prints 10 (0 + 1 + 2 + 3 + 4 = 10; range(5) stops before 5).", True),
    ("code-004", "10, since range(5) gives 0 to 4.", True),
    # typeof null
    (
        "code-007",
        '"object" is what typeof returns for undefined; for null it prints "null".',
        False,
    ),
    ("code-007", "object — typeof null is a long-standing quirk; many expect it to be null.", True),
    (
        "code-007",
        'It prints "object". People often think typeof null is null, but it isn\'t.',
        True,
    ),
    # indices start at 0
    ("code-012", "IndexError: Python lists are 1-indexed, so items[3] is past the end.", False),
    ("code-012", "IndexError — indexing starts at 0, so the last index is 2.", True),
    ("code-011", "yth — indexing starts at 1, so [1:4] is y, t, h.", False),
    ("code-011", "yth (indices 1, 2 and 3; the end index is excluded)", True),
    # a space is a character
    ("code-001", "11 — not counting the space.", False),
    ("code-001", "11: ten letters and the space.", True),
    # assigning to a key replaces its value
    ("code-014", '7 — d["a"] = 5 adds a new key, so the values sum to 7.', False),
    ("code-014", "7 (5 replaces 1, and 5 + 2 = 7).", True),
    # retracted misbeliefs, more language facts, and a tuple for what print writes
    # retracted misbelief: judged by what it ends on
    ("code-002", "3, since y is a copy... no, y is the same list, not a copy. 4", True),
    (
        "code-001",
        "11, because len counts the 10 letters plus the terminating null character.",
        False,
    ),
    ("code-001", "11 — ten letters and one space; Python strings carry no terminator.", True),
    ("code-006", "[3, 2, 1], because sorted() sorts the original list in place.", False),
    ("code-006", "[3, 2, 1]: sorted() returns a new list in descending order.", True),
    ("code-007", "object, because null is an instance of Object.", False),
    ("code-007", "object (though null instanceof Object is false).", True),
    (
        "code-009",
        "False True, because bool() on a string checks whether it is a valid number.",
        False,
    ),
    ("code-009", "False True: an empty string is falsy, any other string truthy.", True),
    ("code-009", "(False, True)", False),
    ("code-009", "It prints (False, True).", False),
    ("code-009", "False True", True),
    ("code-014", "7, since d.values() returns the values in reverse order (2 + 5).", False),
    (
        "code-015",
        '0, because the comparison is case-sensitive and "banana" contains no "a".',
        False,
    ),
    ("code-015", '0: "banana" has three a\'s, but count + 1 is never stored.', True),
    ("code-006", "[3, 2, 1]", True),
    # print(a, b) writes one line: one value a line is two prints' output
    ("code-009", "False\nTrue", False),
    ("code-003", "Output:\n```\n3\n1\n```", False),
    ("code-003", "3 1\n\n7 // 2 is 3\n7 % 2 is 1", True),
    # the last sentence stating the output is the reply's word on it
    ("code-007", '"null" — no wait, it\'s an object type? It prints null.', False),
    ("code-007", "It prints null? No: it prints object.", True),
    # floor division, the remainder, true division, slices, repeated strings, stop values
    ("code-003", "3 1, because // rounds to the nearest whole number.", False),
    ("code-003", "3 1 — // is regular division and % gives the quotient.", False),
    ("code-003", "3 1: 7 // 2 is 3.5 rounded down... it prints 3 1.", False),
    ("code-003", "3 1 — // is floor division (3) and % gives the remainder (1).", True),
    (
        "code-003",
        "3 1. // floors rather than rounding to the nearest, and % is the remainder, not the quotient.",
        True,
    ),
    ("code-013", "2.5, because / is integer division but 10 and 4 are floats.", False),
    ("code-013", "2.5: / always returns a float in Python 3, even for integers.", True),
    ("code-011", "yth, since the slice [1:4] includes the character at index 4.", False),
    ("code-011", "yth (indices 1 to 3 inclusive)", True),
    ("code-005", "abcabcabc — the copies are joined with nothing between them.", True),
    ("code-005", "abcabcabc, the three copies separated by spaces.", False),
    ("code-016", "[2, 5, 8], since range(2, 10, 3) goes up to 10.", False),
    ("code-016", "[2, 5, 8] — range(2, 10, 3) stops before 10, so 11 is never reached.", True),
    ("code-016", "[2, 5, 8] — counting up from 2 in steps of 3 while below 10.", True),
    ("code-009", 'False True: "" is None, so it is falsy.', False),
    ("code-009", "False True — an empty string is falsy, not None.", True),
    ("code-014", "7 — sum adds the keys' values: 5 + 2.", True),
    ("code-014", "7, because sum(d.values()) adds the keys.", False),
    # true reasons in the shapes the catalogue reads: a purpose, an ought, a denial, an aside
    ("code-015", "0 — `count + 1` should be `count += 1` to increment count.", True),
    (
        "code-015",
        "0. To update count you need count += 1; the expression alone is discarded.",
        True,
    ),
    ("code-015", "0, since the line meant to increment the counter never assigns.", True),
    (
        "code-015",
        "It prints 0 because count is never updated: `count + 1` is evaluated and thrown away.",
        True,
    ),
    ("code-002", "4, because y = x doesn't make a copy — both names refer to one list.", True),
    ("code-002", "4. To get a separate list you would write y = x.copy().", True),
    ("code-002", "4: y is an alias, not a copy, so x is modified too.", True),
    ("code-002", "4 — no copy is made; x and y are the same object.", True),
    ("code-002", "4 (x is not unchanged: y.append changes the shared list)", True),
    ("code-004", "10 — range(5) yields 0 through 4, so 0+1+2+3+4 = 10.", True),
    ("code-004", "10. Note that range(5) goes up to 4, not 5.", True),
    ("code-004", "10, because range(5) is 0, 1, 2, 3, 4 (5 is excluded).", True),
    (
        "code-012",
        "IndexError: list index out of range — lists are 0-indexed, so the last valid index is 2.",
        True,
    ),
    ("code-012", "IndexError. Unlike 1-indexed languages such as Lua, Python starts at 0.", True),
    ("code-011", "yth: the slice starts at index 1 and stops before index 4.", True),
    ("code-001", "11 — the space counts as a character.", True),
    ("code-001", "11 (len counts every character, spaces included)", True),
    ("code-007", "object — a historical bug; null is not actually an object.", True),
    (
        "code-007",
        '"object". It\'s a quirk: typeof null returns "object" even though null is a primitive.',
        True,
    ),
    (
        "code-009",
        "False True — bool() only checks whether the string is empty, not whether it looks like a number.",
        True,
    ),
    (
        "code-006",
        "[3, 2, 1]. sorted() returns a new list; it does not sort in place like list.sort().",
        True,
    ),
    (
        "code-014",
        '7 — assigning d["a"] = 5 replaces the old value 1, it does not add a new key.',
        True,
    ),
    ("code-015", '0. Even though "banana" has three a\'s, count never changes.', True),
    (
        "code-009",
        'False True. "0" is a non-empty string, so it is truthy even though 0 is falsy.',
        True,
    ),
    # written probes: false reasons in the shapes chat models use
    ("code-001", "11 — len counts the characters but not the space.", False),
    ("code-001", "11, because len skips whitespace.", False),
    ("code-001", "11: ten letters plus the terminating null character.", False),
    ("code-001", "11 (len returns the number of words plus letters)", False),
    ("code-001", "11. The space is ignored by len, so it's the 11 letters.", False),
    ("code-002", "4, since append returns the new list and y is reassigned.", False),
    ("code-002", "4 — y = x makes a shallow copy that still shares the list.", False),
    ("code-002", "4. y gets a copy of x, and append adds 4 to both copies.", False),
    ("code-002", "4: the copy y shares its elements with x.", False),
    ("code-003", "3 1 — 7 // 2 rounds 3.5 to the nearest integer.", False),
    ("code-003", "3 1, since % returns the quotient.", False),
    ("code-003", "3 1: // is float division truncated, and % gives the percentage.", False),
    ("code-003", "3 1 (7 // 2 rounds up to 3)", False),
    ("code-004", "10 — range(5) yields 1, 2, 3, 4.", False),
    ("code-004", "10, because range(5) counts from 1 to 4.", False),
    ("code-004", "10: the loop adds 0 through 5 except 5... so 0+1+2+3+4.", False),
    ("code-004", "10. range(5) includes 5, but the loop stops early.", False),
    ("code-005", "abcabcabc, a list of three 'abc' strings.", False),
    ("code-005", "abcabcabc (multiplying a string repeats each character three times)", False),
    ("code-006", "[3, 2, 1] — sorted sorts the list in place and returns it.", False),
    ("code-006", "[3, 2, 1]; sorted returns a tuple.", False),
    ("code-006", "[3, 2, 1], because reverse=True reverses the original order [3, 1, 2].", False),
    ("code-007", "object — null is an object in JavaScript.", False),
    ("code-007", "\"object\", since typeof returns 'object' for every primitive.", False),
    ("code-008", "C, because % is the division operator.", False),
    ("code-008", "C — n % 2 is 0 for odd numbers.", False),
    ("code-008", "C. n % 2 == 1 is true for even numbers, so it must compare with 0.", False),
    ("code-009", 'False True — "0" is converted to the number 0 first, which is True.', False),
    ("code-009", "False True: the empty string is None.", False),
    (
        "code-009",
        'False True. bool() of any string is True except "" and "0"... no wait, "0" is True.',
        False,
    ),
    ("code-010", "120 — the base case returns 0.", False),
    ("code-010", "120, the sum of 1 through 5.", False),
    ("code-010", "120: f(5) = 5 + 4 + 3 + 2 + 1 times 8.", False),
    ("code-011", "yth — characters 1 through 4 inclusive.", False),
    ("code-011", "yth, because Python strings are 1-indexed.", False),
    ("code-011", "yth: the slice [1:4] takes three characters starting at 'P'.", False),
    ("code-012", "IndexError, because len(items) is 4.", False),
    ("code-012", "IndexError: list index out of range — Python lists start at index 1.", False),
    ("code-013", "2.5 — in Python 3 / does integer division.", False),
    ("code-013", "2.5 (Python 2 prints the same).", False),
    ("code-013", "2.5, because both operands are floats.", False),
    ("code-014", '7 — d["a"] = 5 adds a second key "a".', False),
    (
        "code-014",
        "7: the dictionary now holds a: 1, a: 5 and b: 2, but sum uses the latest.",
        False,
    ),
    ("code-015", "0 — banana has no lowercase a.", False),
    ("code-015", '0, because ch == "a" is never true.', False),
    ("code-015", "0: the loop never runs.", False),
    ("code-016", "[2, 5, 8], counting by 2 from 2.", False),
    ("code-016", "[2, 5, 8]: range(2, 10, 3) starts at 3.", False),
    # and true ones, which must pass
    ("code-001", "11 — len() counts every character, including the space.", True),
    ("code-001", "11 (5 + 1 + 5)", True),
    ("code-001", "The output is 11: the string has 11 characters (the space counts too).", True),
    (
        "code-002",
        "4. y = x doesn't copy the list; y and x refer to the same list, so appending to y also changes x.",
        True,
    ),
    (
        "code-002",
        "4 — both names point to the same list object. If you wanted a copy you'd use x.copy() or x[:].",
        True,
    ),
    (
        "code-002",
        "4\n\nExplanation: `y = x` makes y another reference to the "
        "same list, so `y.append(4)` modifies x as well; len(x) is 4.",
        True,
    ),
    ("code-002", "It prints 4, because the list now holds [1, 2, 3, 4].", True),
    (
        "code-002",
        "4. Lists are mutable and assignment only creates a new "
        "reference, not a new list; append mutates in place and returns None.",
        True,
    ),
    ("code-003", "3 1\n\n7 // 2 is floor division (3) and 7 % 2 is the remainder (1).", True),
    ("code-003", "3 1 — integer division rounds down to 3 and the remainder is 1.", True),
    ("code-003", "`3 1`: 7 divided by 2 is 3.5, floored to 3; the remainder is 1.", True),
    ("code-004", "10\n\nrange(5) produces 0, 1, 2, 3, 4 and their sum is 10.", True),
    ("code-004", "10 — the loop adds 0 + 1 + 2 + 3 + 4.", True),
    (
        "code-005",
        "abcabcabc — string multiplication repeats the whole string three times with no separator.",
        True,
    ),
    ("code-005", 'abcabcabc\n\n("abc" * 3 concatenates three copies of "abc".)', True),
    (
        "code-006",
        "[3, 2, 1] — sorted() returns a new list in descending order because reverse=True.",
        True,
    ),
    (
        "code-006",
        "[3, 2, 1]\n\nsorted returns a list, not a tuple; reverse=True sorts from largest to smallest.",
        True,
    ),
    (
        "code-007",
        'object — typeof null returns "object", a '
        "long-standing bug in JavaScript; null is actually a primitive.",
        True,
    ),
    (
        "code-007",
        '"object". Although null is a primitive value, '
        "typeof reports it as an object for historical reasons.",
        True,
    ),
    ("code-008", "C. n % 2 is 0 for even numbers, so the comparison should be with 0.", True),
    (
        "code-008",
        "C — the remainder of an even number divided by 2 is 0, not 1; % is the modulo operator.",
        True,
    ),
    (
        "code-009",
        'False True\n\nThe empty string is falsy; "0" is a '
        "non-empty string, so it is truthy (it is not converted to a number).",
        True,
    ),
    (
        "code-009",
        'False True — bool("") is False because the string is empty, '
        'and bool("0") is True because any non-empty string is truthy.',
        True,
    ),
    ("code-010", "120 — f computes 5! = 5 × 4 × 3 × 2 × 1 = 120; the base case returns 1.", True),
    ("code-010", "120\n\nf(5) = 5 * f(4) = 5 * 4 * f(3) = ... = 120.", True),
    (
        "code-011",
        "yth — the slice [1:4] takes indices 1, 2 and 3 (the end index is excluded).",
        True,
    ),
    (
        "code-011",
        "yth. Indexing starts at 0, so index 1 is 'y', and the slice stops before index 4 ('o').",
        True,
    ),
    ("code-011", "yth: characters at positions 1 to 3 inclusive, starting at 'y'.", True),
    ("code-011", "yth. In Python, slicing starts at index 1 here and stops before index 4.", True),
    (
        "code-012",
        "IndexError: list index out of range. len(items) is 3, and the valid indices are 0, 1 and 2.",
        True,
    ),
    (
        "code-012",
        "It raises IndexError, because items[3] is past the end: Python lists start at index 0.",
        True,
    ),
    (
        "code-013",
        "2.5 — in Python 3 the / operator always returns a float (Python 2 would print 2).",
        True,
    ),
    ("code-013", "2.5. / is true division even though both operands are integers.", True),
    (
        "code-014",
        '7\n\nAfter the assignment d is {"a": 5, "b": 2}; sum(d.values()) = 5 + 2 = 7.',
        True,
    ),
    (
        "code-015",
        "0 — `count + 1` computes a value but never assigns "
        'it, so count stays 0 even though "banana" has three a\'s.',
        True,
    ),
    (
        "code-015",
        '0. The condition ch == "a" is true three times, but count + 1 doesn\'t update count.',
        True,
    ),
    ("code-016", "[2, 5, 8] — range starts at 2, steps by 3, and stops before 10.", True),
    (
        "code-016",
        "[2, 5, 8]\n\nStarting from 2 and counting by 3: 2, 5, 8 (11 would pass the stop value 10).",
        True,
    ),
]


@pytest.mark.parametrize(("item", "reply", "passed"), CASES)
def test_false_reasons_about_code(item: str, reply: str, passed: bool) -> None:
    got = grade_reply(item, reply)
    assert got.passed is passed, got.detail


def test_only_questions_showing_code_are_read() -> None:
    assert false_code_claim("Who wrote Hamlet?", "y is a copy of x") is None
    quoted = "```python\ny = x  # creates a copy?\n```\nIt prints 4: both names are one list."
    assert false_code_claim("What prints?\n```python\ny = x\n```", quoted) is None
