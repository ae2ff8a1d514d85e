"""Exports for dashboards and CI: one row per item, the final attempt only.

- jsonl: one JSON object per item, the answer and every field exactly as stored;
- csv: the same fields flattened (lists joined with `; `, tool calls as JSON). Free-text cells
  that a spreadsheet would run as a formula (starting with `=`, `@`, or `+`/`-` not followed by a
  digit) get a leading `'`: model output is untrusted. The jsonl export keeps the exact text;
- junit: one <testcase> per item (classname `<suite>.<category>`): <failure type="failed"> for a
  wrong answer (type `garbled` when the garble detector flagged it), <error> for a failed request,
  <skipped> for an item the run never reached; the answer in <system-out>. Characters XML 1.0
  cannot hold (control characters, lone surrogates) are written as visible `\\xNN` escapes.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalrun.base.errors import ConfigError, UsageError
from evalrun.base.jsondata import JSONObject
from evalrun.store import RunRecord, RunStore, json_text
from evalrun.suite.select import Selection
from evalrun.viewing.runview import Row, RunView, matching_suite, with_summary

FORMATS = ("jsonl", "csv", "junit")
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


def row_fields(run_id: str, row: Row) -> JSONObject:
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


def render_export(view: RunView, fmt: str) -> str:
    """The whole export as text."""
    if fmt == "jsonl":
        return "".join(json_text(row_fields(view.record.run_id, r)) + "\n" for r in view.rows)
    if fmt == "csv":
        return _csv(view)
    if fmt == "junit":
        return _junit(view)
    raise UsageError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")


def write_export(
    store: RunStore, ref: str, fmt: str, path: str | Path | None, out: Any = None
) -> None:
    """Export run `ref` to `path` (`-` or None: to `out`, stdout by default). jsonl and csv
    stream: one item record is read, written and dropped at a time (a run of hundreds of MB
    never sits in memory); junit is built whole (its counts lead the file)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    record, rows = streamed_rows(store, ref)
    to_file = path is not None and str(path) != "-"
    try:
        with (
            Path(path).open("w", encoding="utf-8", errors="backslashreplace", newline="")  # type: ignore[arg-type]
            if to_file
            else contextlib.nullcontext(out or sys.stdout)
        ) as fh:
            if fmt == "junit":
                fh.write(_junit(RunView(record, list(rows))))
            elif fmt == "jsonl":
                for row in rows:
                    fh.write(json_text(row_fields(record.run_id, row)) + "\n")
            else:
                writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\r\n")
                writer.writeheader()
                for row in rows:
                    fields = row_fields(record.run_id, row)
                    writer.writerow({k: _csv_cell(k, v) for k, v in fields.items()})
    except OSError as exc:
        if not to_file:
            raise
        raise ConfigError(f"cannot write {path} ({exc.strerror}); pick a writable path") from exc


def streamed_rows(store: RunStore, ref: str) -> tuple[RunRecord, Iterator[Row]]:
    """The run `ref` names and its rows as `load_view` orders them (suite order, each item's
    final record), each record read from items.jsonl only when its row is reached."""
    record = with_summary(store, store.load_run(ref))
    run_id = record.run_id
    offsets = store.final_offsets(run_id)
    suite, _ = matching_suite(record)

    def rows() -> Iterator[Row]:
        if suite is None:
            for at in offsets.values():
                rec = store.item_at(run_id, at)
                yield Row(rec.id, rec.category, rec)
            return
        chosen = Selection.from_record(record.selection).pick(suite)
        for item in chosen:
            found = offsets.pop(item.id, -1)
            yield Row(
                item.id, item.category, None if found < 0 else store.item_at(run_id, found), item
            )
        for at in offsets.values():  # records of items the suite no longer selects
            rec = store.item_at(run_id, at)
            yield Row(rec.id, rec.category, rec)

    return record, rows()


def _csv_cell(key: str, value: Any) -> Any:
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


def _csv(view: RunView) -> str:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    for row in view.rows:
        fields = row_fields(view.record.run_id, row)
        writer.writerow({k: _csv_cell(k, v) for k, v in fields.items()})
    return out.getvalue()


def xml_safe(text: str) -> str:
    """`text` with the characters XML 1.0 cannot carry shown as `\\xNN` / `\\uNNNN`."""

    def esc(m: re.Match[str]) -> str:
        code = ord(m.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _NOT_XML.sub(esc, text)


def _junit(view: RunView) -> str:
    record = view.record
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
    for row in view.rows:
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


def _outcome(case: ET.Element, row: Row, fields: JSONObject, counts: dict[str, int]) -> None:
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
