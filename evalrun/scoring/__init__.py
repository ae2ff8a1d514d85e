"""Scoring a suite against an endpoint or a booted contract.

A score is plan (plan.py: `ScorePlan`, settled once), open the target (serving/target.py), run
(run.py: `Run`, a run's life and its workers over the items, and the entries: `score` from
options, `score_suite` with request.py's `ScoreRequest` and `ScoreHooks`); asking.py
asks one item and grades it, state.py holds what a run knows of the endpoint's health, recording.py
appends each item to the run store as it finishes and reads a run back to resume it; judge.py
grades beside the requests; options.py is the one options object of the CLI and the API;
report.py is what a user sees of a run: progress bar, category table, headline, --json objects.
Listing stored runs with their summaries is the viewers' (`evalrun.viewing.runview.list_runs`).
"""

from __future__ import annotations

from evalrun.scoring.options import ScoreOptions
from evalrun.scoring.plan import Limits, ScorePlan, plan
from evalrun.scoring.request import ScoreHooks, ScoreRequest
from evalrun.scoring.run import ascore, ascore_suite, score, score_suite

__all__ = [
    "Limits",
    "ScoreHooks",
    "ScoreOptions",
    "ScorePlan",
    "ScoreRequest",
    "ascore",
    "ascore_suite",
    "plan",
    "score",
    "score_suite",
]
