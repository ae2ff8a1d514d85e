"""Grader registry. (Stub interface: the suite work replaces the bodies, not the signatures.)

`grade(item, response) -> Grade` judges `response.content` only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from evalrun.response import Response


class Grade(BaseModel):
    passed: bool
    detail: str = ""


GraderFn = Callable[[Response, dict[str, Any]], Grade]
GRADERS: dict[str, GraderFn] = {}


def grader(kind: str) -> Callable[[GraderFn], GraderFn]:
    """Register a grader under `kind`."""

    def wrap(fn: GraderFn) -> GraderFn:
        GRADERS[kind] = fn
        return fn

    return wrap


@grader("exact")
def _exact(response: Response, params: dict[str, Any]) -> Grade:
    got = (response.content or "").strip()
    return Grade(passed=got == str(params["answer"]).strip(), detail=f"expected {params['answer']!r}")


def grade(item: Any, response: Response) -> Grade:
    """Grade one response against an item's grader spec."""
    fn = GRADERS[item.grader.kind]
    return fn(response, item.grader.params())
