"""Scoring a suite against an endpoint or a booted contract.

runner.py sends every item (concurrency, retries, resume, early stop), grades it and appends it to
the run store as it finishes; report.py is what a user sees of a run: progress bar, category
table, headline, --json objects.
"""

from __future__ import annotations

from evalrun.scoring.options import ScoreOptions, run_score
from evalrun.scoring.runner import (
    ScoreHooks,
    ScoreRequest,
    ascore_suite,
    resume_defaults,
    score_suite,
    score_target,
)
from evalrun.store import list_runs, with_summary

__all__ = [
    "ScoreHooks",
    "ScoreOptions",
    "ScoreRequest",
    "ascore_suite",
    "list_runs",
    "resume_defaults",
    "run_score",
    "score_suite",
    "score_target",
    "with_summary",
]
