"""Grading answers without a server: `evalrun grade --suite SUITE FILE|RUN_FOLDER`.

FILE is JSON Lines, one `{"id": ITEM_ID, "answer": A}` a line, where A has the shape of an item's
`accept` example (a string, or `{content, tool_calls, reasoning}`). A suite author tests graders
with it before spending an endpoint's time; CI can grade stored answers the same way.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from evalrun.base.errors import UsageError
from evalrun.endpoint.response import Response, example_to_response
from evalrun.grading.registry import grade

MAX_LINE_BYTES = 4_000_000  # a 110K-token long-context echo fits; a runaway file does not


class GradedAnswer(BaseModel):
    """The verdict on one answer line."""

    id: str = Field(description="The item id the line names.")
    passed: bool = Field(description="Whether the item's grader passed the answer.")
    detail: str = Field(description="What the grader read and expected.")
    garbled: bool = Field(description="The garble detector flagged the answer (it then fails).")
    span: str | None = Field(
        default=None,
        description="The part of the answer the grader read, when it read one part of it.",
    )
    was_passed: bool | None = Field(
        default=None,
        description="Re-grading a stored run: the verdict the run recorded (None for a file).",
    )


def read_answers(path: Path, items: Mapping[str, Any], label: str) -> list[tuple[int, str, Any]]:
    """(line number, item id, answer) per non-empty line of `path`, for the suite `label` whose
    items are `items` by id; UsageError naming the bad line."""
    rows = []
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise UsageError(
            f"cannot read {path}: {exc.strerror}; pass a JSONL file of answers"
        ) from exc
    with fh:
        for n, raw in enumerate(fh, 1):  # binary iteration splits on \n only, never at U+2028
            if len(raw) > MAX_LINE_BYTES:
                raise UsageError(f"{path}:{n}: line longer than {MAX_LINE_BYTES} bytes")
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise UsageError(
                    f'{path}:{n}: not a JSON object ({exc}); write {{"id": ..., "answer": ...}}'
                ) from exc
            if not isinstance(row, dict) or set(row) != {"id", "answer"}:
                raise UsageError(
                    f'{path}:{n}: each line must be {{"id": ITEM_ID, "answer": ANSWER}}'
                )
            if row["id"] not in items:
                raise UsageError(
                    f"{path}:{n}: unknown item id {str(row['id'])[:60]!r} in suite {label}; "
                    "see `evalrun suite show`"
                )
            try:
                example_to_response(row["answer"])
            except (TypeError, ValueError) as exc:
                raise UsageError(f"{path}:{n}: {exc}") from exc
            rows.append((n, row["id"], row["answer"]))
    return rows


def grade_answers(items: Mapping[str, Any], rows: list[tuple[int, str, Any]]) -> list[GradedAnswer]:
    """Grade each answer against its item (`items` by id), in file order."""
    out = []
    for _, item_id, answer in rows:
        g = grade(items[item_id], example_to_response(answer))
        out.append(
            GradedAnswer(
                id=item_id, passed=g.passed, detail=g.detail, garbled=g.garbled, span=g.span
            )
        )
    return out


def terminal_safe(text: str, limit: int = 100) -> str:
    """Text for a terminal: control and format characters escaped, clipped to `limit`."""
    out = "".join(
        ch if unicodedata.category(ch)[0] != "C" else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )
    out = out.encode("utf-8", "backslashreplace").decode("utf-8")
    return out if len(out) <= limit else out[: limit - 1] + "…"


def regrade(
    items: Mapping[str, Any], stored: list[tuple[str, Response, bool]]
) -> list[GradedAnswer]:
    """Grade a stored run's responses again, (item id, response, recorded verdict) each, under
    today's graders: what a grader change does to real answers, without asking the model."""
    out = []
    for item_id, response, was in stored:
        g = grade(items[item_id], response)
        out.append(
            GradedAnswer(
                id=item_id,
                passed=g.passed,
                detail=g.detail,
                garbled=g.garbled,
                span=g.span,
                was_passed=was,
            )
        )
    return out
