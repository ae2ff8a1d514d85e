"""JSONL I/O: one record a line, appended whole; read back on \\n only; a torn tail moved aside."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalrun.base.errors import ConfigError
from evalrun.base.jsondata import JSONObject, json_text


def dump_json_line(obj: BaseModel | JSONObject) -> str:
    """One JSON line, UTF-8 kept as is (ensure_ascii=False).

    U+2028/U+2029 and NEL are written as `\\u2028`-style escapes (evalrun reads on \\n only; a
    consumer splitting with str.splitlines() would see one record as several). Lone surrogates,
    which a server may send as `\\ud800` escapes, cannot be encoded as UTF-8, so they are written
    back as the same escapes: json.loads restores the identical string.
    """
    data = obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
    return json_text(data) + "\n"


def read_jsonl_records(path: Path) -> list[JSONObject]:
    """Rows of a JSONL file of objects (see numbered_rows)."""
    return [row for _, row in numbered_rows(path)]


def numbered_rows(
    path: Path, *, strict: bool = True, parse: Callable[[str], Any] = json.loads
) -> list[tuple[int, JSONObject]]:
    """(line number, row) of a JSONL file of objects.

    A torn last line (no newline: a crash mid-write) is skipped; the next append moves it aside.
    Any other line that is not a JSON object is a ConfigError naming the file and line (skipped
    too when not `strict`). `parse` reads a line (jsondata.loads for the token traces).
    """
    rows: list[tuple[int, JSONObject]] = []
    if not path.exists():
        return rows
    with path.open(encoding="utf-8", newline="", errors="surrogateescape") as fh:
        for lineno, line in enumerate(fh, 1):  # splits on \n only, never at U+2028
            if not line.strip():
                continue
            try:
                row = parse(line)
            except json.JSONDecodeError as exc:
                if not line.endswith("\n") or not strict:
                    continue  # the torn tail
                raise bad_line(path, lineno, f"not JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                if not strict:
                    continue
                raise bad_line(path, lineno, "not a JSON object")
            rows.append((lineno, row))
    return rows


def bad_line(path: Path, lineno: int, why: str) -> ConfigError:
    return ConfigError(
        f"{path}:{lineno}: {why}; move that line out of the file (its item is asked again "
        "on --resume)"
    )


TORN_SUFFIX = ".torn"


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def repair_tail(path: Path) -> bytes:
    """Cut a torn last line (no trailing newline) off `path` into `path` + .torn; return it.

    Appending onto a fragment would glue the next record to it and lose both.
    """
    try:
        with path.open("rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return b""
            fh.seek(max(0, size - 1))
            if fh.read(1) == b"\n":
                return b""
            fh.seek(0)
            data = fh.read()
            keep = data.rfind(b"\n") + 1
            if _is_json(data[keep:]):  # a whole record that lost only its newline: keep it
                fh.write(b"\n")
                return b""
            with open(str(path) + TORN_SUFFIX, "ab") as aside:
                aside.write(data[keep:] + b"\n")
                aside.flush()
                os.fsync(aside.fileno())
            fh.truncate(keep)
            return data[keep:]
    except FileNotFoundError:
        return b""
