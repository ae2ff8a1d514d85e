"""One reply graded on a shipped core item, as the graders' tables of cases grade theirs.

A reply is in the shape of an item's `accept` example: a string (the content) or {content,
tool_calls}.
"""

from __future__ import annotations

from evalrun.endpoint.response import example_to_response
from evalrun.grading.registry import grade
from evalrun.suite.load import load_suite
from evalrun.verdicts import Grade

ITEMS = {i.id: i for i in load_suite("core").items}


def grade_reply(item_id: str, reply: object) -> Grade:
    """The grade of `reply` to the core item `item_id`."""
    return grade(ITEMS[item_id], example_to_response(reply))
