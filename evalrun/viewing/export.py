"""Exports for dashboards and CI: one row per item, the final attempt only.

- jsonl: one JSON object per item, the answer and every field exactly as stored;
- csv: the same fields flattened (lists joined with `; `, tool calls as JSON). Free-text cells
  that a spreadsheet would run as a formula (starting with `=`, `@`, or `+`/`-` not followed by a
  digit) get a leading `'`: model output is untrusted. The jsonl export keeps the exact text;
- junit: one <testcase> per item (classname `<suite>.<category>`), written as a score's `--junit`
  file is.

The fields, the cells and the XML are the store's (store/export.py); this module reads a stored
run in suite order and streams its rows out.
"""

from __future__ import annotations

import contextlib
import csv
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalrun.base.errors import ConfigError, UsageError
from evalrun.store import RunRecord, RunStore, json_text
from evalrun.store.export import COLUMNS, csv_cell, junit_text, row_fields, xml_safe
from evalrun.suite.select import Selection
from evalrun.viewing.runview import Row, RunView, matching_suite, with_summary

FORMATS = ("jsonl", "csv", "junit")
__all__ = ["FORMATS", "render_export", "row_fields", "streamed_rows", "write_export", "xml_safe"]


def render_export(view: RunView, fmt: str) -> str:
    """The whole export as text."""
    if fmt == "jsonl":
        return "".join(json_text(row_fields(view.record.run_id, r)) + "\n" for r in view.rows)
    if fmt == "csv":
        return _csv(view)
    if fmt == "junit":
        return junit_text(view.record, view.rows)
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
                fh.write(junit_text(record, rows))
            elif fmt == "jsonl":
                for row in rows:
                    fh.write(json_text(row_fields(record.run_id, row)) + "\n")
            else:
                writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\r\n")
                writer.writeheader()
                for row in rows:
                    fields = row_fields(record.run_id, row)
                    writer.writerow({k: csv_cell(k, v) for k, v in fields.items()})
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


def _csv(view: RunView) -> str:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    for row in view.rows:
        fields = row_fields(view.record.run_id, row)
        writer.writerow({k: csv_cell(k, v) for k, v in fields.items()})
    return out.getvalue()
