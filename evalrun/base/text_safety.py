"""Make untrusted text (model output, suite text, server error bodies) safe to show.

Model answers can hold terminal escape sequences (`ESC]0;title BEL` retitles the window, `ESC[2J`
clears it), bidi overrides that reorder what a reader sees, NULs, and lone surrogates that stdout
cannot encode. Everything evalrun prints to a terminal or writes into markdown/HTML goes through
one of these functions first:

    terminal_text(s)       control characters as visible escapes (\\x1b, \\u202e, \\udc80); keeps \\n, \\t
    one_line(s, limit)     terminal_text with newlines shown as \\n, clipped to `limit` characters
    markdown_cell(s, ...)  one_line, HTML-escaped, `|` escaped, for a markdown table cell
    html_text(s)           terminal_text, HTML-escaped

Nothing here imports from evalrun: any layer may use it.
"""

from __future__ import annotations

import html
import re

# C0 controls except \t and \n, DEL, C1 controls, bidi marks, embeddings, overrides and isolates,
# BOM/zero-width no-break, and lone surrogates. U+2028/U+2029 stay: terminals print them inertly.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str) -> str:
    """`text` with every control, bidi and unencodable character shown as a visible escape."""
    return _UNSAFE.sub(_escape, text)


def one_line(text: str | None, limit: int | None = None, *, null: str = "(null)") -> str:
    """Safe text on one line (newlines as \\n), clipped to `limit` characters with '...'."""
    if text is None:
        return null
    if limit is not None and len(text) > 4 * limit:
        text = text[: 4 * limit]  # do not escape megabytes only to clip them
    safe = terminal_text(text.replace("\r", "\\r").replace("\n", "\\n"))
    if limit is not None and len(safe) > limit:
        safe = safe[:limit] + "..."
    return safe


def html_text(text: str) -> str:
    """Safe text for HTML (and markdown rendered as HTML)."""
    return html.escape(terminal_text(text))


def markdown_cell(text: str | None, limit: int | None = None) -> str:
    """One markdown table cell: one line, HTML-escaped, pipes escaped."""
    return html.escape(one_line(text, limit)).replace("|", "&#124;")
