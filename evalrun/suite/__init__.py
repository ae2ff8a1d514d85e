"""Suites: the fixed item sets evalrun scores.

load.py reads a suite folder (items.jsonl + manifest.json) and verifies its sha256; check.py is
`evalrun suite check`: every item's grader parameters and accept/reject examples.
"""

from __future__ import annotations

from evalrun.suite.check import check_suite, describe_suite
from evalrun.suite.load import Item, Manifest, Suite, load_suite, resolve_suite_dir

__all__ = [
    "Item",
    "Manifest",
    "Suite",
    "check_suite",
    "describe_suite",
    "load_suite",
    "resolve_suite_dir",
]
