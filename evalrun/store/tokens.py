"""tokens.jsonl: a run's token traces (endpoint/logprobs.py), beside items.jsonl and under its
rules: appended in the items' group commit, a torn last line moved aside, the last line of an item
winning on resume."""

from __future__ import annotations

import os
from pathlib import Path

from evalrun.endpoint.logprobs import TokenTrace
from evalrun.store.jsonl import dump_json_line, numbered_rows, repair_tail

TOKENS_FILE = "tokens.jsonl"


def append_traces(folder: Path, traces: list[TokenTrace]) -> None:
    """Append traces to folder/tokens.jsonl (the caller fsyncs in its group commit)."""
    path = folder / TOKENS_FILE
    repair_tail(path)
    with path.open("a", encoding="utf-8", newline="") as fh:
        fh.write("".join(dump_json_line(t) for t in traces))
        fh.flush()
        os.fsync(fh.fileno())


def load_traces(folder: Path) -> dict[str, TokenTrace]:
    """Traces of a run folder by item id (the last line of an id wins; bad lines are skipped:
    tokens are evidence for fidelity, never a reason a run cannot be read)."""
    out: dict[str, TokenTrace] = {}
    for _, row in numbered_rows(folder / TOKENS_FILE, strict=False):
        try:
            trace = TokenTrace.model_validate(row)
        except ValueError:
            continue
        out[trace.id] = trace
    return out
