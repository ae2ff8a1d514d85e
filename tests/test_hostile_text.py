"""Model output is untrusted: a long reply built to make a regular expression rescan the text
from every position (a run of brackets, of newlines) must grade in time linear in its length.
Each payload below took seconds to minutes per item when a pattern scanned an unbounded run
before a literal (`\\([^)\\n ]+ `, `\\[[^\\]]*\\]\\(`, `(?m)^(\\s*)````)."""

from __future__ import annotations

import time

import pytest

from evalrun.endpoint.response import example_to_response
from evalrun.grading.registry import grade
from evalrun.suite.load import load_suite

# Garble reads at most its first 40,000 characters (JUDGED_CHARS); the answer graders read it
# all. A linear pass over the six items below takes under two seconds here; the quadratic
# patterns took 15 s (40,000 brackets) to 4 minutes (100,000 newlines). The bound is loose so
# that a loaded machine never trips it.
BOUND_S = 8.0
PAYLOADS = [("(", 40_000), ("[", 40_000), ("\n", 100_000), ("(a ", 40_000), ('"a ', 40_000)]


@pytest.fixture(scope="module")
def items():
    suite = load_suite("core")
    by_id = {i.id: i for i in suite.items}
    # one item per grader family: numeric, exact copy, choice, language, JSON, code output
    ids = ("math-001", "canary-001", "logic-003", "ml-005", "struct-001", "code-005")
    return [by_id[i] for i in ids]


@pytest.mark.parametrize(("unit", "length"), PAYLOADS, ids=repr)
def test_a_long_hostile_reply_grades_in_linear_time(unit, length, items):
    text = unit * (length // len(unit))
    start = time.perf_counter()
    for item in items:
        assert not grade(item, example_to_response(text)).passed
    took = time.perf_counter() - start
    assert took < BOUND_S, f"{len(items)} items took {took:.1f} s on {length} x {unit!r}"
