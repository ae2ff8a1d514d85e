"""A suite item's prompt to show a person, with a long haystack collapsed around its needle.

A long-context item's prompt is thousands of lines of filler; what a reader needs is the start,
the question at the end, and the region holding the fact the grader looks for. `collapse()` keeps
those and replaces the rest with a gap marker that says how much was left out. The needle is
found by the item's own expectations: its accept examples, its grader's literal answers, then its
grader's regex patterns (searched in the suite's text, which the suite's hash pins).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalrun.suite.load import Item

LONG = 3000  # characters: longer message texts are collapsed
HEAD, TAIL, AROUND = 700, 700, 350


@dataclass(frozen=True)
class Part:
    """A piece of a shown prompt: `text`, `needle` (the region around the needle) or `gap`."""

    kind: str
    text: str


def message_text(message: Mapping[str, object]) -> str:
    """A chat message's text: its content (string or parts), tool calls as JSON."""
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(
            str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content
        )
    text = "" if content is None else str(content)
    if message.get("tool_calls"):
        text += ("\n" if text else "") + json.dumps(message["tool_calls"], ensure_ascii=False)
    return text


def collapse(
    text: str,
    item: Item | None,
    *,
    long: int = LONG,
    head: int = HEAD,
    tail: int = TAIL,
    around: int = AROUND,
) -> list[Part]:
    """`text` whole when at most `long` characters, else its first `head` and last `tail`
    characters and `around` characters either side of the needle, with gaps between."""
    if len(text) <= long:
        return [Part("text", text)]
    ends = [Part("text", text[:head]), _gap(len(text) - head - tail), Part("text", text[-tail:])]
    spot = find_needle(text, item, tail) if item else None
    if spot is None:
        return ends
    lo = max(head, spot[0] - around)
    hi = min(len(text) - tail, spot[1] + around)
    if lo >= hi:  # the needle sits in the head or the tail
        return ends
    parts = [Part("text", text[:head])]
    if lo > head:
        parts.append(_gap(lo - head))
    parts.append(Part("needle", text[lo:hi]))
    if hi < len(text) - tail:
        parts.append(_gap(len(text) - tail - hi))
    parts.append(Part("text", text[-tail:]))
    return parts


def prompt_line(item: Item, *, full: bool = False) -> str:
    """The prompt on one line for a terminal (`role: text | role: text`), a long message cut to
    its start, the needle region and its end; `full` keeps every character and newline."""
    out = []
    for m in item.messages:
        text = message_text(m)
        if full:
            out.append(f"{m.get('role', '?')}: {text}")
            continue
        parts = collapse(text, item, long=320, head=100, tail=160, around=60)
        joined = " ".join(p.text for p in parts).replace("\n", "\\n")
        out.append(f"{m.get('role', '?')}: {joined}")
    return ("\n" if full else " | ").join(out)


def _gap(n: int) -> Part:
    return Part("gap", f"[... {n:,} characters of the prompt not shown ...]")


def find_needle(text: str, item: Item, tail: int = TAIL) -> tuple[int, int] | None:
    """Where the fact the item asks about sits in `text`, or None."""
    body = text[:-tail]  # the question at the end repeats words of the answer; skip it
    lowered = body.lower()
    for literal in _literals(item):
        at = lowered.find(literal.lower())
        if at >= 0:
            return at, at + len(literal)
    for pattern in _patterns(item.grader.model_dump()):
        try:
            m = re.search(pattern, body)
        except re.error:
            continue
        if m and m.end() > m.start():
            return m.start(), m.end()
    return None


def _literals(item: Item) -> list[str]:
    found = [a for a in item.accept if isinstance(a, str)] + _answers(item.grader.model_dump())
    return [s for s in sorted(set(found), key=len) if len(s.strip()) >= 3]


def _answers(spec: Any) -> list[str]:
    """Expected answers in a grader spec (nested graders too); a number also as `7,340`."""
    if isinstance(spec, list):
        return [a for s in spec for a in _answers(s)]
    if not isinstance(spec, dict) or spec.get("negate"):
        return []
    answer = spec.get("answer")
    out = [answer] if isinstance(answer, str) else []
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        out += [f"{answer:,}", f"{answer:g}"]
    for value in spec.values():
        if isinstance(value, (dict, list)):
            out += _answers(value)
    return out


def _patterns(spec: Any) -> list[str]:
    """Regex patterns in a grader spec (nested graders too), skipping negated ones."""
    if isinstance(spec, list):
        return [p for s in spec for p in _patterns(s)]
    if not isinstance(spec, dict) or spec.get("negate"):
        return []
    out = [spec["pattern"]] if isinstance(spec.get("pattern"), str) else []
    for value in spec.values():
        if isinstance(value, (dict, list)):
            out += _patterns(value)
    return out
