"""Judging one answer: graders and the garble detector.

registry.py holds the grader registry, `grade()` and the all/any combinators; the built-in graders
live in text.py (exact, normalized, fuzzy, regex, contains_all, contains_none, language, format,
sequence) and answer.py (numeric, choice, json, tool_call) and register on import here, through
`grader()`, exactly as a third-party grader would; span.py finds where a chat answer states its
answer (boxed, markers, bold) and what it negates or hedges; extract.py pulls numbers and JSON out
of text; batch.py grades a file of answers offline (`evalrun grade`); garble/ is the garble
detector.
"""

from __future__ import annotations

# The built-in graders register on import, through `grader()` like any third-party one.
from evalrun.grading import answer, text  # noqa: F401
from evalrun.grading.garble import (
    GarbleSignal,
    GarbleVerdict,
    check_response,
    detect,
    expected_for,
)
from evalrun.grading.registry import (
    GRADERS,
    Grade,
    GraderParams,
    grade,
    grade_spec,
    grader,
    validate_params,
)

__all__ = [
    "GRADERS",
    "GarbleSignal",
    "GarbleVerdict",
    "Grade",
    "GraderParams",
    "check_response",
    "detect",
    "expected_for",
    "grade",
    "grade_spec",
    "grader",
    "validate_params",
]
