"""tokens.jsonl: a run's token traces (endpoint/logprobs.py), beside items.jsonl and under its
rules: appended in the items' group commit, a torn last line moved aside, the last line of an item
winning on resume."""

from __future__ import annotations

import os
from pathlib import Path

from evalrun.endpoint.logprobs import TokenTrace
from evalrun.jsondata import collector_paused, loads
from evalrun.store.jsonl import numbered_rows, repair_tail

TOKENS_FILE = "tokens.jsonl"


def append_traces(folder: Path, lines: list[bytes]) -> None:
    """Append trace lines (`trace_line`, built as each answer came) to folder/tokens.jsonl, with
    an fsync (the items' group commit)."""
    path = folder / TOKENS_FILE
    repair_tail(path)
    with path.open("ab") as fh:
        fh.write(b"".join(lines))
        fh.flush()
        os.fsync(fh.fileno())


def load_traces(folder: Path) -> dict[str, TokenTrace]:
    """Traces of a run folder by item id (the last line of an id wins; bad lines are skipped:
    tokens are evidence for fidelity, never a reason a run cannot be read)."""
    out: dict[str, TokenTrace] = {}
    with collector_paused():  # a trace is ~1,000 small lists, none in a cycle
        for _, row in numbered_rows(folder / TOKENS_FILE, strict=False, parse=loads):
            try:
                trace = TokenTrace.model_validate(row)
            except ValueError:
                continue
            out[trace.id] = trace
    return out
