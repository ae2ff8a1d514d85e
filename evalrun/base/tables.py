"""Every table evalrun prints goes through `table()` (tabulate is imported here only), and every
score figure through the rounding functions below."""

from __future__ import annotations

import textwrap
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from evalrun.base.text_safety import terminal_text


def table(
    rows: list[list[Any]],
    headers: list[str],
    *,
    fmt: str = "simple",
    numparse: bool = True,
    **kw: Any,
) -> str:
    """Rows under headers, in a tabulate format (`simple`, `github`, ...); `numparse=False` keeps
    numeric-looking text (an answer like `10,250`) as written. `maxcolwidths` wraps text cells
    here: tabulate's own wrapping parses a cell like `10,000` as an int whatever `numparse` says
    (it passes the disable flags as the parse flags) and raises."""
    from tabulate import tabulate

    # Every cell may hold untrusted text (a suite's name, a model's, an answer): control
    # characters are shown as escapes, never sent to the terminal raw.
    rows = [[terminal_text(c) if isinstance(c, str) else c for c in row] for row in rows]
    headers = [terminal_text(h) for h in headers]
    widths = kw.pop("maxcolwidths", None)
    if widths is not None:
        rows = [_wrapped(row, widths) for row in rows]
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=not numparse, **kw)


def _wrapped(row: list[Any], widths: list[int | None]) -> list[Any]:
    out = list(row)
    for i, width in enumerate(widths[: len(out)]):
        if width and isinstance(out[i], str):
            lines = out[i].split("\n")
            out[i] = "\n".join(
                "\n".join(textwrap.wrap(line, width, break_on_hyphens=False) or [""])
                for line in lines
            )
    return out


# One rounding path for every score figure evalrun shows (runs, show, compare, signoff): models
# keep exact values, and only these functions turn them into text or whole numbers. Halves round
# away from zero (Python's round() would send 12.5 to 12 but 13.5 to 14).


def percent(part: float, whole: float) -> float:
    """100 * part / whole, unrounded; 0 when there is nothing to divide by."""
    return 100 * part / whole if whole else 0.0


def round_half_up(x: float, digits: int = 0) -> float:
    """x rounded to `digits` decimals, halves away from zero, from its shortest repr."""
    q = Decimal(1).scaleb(-digits)
    return float(Decimal(repr(x)).quantize(q, rounding=ROUND_HALF_UP))


def score100(passed: float, total: float) -> int:
    """The whole-number score out of 100 that headlines and `runs` show."""
    return int(round_half_up(percent(passed, total)))


def fmt_score(passed: int, total: int) -> str:
    """`59/60 (98/100)`: a run's score on the items it ran."""
    return f"{passed}/{total} ({score100(passed, total)}/100)"


def fmt_points(x: float, *, signed: bool = False) -> str:
    """Score points to one decimal: `31.8`; signed: `+2.0`, `−31.8`, `0.0` (a real minus sign)."""
    value = round_half_up(x, 1)
    if value == 0:
        return "0.0"
    text = f"{abs(value):.1f}"
    if value < 0:
        return f"−{text}"
    return f"+{text}" if signed else text
