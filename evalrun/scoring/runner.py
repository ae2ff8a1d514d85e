"""Run a suite against an endpoint: bounded concurrency, write-as-you-go, resume, stop early.

Every finished item is appended to items.jsonl at once (fsync), so a crash loses only the items in
flight and `resume=` requests only the items without a final record (errors are retried). An item
whose request failed is recorded with status `error` and its cause; it is never graded. A prompt
the endpoint rejects for context length is the one exception: that is the lane's fixed limit, not a
transient fault, so it is recorded as `failed` (diagnosis `context_length`). If the endpoint stops
answering altogether the run stops early (status `incomplete`) and says so: after a run of failed
tries, or once the server has sent nothing for `--timeout` seconds while requests waited
(`silence_bound`; the items then in flight are recorded as errors, so a resume asks them again).
A run of many items grades its answers in a grading process beside the requests (judge.py).

A score is three steps, each in its own module: plan (plan.py: everything settled once, the
resumed run read back), open the target (serving/target.py: the endpoint, or the contract booted
and torn down), run (run.py: a `Run`, its life and its workers over the items). This module
holds the entries: `score`/`ascore` from options, `score_suite`/`ascore_suite` for a caller whose
target is already reached. The parts below: request.py (what a caller passes), state.py (the
run's state, the endpoint's health), asking.py (one item asked and graded), recording.py (items
and run.json on disk).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from evalrun.endpoint.client import run_sync
from evalrun.scoring.plan import ScorePlan, plan, plan_request
from evalrun.scoring.request import NO_HOOKS, ScoreHooks, ScoreRequest
from evalrun.scoring.run import Run
from evalrun.serving.target import Launcher, open_target
from evalrun.store import ItemRecord, RunRecord, RunStore

if TYPE_CHECKING:
    from evalrun.scoring.options import ScoreOptions

__all__ = ["ScoreHooks", "ScoreRequest", "ascore", "ascore_suite", "score", "score_suite"]

Result = tuple[RunRecord, list[ItemRecord]]


def score(
    options: ScoreOptions, hooks: ScoreHooks = NO_HOOKS, *, launcher: Launcher | None = None
) -> Result:
    """Score as the options say and store the run: plan, open the target, run. Works from sync
    code and from inside a running event loop alike. A run that stops early raises (the error
    names the stored run: `run_id`)."""
    store = RunStore(options.results)
    settled = plan(options, store)
    try:
        with open_target(
            settled.spec,
            settled.contract,
            settled.log_path,
            watch=hooks.boot,
            launcher=launcher,
        ) as target:
            return run_sync(lambda: Run(settled, target, store, hooks).go(own_loop=True))
    finally:
        settled.release()


async def ascore(options: ScoreOptions, hooks: ScoreHooks = NO_HOOKS) -> Result:
    """`score` awaited by a caller inside an event loop: an endpoint is asked in the caller's
    loop (cancelling leaves the run `interrupted`); a contract boots in a worker thread."""
    if options.booted:
        return await asyncio.to_thread(score, options, hooks)
    store = RunStore(options.results)
    settled = plan(options, store)
    try:
        with open_target(settled.spec) as target:
            return await Run(settled, target, store, hooks).go(own_loop=False)
    finally:
        settled.release()


def score_suite(req: ScoreRequest, store: RunStore, hooks: ScoreHooks = NO_HOOKS) -> Result:
    """Run (or resume) a suite against a reached target; store and return the run.

    Raises EndpointError when the endpoint is unreachable, not OpenAI-compatible, or stops
    answering mid-run (the run is then `incomplete` and resumable); Interrupted on Ctrl-C or
    SIGTERM (run.json status `interrupted`, resumable). A halt by `hooks.stop_when` drops the
    requests in flight; the run is `incomplete` unless every item had already finished, and no
    error is raised. Works inside a running event loop too (the run then gets its own thread).
    """
    settled = plan_request(req, store)
    return run_sync(lambda: _run(settled, req, store, hooks, own_loop=True))


async def ascore_suite(req: ScoreRequest, store: RunStore, hooks: ScoreHooks = NO_HOOKS) -> Result:
    """`score_suite` for a caller already in an event loop (a notebook): the same run, awaited.
    Cancelling it leaves the run `interrupted` and resumable."""
    return await _run(plan_request(req, store), req, store, hooks, own_loop=False)


async def _run(
    settled: ScorePlan, req: ScoreRequest, store: RunStore, hooks: ScoreHooks, *, own_loop: bool
) -> Result:
    try:
        return await Run(settled, req.target, store, hooks).go(own_loop=own_loop)
    finally:
        settled.release()
