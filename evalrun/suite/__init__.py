"""Suites: the fixed item sets evalrun scores.

load.py reads a suite folder (items.jsonl + manifest.json) and verifies its sha256; check.py is
`evalrun suite check`: every item's grader parameters and accept/reject examples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalrun.suite.load import Item, Manifest, Suite, load_suite, resolve_suite_dir

if TYPE_CHECKING:
    from evalrun.suite.check import check_suite, describe_suite

__all__ = [
    "Item",
    "Manifest",
    "Suite",
    "check_suite",
    "describe_suite",
    "load_suite",
    "resolve_suite_dir",
]


def __getattr__(name: str) -> Any:
    """check.py's names, imported when first asked for: it loads the graders, which reading a
    run (the store's summaries, compare) does not need."""
    if name in ("check_suite", "describe_suite"):
        from evalrun.suite import check

        return getattr(check, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
