"""tokens.jsonl: a run's token traces (endpoint/logprobs.py), beside items.jsonl and under its
rules: appended in the items' group commit, a torn last line moved aside, the last line of an item
winning on resume.

The file is read here only, and every trace is checked as it is read (`load_traces`): a line that
is no trace (an entry `[]`, `["The"]`, a logprob `"abc"` or `[null, null, null]`, a positive,
NaN or infinite logprob) is skipped and counted, so compare, sign-off, report and bisect see
well-formed traces only. Given the answers stored beside them, a trace that does not spell its
answer (a tokens.jsonl copied from another run) is set aside and counted too: `Traces.foreign`
says when a run's traces are not its own.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalrun.base.jsondata import collector_paused, loads
from evalrun.endpoint.logprobs import ALT_EXTRA, TEXT_CAP, TOKEN_EXTRA, TokenTrace, token_key
from evalrun.store.jsonl import numbered_rows, repair_tail
from evalrun.store.records import ItemRecord

TOKENS_FILE = "tokens.jsonl"
SPELL_CHARS = 64  # letters and digits of an answer a trace must spell


def append_traces(folder: Path, lines: list[bytes]) -> None:
    """Append trace lines (`trace_line`, built as each answer came) to folder/tokens.jsonl, with
    an fsync (the items' group commit)."""
    path = folder / TOKENS_FILE
    repair_tail(path)
    with path.open("ab") as fh:
        fh.write(b"".join(lines))
        fh.flush()
        os.fsync(fh.fileno())


class Traces(dict[str, TokenTrace]):
    """A run's usable traces by item id, and what was set aside while reading them."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped = 0  # lines that are no well-formed trace
        self.checked = 0  # traces held against their stored answer
        self.foreign = 0  # ... that did not spell it

    def not_own(self) -> bool:
        """Most of the checked traces do not spell the answers stored beside them: the file
        came from another run (judging it would judge that run)."""
        return self.foreign > 0 and self.foreign * 2 >= self.checked

    def foreign_reason(self, side: str) -> str:
        return (
            f"the traces do not spell the stored answers ({self.foreign} of {self.checked} in "
            f"run {side}'s tokens.jsonl): was it copied from another run? re-score the run"
        )


def stored_answers(items: Iterable[ItemRecord]) -> dict[str, str | None]:
    """Each answered item's text a trace must spell: its content, None where the tokens spell
    more than the content (a reasoning channel, tool calls)."""
    return {
        r.id: None if r.response.reasoning or r.response.tool_calls else r.response.content
        for r in items
        if r.response is not None
    }


def load_traces(folder: Path, answers: Mapping[str, str | None] | None = None) -> Traces:
    """Traces of a run folder by item id (the last line of an id wins). A line that is not a
    well-formed trace is skipped and counted: tokens are evidence for fidelity, never a reason a
    run cannot be read. With `answers` (an item's stored answer text by id; None where it
    cannot be checked: a tool call, a reasoning channel), a trace that does not spell its
    answer is set aside and counted as foreign."""
    out = Traces()
    with collector_paused():  # a trace is ~1,000 small lists, none in a cycle
        for _, row in numbered_rows(folder / TOKENS_FILE, strict=False, parse=loads):
            trace = _trace(row)
            if trace is None:
                out.skipped += 1
                continue
            out[trace.id] = trace
    if answers is not None:
        for item_id in list(out):
            verdict = spells(out[item_id], answers.get(item_id))
            if verdict is None:
                continue
            out.checked += 1
            if not verdict:
                out.foreign += 1
                del out[item_id]
    return out


def _trace(row: dict[str, Any]) -> TokenTrace | None:
    """The row as a TokenTrace when every token in it is well formed, else None."""
    try:
        trace = TokenTrace.model_validate(row)
    except (ValidationError, ValueError):
        return None
    if trace.top_k < 0 or trace.cap < 0 or trace.total < 0:
        return None
    return trace if all(_token(t) for t in trace.tokens) else None


def _logprob(value: Any) -> bool:
    """A stored logprob: a finite number at most 0 (a log-probability)."""
    if value.__class__ is float:
        return value <= 0.0 and math.isfinite(value)
    return value.__class__ is int and value <= 0


def _extras(entry: list[Any], start: int) -> bool:
    """The optional hex bytes (a str of hex) and token id (an int >= 0) after `start`."""
    rest = entry[start:]
    if len(rest) > 2:
        return False
    for n, extra in enumerate(rest):
        if extra.__class__ is int:
            if extra < 0 or n != len(rest) - 1:
                return False
        elif extra.__class__ is str and n == 0:
            try:
                bytes.fromhex(extra)
            except ValueError:
                return False
        else:
            return False
    return True


def _token(token: Any) -> bool:
    """[text, logprob, [[alt, logprob, ...], ...], hex?, id?] as logprobs.py writes it."""
    if token.__class__ is not list or len(token) < TOKEN_EXTRA:
        return False
    text, lp, alts = token[0], token[1], token[2]
    if text.__class__ is not str or not _logprob(lp) or alts.__class__ is not list:
        return False
    for alt in alts:
        if alt.__class__ is not list or len(alt) < ALT_EXTRA:
            return False
        if alt[0].__class__ is not str or not _logprob(alt[1]) or not _extras(alt, ALT_EXTRA):
            return False
    return _extras(token, TOKEN_EXTRA)


def _squeezed(text: str) -> str:
    """The ASCII letters and digits of `text`: what every engine renders alike (whitespace,
    pieces of a character split over tokens and markup tokens are rendered differently)."""
    return "".join(c for c in text if c.isascii() and c.isalnum())


def spells(trace: TokenTrace, answer: str | None) -> bool | None:
    """Whether the trace's tokens spell the start of `answer` (its ASCII letters and digits);
    None when it cannot be told (no answer text, no such character in either, a token whose
    text was cut at TEXT_CAP before SPELL_CHARS of them)."""
    if not answer:
        return None
    parts = []
    for token in trace.tokens:
        if len(token[0]) >= TEXT_CAP:
            break
        parts.append(token_key(token))
        if len(parts) >= SPELL_CHARS:
            break
    said, stored = _squeezed("".join(parts)), _squeezed(answer)
    n = min(len(said), len(stored), SPELL_CHARS)
    if n == 0:
        return None
    return said[:n] == stored[:n]
