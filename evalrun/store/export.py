"""A stored run's items as export rows: the fields every format writes, CSV cells, JUnit XML.

One row an item, its final record: `ItemRow`. The viewers build rows from a stored run
(viewing/export.py, in suite order with each item's final record); a score writes its `--junit`
file from the rows it holds at its end, through the same `write_junit`, so both are the same bytes.

- junit: one <testcase> per item (classname `<suite>.<category>`): <failure type="failed"> for a
  wrong answer (type `garbled` when the garble detector flagged it), <error> for a failed request,
  <skipped> for an item the run never reached; the answer in <system-out>. Characters XML 1.0
  cannot hold (control characters, lone surrogates) are written as visible `\\xNN` escapes.
- csv cells: free-text cells that a spreadsheet would run as a formula (starting with `=`, `@`, or
  `+`/`-` not followed by a digit) get a leading `'`: model output is untrusted.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalrun.base.errors import ConfigError
from evalrun.base.jsondata import JSONObject
from evalrun.endpoint.response import Response
from evalrun.store.jsonl import json_text
from evalrun.store.records import ItemRecord, RunRecord

COLUMNS = [
    "run_id",
    "id",
    "category",
    "status",
    "answer",
    "reasoning",
    "tool_calls",
    "finish_reason",
    "grader_detail",
    "garbled",
    "garble_reasons",
    "diagnoses",
    "error_kind",
    "error_message",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    "attempts",
]
_FREE_TEXT = {"answer", "reasoning", "grader_detail", "error_message", "tool_calls"}
_FORMULA = re.compile(r"^(?:[=@\t\r]|[+-](?![\d.]))")
# XML 1.0 allows \t \n \r, U+0020-U+D7FF, U+E000-U+FFFD and above U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass
class ItemRow:
    """One item of a run as the exports see it: its id, category and final record (none when
    the run did not reach it)."""

    id: str
    category: str
    record: ItemRecord | None

    @property
    def status(self) -> str:
        """passed, failed, error, or `not run` (selected, but the run stopped before it)."""
        return self.record.status if self.record else "not run"

    @property
    def response(self) -> Response:
        """What the endpoint answered (an empty response when it did not)."""
        return (self.record.response if self.record else None) or Response()

    @property
    def garbled(self) -> bool:
        return self.record is not None and self.record.garbled

    @property
    def garble_reasons(self) -> list[str]:
        garble = self.record.garble if self.record else None
        return garble.reasons if garble is not None else []

    @property
    def diagnoses(self) -> list[str]:
        return list(self.record.diagnoses) if self.record else []

    @property
    def detail(self) -> str:
        """The grader's detail, or the error's kind and message."""
        rec = self.record
        if rec is None:
            return ""
        if rec.error:
            return f"{rec.error.kind}: {rec.error.message}"
        return rec.grade.detail if rec.grade else ""

    @property
    def tokens(self) -> tuple[int | None, int | None]:
        """(prompt, completion) tokens the server reported."""
        usage = self.response.usage
        return (usage.prompt_tokens, usage.completion_tokens) if usage else (None, None)


def row_fields(run_id: str, row: ItemRow) -> JSONObject:
    """The export fields of one item (the same keys in every format)."""
    rec = row.record
    resp = row.response
    error = rec.error if rec else None
    prompt_tokens, completion_tokens = row.tokens
    return {
        "run_id": run_id,
        "id": row.id,
        "category": row.category,
        "status": row.status,
        "answer": resp.content,
        "reasoning": resp.reasoning,
        "tool_calls": [c.model_dump(mode="json") for c in resp.tool_calls],
        "finish_reason": resp.finish_reason,
        "grader_detail": rec.grade.detail if rec and rec.grade else None,
        "garbled": row.garbled,
        "garble_reasons": row.garble_reasons,
        "diagnoses": row.diagnoses,
        "error_kind": error.kind if error else None,
        "error_message": error.message if error else None,
        "latency_s": rec.latency_s if rec else None,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "attempts": rec.attempts if rec else 0,
    }


def csv_cell(key: str, value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if key == "tool_calls":
        value = json_text(value) if value else ""
    elif isinstance(value, list):
        value = "; ".join(str(v) for v in value)
    if key in _FREE_TEXT and isinstance(value, str) and _FORMULA.match(value):
        return "'" + value
    return value


def xml_safe(text: str) -> str:
    """`text` with the characters XML 1.0 cannot carry shown as `\\xNN` / `\\uNNNN`."""

    def esc(m: re.Match[str]) -> str:
        code = ord(m.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _NOT_XML.sub(esc, text)


def write_junit(path: str | Path, record: RunRecord, rows: Iterable[ItemRow]) -> None:
    """The run written to `path` as JUnit XML; ConfigError when the path cannot be written."""
    text = junit_text(record, rows)
    try:
        with Path(path).open("w", encoding="utf-8", errors="backslashreplace", newline="") as fh:
            fh.write(text)
    except OSError as exc:
        raise ConfigError(f"cannot write {path} ({exc.strerror}); pick a writable path") from exc


def junit_text(record: RunRecord, rows: Iterable[ItemRow]) -> str:
    """The run as one JUnit XML document."""
    suite_label = f"{record.suite.name}-v{record.suite.version}"
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    root = ET.Element("testsuites", name="evalrun")
    suite_el = ET.SubElement(
        root,
        "testsuite",
        name=xml_safe(f"{suite_label} {record.run_id}"),
        timestamp=record.started_at,
    )
    props = ET.SubElement(suite_el, "properties")
    for name, value in (
        ("run_id", record.run_id),
        ("suite", suite_label),
        ("suite_sha256", record.suite.sha256),
        ("endpoint", record.endpoint),
        ("model", record.model_served or record.model_requested or ""),
        ("status", record.status),
        ("score", str(record.summary.score) if record.summary else ""),
    ):
        ET.SubElement(props, "property", name=name, value=xml_safe(value))
    for row in rows:
        fields = row_fields(record.run_id, row)
        counts["tests"] += 1
        latency = fields["latency_s"] or 0.0
        total_time += latency
        case = ET.SubElement(
            suite_el,
            "testcase",
            classname=xml_safe(f"{record.suite.name}.{row.category}"),
            name=xml_safe(row.id),
            time=f"{latency:.3f}",
        )
        _outcome(case, row, fields, counts)
        out = _answer_text(fields)
        if out:
            ET.SubElement(case, "system-out").text = xml_safe(out)
    for el in (root, suite_el):
        for key, n in counts.items():
            el.set(key, str(n))
        el.set("time", f"{total_time:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _outcome(case: ET.Element, row: ItemRow, fields: JSONObject, counts: dict[str, int]) -> None:
    status = row.status
    if status == "not run":
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message="not run: the run stopped before this item")
    elif status == "error":
        counts["errors"] += 1
        el = ET.SubElement(
            case,
            "error",
            type=xml_safe(fields["error_kind"] or "error"),
            message=xml_safe(_clip(fields["error_message"] or "request failed")),
        )
        el.text = xml_safe(fields["error_message"] or "")
    elif status == "failed":
        counts["failures"] += 1
        message = fields["grader_detail"] or "wrong answer"
        if row.garbled:
            message = f"garbled ({', '.join(row.garble_reasons) or 'garble detector'}); {message}"
        if row.diagnoses:
            message += f"; diagnoses: {', '.join(row.diagnoses)}"
        el = ET.SubElement(
            case,
            "failure",
            type="garbled" if row.garbled else "failed",
            message=xml_safe(_clip(message)),
        )
        el.text = xml_safe(message)


def _answer_text(fields: JSONObject) -> str:
    parts = []
    if fields["answer"] is not None:
        parts.append(str(fields["answer"]))
    if fields["tool_calls"]:
        parts.append("tool calls: " + json.dumps(fields["tool_calls"], ensure_ascii=False))
    if fields["reasoning"]:
        parts.append("reasoning: " + str(fields["reasoning"]))
    if fields["garbled"] and fields["status"] == "passed":
        parts.append("garbled: " + ", ".join(fields["garble_reasons"]))
    return "\n".join(parts)


def _clip(text: str, n: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
