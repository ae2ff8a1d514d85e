"""Regular expressions from suites, matched against model output under a time limit.

A suite's pattern is untrusted input and so is the text it runs on: `^(a|aa)+$` against 60 `a`s
and a `b` backtracks for hours, and Python's `re` can neither be interrupted by a signal nor given
a deadline. Suite patterns therefore run on the `regex` engine with a timeout; a match that runs
out of time raises `GradeTimeout`, which the runner records as an item in error and `suite check`
reports as a problem.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import regex

from evalrun.verdicts import GradeTimeout

MATCH_TIMEOUT_S = 0.5  # per match; the engine checks the clock coarsely, so allow ~4x under load
IGNORECASE = regex.IGNORECASE


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str, flags: int = 0) -> Any:
    """The compiled pattern; ValueError saying why when it is not a valid expression."""
    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from exc


def find(pattern: str, text: str, flags: int = 0, *, full: bool = False) -> bool:
    """Whether `pattern` is found in (or, with `full`, matches all of) `text`, in bounded time."""
    compiled = compile_pattern(pattern, flags)
    method = compiled.fullmatch if full else compiled.search
    try:
        return method(text, timeout=MATCH_TIMEOUT_S) is not None
    except TimeoutError as exc:
        raise _timeout(pattern, text) from exc


def _timeout(pattern: str, text: str) -> GradeTimeout:
    return GradeTimeout(
        f"pattern {pattern[:60]!r} ran out of time ({MATCH_TIMEOUT_S:g} s) on a "
        f"{len(text):,}-character answer; simplify it (nested repeats backtrack)"
    )


def match_spans(pattern: str, text: str, flags: int = 0) -> list[tuple[int, int]]:
    """(start, end) of each non-overlapping match of `pattern` in `text`, in bounded time."""
    try:
        return [
            m.span()
            for m in compile_pattern(pattern, flags).finditer(text, timeout=MATCH_TIMEOUT_S)
        ]
    except TimeoutError as exc:
        raise _timeout(pattern, text) from exc


def match_starts(pattern: str, text: str, flags: int = 0) -> list[int]:
    """Where each non-overlapping match of `pattern` in `text` starts, in bounded time."""
    try:
        return [
            m.start()
            for m in compile_pattern(pattern, flags).finditer(text, timeout=MATCH_TIMEOUT_S)
        ]
    except TimeoutError as exc:
        raise _timeout(pattern, text) from exc
