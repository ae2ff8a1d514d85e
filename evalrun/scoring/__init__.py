"""Scoring a suite against an endpoint or a booted contract.

runner.py runs a suite (its life: checks, run.json, Ctrl-C and SIGTERM) with request.py's
`ScoreRequest` and `ScoreHooks`; schedule.py sends every item (concurrency, early stop), asking.py
asks one and grades it, state.py holds what a run knows of the endpoint's health, recording.py
appends each item to the run store as it finishes and reads a run back to resume it; judge.py
grades beside the requests; options.py is the one options object of the CLI and the API;
report.py is what a user sees of a run: progress bar, category table, headline, --json objects.
Listing and summarizing stored runs is the store's (`evalrun.store.list_runs`, `with_summary`).
"""

from __future__ import annotations

from evalrun.scoring.options import ScoreOptions, run_score
from evalrun.scoring.recording import resume_defaults
from evalrun.scoring.request import ScoreHooks, ScoreRequest
from evalrun.scoring.runner import ascore_suite, score_suite, score_target

__all__ = [
    "ScoreHooks",
    "ScoreOptions",
    "ScoreRequest",
    "ascore_suite",
    "resume_defaults",
    "run_score",
    "score_suite",
    "score_target",
]
