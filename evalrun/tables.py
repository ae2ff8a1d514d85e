"""Every table evalrun prints goes through `table()`; tabulate is imported here only."""

from __future__ import annotations

from typing import Any


def table(
    rows: list[list[Any]],
    headers: list[str],
    *,
    fmt: str = "simple",
    numparse: bool = True,
    **kw: Any,
) -> str:
    """Rows under headers, in a tabulate format (`simple`, `github`, ...); `numparse=False` keeps
    numeric-looking text (an answer like `10,250`) as written."""
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=not numparse, **kw)
