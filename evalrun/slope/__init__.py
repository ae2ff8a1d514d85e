"""Decode slope: throughput against context depth.

sweep.py runs a slope measurement (calibrate depths, stream at each depth and concurrency);
wire.py is the streaming HTTP side; record.py the slope.json models, store and analysis
(ratios to d0, cliffs); report.py tables, comparisons and the plot.
"""

from __future__ import annotations

from evalrun.slope.record import SlopePoint, SlopeRecord, load_slope, resolve_slope
from evalrun.slope.sweep import run_slope

__all__ = [
    "SlopePoint",
    "SlopeRecord",
    "load_slope",
    "resolve_slope",
    "run_slope",
]
