"""Asking a run's items: `concurrency` workers over the items still to do, each finished item
written at once; the run stops early when the endpoint fails (a run of dead items or tries, the
server's process gone, a silence of `--timeout`), when the caller's `stop_when` has what it
needs (the requests in flight are dropped), or when the results folder stops taking writes.

A run whose judge grades apart (scoring/judge.py) and asks each item once hands every answer to
the judge and asks its next item meanwhile.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from evalrun.endpoint.client import RequestFailed
from evalrun.endpoint.response import ItemError
from evalrun.scoring.asking import (
    Answered,
    AskContext,
    ask_item,
    judged,
    score_item,
    score_repeated,
    unanswered,
)
from evalrun.scoring.judge import Judge
from evalrun.scoring.recording import ItemWriter
from evalrun.scoring.request import ScoreHooks, ScoreRequest
from evalrun.scoring.state import DEAD_AFTER, RunState, is_dead_signal, silence_bound, silence_text
from evalrun.store import ItemRecord, RunStore
from evalrun.suite.load import Item

if TYPE_CHECKING:
    import openai


async def work(
    req: ScoreRequest,
    hooks: ScoreHooks,
    state: RunState,
    *,
    items: list[Item],
    done: dict[str, ItemRecord],
    client: openai.AsyncOpenAI,
    model: str,
    judge: Judge,
    store: RunStore,
) -> None:
    """Ask every item of `items` not in `done` (or done in error), until done or stopped: the
    run `req` asks for, reporting through `hooks`, its state in `state` (whose record is written
    already); `model` asked through `client`, answers graded by `judge`, items kept in `store`."""
    retry, progress = req.retry, hooks.progress
    server_exited = hooks.server_exited or req.target.exited
    stop_when = hooks.stop_when
    record = state.record
    assert record is not None
    state.records.update(done)  # errors too: counted until this run asks their items again
    asked = [i for i in items if i.id not in done or done[i.id].status == "error"]
    todo = iter(asked)
    threshold = min(DEAD_AFTER, max(1, len(asked)))
    counts = _counts(r for r in state.records.values() if r.status != "error")
    if progress is not None:
        progress.start(total=len(items), **counts)

    writer = ItemWriter(store, record.run_id, state.records)
    state.last_answer = time.monotonic()  # the clock starts with the asking
    bound = silence_bound(state.timeout)

    def should_stop() -> bool:
        if state.stopped is None and server_exited is not None and server_exited():
            state.stopped = "the server process exited"
        if state.stopped is None and state.activity.silent_for() >= bound:
            silenced(silence_text(state, bound))
        return state.stopped is not None or state.halted is not None or writer.error is not None

    give_up_tries = max(DEAD_AFTER, req.concurrency)

    def on_try(failure: RequestFailed | None) -> None:
        """Count failed tries across items: a hung or throttling endpoint is dead long before
        whole items (each up to `retry.attempts` timeouts) add up to DEAD_AFTER."""
        if failure is None or not is_dead_signal(failure):
            state.failed_tries = 0
            state.last_answer = time.monotonic()
            return
        state.failed_tries += 1
        quiet_s = time.monotonic() - state.last_answer
        # Many failed tries and a quiet of one deadline, or two failed tries and a quiet of two
        # (concurrency 1: otherwise 8 items of one full deadline each).
        dead = (state.failed_tries >= give_up_tries and quiet_s >= state.timeout) or (
            state.failed_tries >= 2 and quiet_s >= 2 * state.timeout
        )
        if dead and not state.stopped:
            state.stopped = (
                f"{state.failed_tries} tries in a row failed, the last: {failure.message}"
            )

    workers: list[asyncio.Future[None]] = []
    dropped: set[asyncio.Future[None]] = set()  # workers whose request a halt dropped
    cut: set[asyncio.Future[None]] = set()  # workers whose request the server's silence ended

    def silenced(why: str) -> None:
        """The server sent nothing for the bound: stop, and end the requests still in flight
        (each then recorded as an error, so a resume asks it again)."""
        if state.stopped is not None:
            return
        state.stopped = why
        me = asyncio.current_task()
        for task in workers:
            if task is not me and not task.done():
                cut.add(task)
                task.cancel()

    state.on_silence = silenced

    # Answers being graded apart (judge.apart, one ask an item): the worker asks its next item
    # meanwhile. They are graded in the order they came, so a halt drops the later ones, as it
    # drops the requests still in flight; the server falling silent does not (they are answers).
    grading: set[asyncio.Future[None]] = set()

    def halt(why: str) -> None:
        """The caller has what it needs: stop, and drop the requests still in flight."""
        state.halted = why
        me = asyncio.current_task()
        for task in [*workers, *grading]:
            if task is not me and not task.done():
                dropped.add(task)
                task.cancel()

    def answered(rec_error: ItemError | None, diagnoses: list[str], served: str | None) -> None:
        """What a finished request tells about the endpoint (before its verdict)."""
        if served and not record.model_served:
            record.model_served = served
        state.dead_streak = state.dead_streak + 1 if is_dead_signal(rec_error) else 0
        if state.dead_streak >= threshold and not state.stopped:
            state.stopped = rec_error.message if rec_error else "no answer"
        if "model_not_found" in diagnoses and not state.stopped:  # every item would fail
            state.stopped = rec_error.message if rec_error else "model not found"
            state.wrong_model = True

    def settle(rec: ItemRecord, trace: bytes | None) -> None:
        """A finished item: to disk, to the caller's stop rule, to the progress bar."""
        writer.put(rec, trace)  # state.records gets it once it is on disk
        if stop_when is not None and state.halted is None:
            why = stop_when(rec)
            if why:
                halt(why)
        if progress is not None:
            progress.advance(rec.status)

    async def grade_apart(job: Answered) -> None:
        rec, _, trace = await judged(job, judge)
        settle(rec, trace)

    ctx = AskContext(
        client=client,
        model=model,
        options=req.target.options,
        retry=retry,
        rng=random.Random(retry.seed),
        should_stop=should_stop,
        on_try=on_try,
        notice=hooks.notice or (lambda text: None),
        capture=state.capture,
        judge=judge,
    )

    async def worker() -> None:
        for item in todo:
            if should_stop():
                return
            try:
                if judge.apart and state.repeats == 1:
                    got = await ask_item(item, ctx)
                    if isinstance(got, Answered):
                        answered(None, [], got.got.model)
                        grading.add(asyncio.ensure_future(grade_apart(got)))
                        continue
                    scored = got
                else:
                    scored = await score_repeated(
                        state.repeats, functools.partial(score_item, item, ctx), should_stop
                    )
            except asyncio.CancelledError:
                if asyncio.current_task() in dropped:
                    return  # halted: this item is simply not asked (no record)
                if asyncio.current_task() not in cut:
                    raise
                rec = unanswered(item, ctx, state.stopped or "")
                writer.put(rec)
                if progress is not None:
                    progress.advance(rec.status)
                return
            rec, served, trace = scored
            answered(rec.error, rec.diagnoses, served)
            settle(rec, trace)

    workers.extend(asyncio.ensure_future(worker()) for _ in range(max(1, req.concurrency)))
    try:
        await asyncio.gather(*workers)
        await _graded_all(grading, dropped)
    finally:
        state.on_silence = None
        for task in [*workers, *grading]:  # one worker failed or we were cancelled: the others
            task.cancel()  # stop first, so nothing is put after the writer closes
        await asyncio.gather(*workers, *grading, return_exceptions=True)
        writer.close()
    if progress is not None:
        progress.finish()


async def _graded_all(
    grading: set[asyncio.Future[None]], dropped: set[asyncio.Future[None]]
) -> None:
    """Wait for the answers still being graded apart (a halt's dropped ones aside); a grading
    failure is raised."""
    for task in list(grading):
        try:
            await task
        except asyncio.CancelledError:
            if task not in dropped:
                raise


def _counts(records: Iterable[ItemRecord]) -> dict[str, int]:
    """Done, passed and errors over the records (the progress bar's start)."""
    recs = list(records)
    return {
        "done": len(recs),
        "passed": sum(r.status == "passed" for r in recs),
        "errors": sum(r.status == "error" for r in recs),
    }
