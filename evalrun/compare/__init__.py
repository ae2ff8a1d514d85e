"""Comparing two runs of one suite on paired items.

pairing.py pairs the items of two runs and computes paired statistics (stats.py: exact McNemar,
seeded bootstrap, Wilson); report.py renders a comparison as text, markdown or HTML; plots.py
draws a label's score history.
"""

from __future__ import annotations

from evalrun.compare.pairing import Comparison, compare_records, compare_runs, to_json
from evalrun.compare.stats import mcnemar_exact, paired_bootstrap_ci, wilson_interval

__all__ = [
    "Comparison",
    "compare_records",
    "compare_runs",
    "mcnemar_exact",
    "paired_bootstrap_ci",
    "to_json",
    "wilson_interval",
]
