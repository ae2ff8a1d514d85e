"""tokens.jsonl: a run's token traces (endpoint/logprobs.py), beside items.jsonl and under its
rules: appended in the items' group commit, a torn last line moved aside, the last line of an item
winning on resume."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evalrun.endpoint.logprobs import TokenTrace
from evalrun.store.jsonl import json_text, numbered_rows, repair_tail

TOKENS_FILE = "tokens.jsonl"


def append_traces(folder: Path, traces: list[TokenTrace]) -> None:
    """Append traces to folder/tokens.jsonl (the caller fsyncs in its group commit)."""
    path = folder / TOKENS_FILE
    repair_tail(path)
    # the fields as they are (plain lists of str/float): no model_dump walk over every token
    lines = [
        json_text(
            {"id": t.id, "top_k": t.top_k, "total": t.total, "cap": t.cap, "tokens": t.tokens}
        )
        + "\n"
        for t in traces
    ]
    with path.open("a", encoding="utf-8", newline="") as fh:
        fh.write("".join(lines))
        fh.flush()
        os.fsync(fh.fileno())


def load_traces(folder: Path) -> dict[str, TokenTrace]:
    """Traces of a run folder by item id (the last line of an id wins; bad lines are skipped:
    tokens are evidence for fidelity, never a reason a run cannot be read)."""
    out: dict[str, TokenTrace] = {}
    with _collector_paused():
        for _, row in numbered_rows(folder / TOKENS_FILE, strict=False):
            try:
                trace = TokenTrace.model_validate(row)
            except ValueError:
                continue
            out[trace.id] = trace
    return out


@contextmanager
def _collector_paused() -> Iterator[None]:
    """A trace is ~1,000 small lists and none is in a cycle: while they pile up, the cyclic
    garbage collector would walk the growing heap again and again for nothing (it doubled the
    time `compare` took to load two 184-item runs)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
