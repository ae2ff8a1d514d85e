"""Run a suite against an endpoint: bounded concurrency, write-as-you-go, resume, stop early.

A score is three steps: plan (plan.py: everything settled once, the resumed run read back), open
the target (serving/target.py: the endpoint, or the contract booted and torn down), run (here: a
`Run`, its life and its workers over the items). The entries are at the end: `score`/`ascore`
from options, `score_suite`/`ascore_suite` for a caller whose target is already reached.

Every finished item is appended to items.jsonl at once (fsync), so a crash loses only the items in
flight and `resume=` requests only the items without a final record (errors are retried). An item
whose request failed is recorded with status `error` and its cause; it is never graded. A prompt
the endpoint rejects for context length is the one exception: that is the lane's fixed limit, not a
transient fault, so it is recorded as `failed` (diagnosis `context_length`).

A `Run` checks the graders and lists the models, writes run.json's start, asks the items with
`concurrency` workers (each finished item written at once), and writes run.json's end. It stops
early when the endpoint fails (a run of dead items or tries, the server's process gone, a
silence of `--timeout`: the items then in flight are recorded as errors, so a resume asks them
again), when the caller's `stop_when` has what it needs (the requests in flight are dropped), or
when the results folder stops taking writes; Ctrl-C and SIGTERM leave the run `interrupted` and
resumable. A run whose judge grades apart (scoring/judge.py) and asks each item once hands every
answer to the judge and asks its next item meanwhile. The parts: request.py (what a caller
passes), state.py (the run's state, the endpoint's health), asking.py (one item asked and
graded), recording.py (items and run.json on disk).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import random
import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from evalrun.base.errors import EndpointError, EvalrunError, Interrupted, UsageError
from evalrun.endpoint.client import (
    RequestFailed,
    list_models,
    load_sdk,
    make_client,
    pick_model,
    run_sync,
)
from evalrun.endpoint.logprobs import Capture
from evalrun.endpoint.response import ItemError
from evalrun.provenance import Provenance, collect
from evalrun.scoring.asking import (
    Answered,
    AskContext,
    ask_item,
    check_graders,
    judged,
    score_item,
    score_repeated,
    unanswered,
)
from evalrun.scoring.judge import APART_FROM, Judge
from evalrun.scoring.plan import ScorePlan, plan, plan_request
from evalrun.scoring.recording import ItemWriter, finish, new_record
from evalrun.scoring.request import NO_HOOKS, ScoreHooks, ScoreRequest
from evalrun.scoring.state import (
    DEAD_AFTER,
    RunState,
    is_dead_signal,
    silence_bound,
    silence_text,
    watch_quiet,
)
from evalrun.serving.signals import sigterm_cancels
from evalrun.serving.target import Launcher, Target, open_target
from evalrun.store import ItemRecord, RunRecord, RunStore
from evalrun.store.export import ItemRow, write_junit
from evalrun.suite.load import Item

if TYPE_CHECKING:
    import openai

    from evalrun.scoring.options import ScoreOptions

__all__ = ["Run", "ScoreHooks", "ScoreRequest", "ascore", "ascore_suite", "score", "score_suite"]

Tasks = set[asyncio.Future[None]]


class Run:
    """One run of a plan against its reached target, reporting through `hooks`."""

    def __init__(self, plan: ScorePlan, target: Target, store: RunStore, hooks: ScoreHooks) -> None:
        self.plan, self.target, self.store, self.hooks = plan, target, store, hooks
        options = target.options
        self.state = RunState(
            record=plan.resumed,
            repeats=plan.repeats,
            capture=Capture(options.top_logprobs, options.logprob_tokens),
            lock=plan.lock,
            timeout=target.http.timeout,
        )
        self.workers: list[asyncio.Future[None]] = []
        self.dropped: Tasks = set()  # workers whose request a halt dropped
        self.cut: Tasks = set()  # workers whose request the server's silence ended
        # Answers being graded apart (judge.apart, one ask an item): the worker asks its next
        # item meanwhile. They are graded in the order they came, so a halt drops the later
        # ones, as it drops the requests in flight; the server falling silent does not.
        self.grading: Tasks = set()
        self.server_exited = hooks.server_exited or target.exited

    def go_sync(self) -> tuple[RunRecord, list[ItemRecord]]:
        """`go` from sync code, the loop the run's own (in a worker thread when the caller is
        inside a running event loop)."""
        return run_sync(lambda: self.go(own_loop=True))

    async def go(self, *, own_loop: bool) -> tuple[RunRecord, list[ItemRecord]]:
        """Run to the end; the run and its item records, in the items' order. EndpointError
        when the endpoint stopped answering, Interrupted on Ctrl-C or SIGTERM (with `own_loop`;
        a caller's cancellation is let through), each naming the stored run."""
        try:
            return await self._locked(own_loop)
        finally:
            if self.state.lock is not None:
                self.state.lock.release()

    async def _locked(self, own_loop: bool) -> tuple[RunRecord, list[ItemRecord]]:
        state, items = self.state, self.plan.items
        try:
            await self._start_and_ask(own_loop)
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:
            stop = self._interrupted(exc, own_loop)
            if stop is exc:
                raise
            raise stop from exc
        except BaseException:
            if state.record is not None and state.record.status == "running":
                finish(self.store, state.record, items, state, status="incomplete")
            raise
        record = state.record
        assert record is not None
        complete = all(i.id in state.records for i in items) and not state.stopped
        finish(self.store, record, items, state, status="complete" if complete else "incomplete")
        if self.plan.junit is not None:
            write_junit(self.plan.junit, record, self._rows())
        if state.stopped:
            raise self._stopped(record)
        return record, [state.records[i.id] for i in items if i.id in state.records]

    def _rows(self) -> list[ItemRow]:
        """The run's items as the export lists them: the selection in suite order, each with
        its final record, then records of items the selection no longer holds."""
        records, chosen = self.state.records, {i.id for i in self.plan.items}
        rows = [ItemRow(i.id, i.category, records.get(i.id)) for i in self.plan.items]
        return rows + [ItemRow(r.id, r.category, r) for r in records.values() if r.id not in chosen]

    def _interrupted(self, exc: BaseException, own_loop: bool) -> BaseException:
        """What Ctrl-C, SIGTERM or a cancellation leaves: the run `interrupted`, resumable."""
        if self.hooks.progress is not None:
            self.hooks.progress.finish()
        rec, state = self.state.record, self.state
        if rec is not None:
            finish(self.store, rec, self.plan.items, state, status="interrupted")
        if not own_loop and isinstance(exc, asyncio.CancelledError):
            return exc  # the caller's loop cancelled us: let it see its cancellation
        if rec is None:
            return Interrupted("interrupted before the run started; nothing was written")
        return Interrupted(
            f"interrupted after {len(state.records)}/{len(self.plan.items)} items; results are "
            f"saved in {self.store.run_dir(rec.run_id)}; resume with --resume {rec.run_id}"
        )

    def _stopped(self, record: RunRecord) -> EvalrunError:
        state = self.state
        if state.wrong_model:
            return self._named(
                UsageError(
                    f"the endpoint does not serve model {record.model_requested!r} "
                    f"({state.stopped}); it lists {', '.join(state.served) or 'none'}: pass "
                    f"--model with one of those"
                ),
                record,
            )
        return self._named(
            EndpointError(
                f"the endpoint stopped answering ({state.stopped}); stopped after "
                f"{len(state.records)}/{len(self.plan.items)} items; fix the server, then "
                f"`evalrun score --resume {record.run_id}`"
            ),
            record,
        )

    @staticmethod
    def _named(exc: EvalrunError, record: RunRecord) -> EvalrunError:
        """The error with the stored run it stopped, so `--json` can still print it."""
        exc.run_id = record.run_id
        return exc

    async def _start_and_ask(self, own_loop: bool) -> None:
        """Check the graders, open the client, list the models, write run.json's start; ask."""
        state = self.state
        asked = [i for i in self.plan.items if self._to_ask(i)]
        judge = Judge(apart=len(asked) * state.repeats >= APART_FROM, items=self.plan.items)
        try:
            client = await self._client(judge)
        except BaseException:
            judge.close()
            raise
        task = asyncio.current_task()
        assert task is not None
        watch = asyncio.ensure_future(watch_quiet(state, self.hooks.notice or _quiet))
        try:
            with sigterm_cancels(task) if own_loop else contextlib.nullcontext():
                model = await self._begin(client)
                await self._ask_all(asked, self._context(client, model, judge))
        finally:
            watch.cancel()
            judge.close()
            await client.close()

    def _to_ask(self, item: Item) -> bool:
        done = self.plan.done
        return item.id not in done or done[item.id].status == "error"

    async def _client(self, judge: Judge) -> openai.AsyncOpenAI:
        # A grading process imports the graders (and names their kinds) while this one imports
        # openai. With openai imported already (an earlier run in this process) there is
        # nothing to wait on meanwhile: this process asks its own registry (once a process).
        fresh = load_sdk(freeze=judge.apart)
        items = self.plan.items
        check_graders(items, await judge.kinds(here=not fresh), await judge.params_problem())
        target = self.target
        http = replace(target.http, concurrency=self.plan.limits.concurrency)  # what is in flight
        return make_client(
            target.base_url,
            api_key=target.api_key,
            http=http,
            headers=target.options.headers,
            activity=self.state.activity,
        )

    async def _begin(self, client: openai.AsyncOpenAI) -> str:
        """List the models (git runs meanwhile), write run.json's start; the model asked."""
        state, target, store = self.state, self.target, self.store
        facts = asyncio.create_task(asyncio.to_thread(_provenance))
        try:
            served = await list_models(client, target.base_url, target.api_key)
        finally:
            provenance = await facts
        state.served = served
        if state.record is None:
            chosen = pick_model(target.model, served, target.base_url)
            state.record = new_record(self.plan, target, store, chosen, provenance)
            state.lock = store.lock(state.record.run_id)
        else:
            chosen = (
                target.model
                or state.record.model_requested
                or state.record.model_served
                or pick_model(None, served, target.base_url)
            )
        record = state.record
        record.status = "running"
        record.pid, record.host = os.getpid(), socket.gethostname()  # `stale` once gone
        store.write_run(record)
        return chosen

    def _context(self, client: openai.AsyncOpenAI, model: str, judge: Judge) -> AskContext:
        retry = self.plan.retry
        return AskContext(
            client=client,
            model=model,
            options=self.target.options,
            retry=retry,
            rng=random.Random(retry.seed),
            should_stop=self.should_stop,
            on_try=self.on_try,
            notice=self.hooks.notice or _quiet,
            capture=self.state.capture,
            judge=judge,
        )

    async def _ask_all(self, asked: list[Item], ctx: AskContext) -> None:
        """Ask every item of `asked` until done or stopped, `concurrency` at a time."""
        state, progress = self.state, self.hooks.progress
        record = state.record
        assert record is not None
        state.records.update(self.plan.done)  # errors too: counted until asked again
        self.todo: Iterator[Item] = iter(asked)
        self.threshold = min(DEAD_AFTER, max(1, len(asked)))
        self.give_up_tries = max(DEAD_AFTER, self.plan.limits.concurrency)
        if progress is not None:
            counts = _counts(r for r in state.records.values() if r.status != "error")
            progress.start(total=len(self.plan.items), **counts)
        self.writer = ItemWriter(self.store, record.run_id, state.records)
        state.last_answer = time.monotonic()  # the clock starts with the asking
        self.bound = silence_bound(state.timeout)
        state.on_silence = self.silenced
        workers = max(1, self.plan.limits.concurrency)
        self.workers.extend(asyncio.ensure_future(self.worker(ctx)) for _ in range(workers))
        try:
            await asyncio.gather(*self.workers)
            await _graded_all(self.grading, self.dropped)
        finally:
            state.on_silence = None
            for task in [*self.workers, *self.grading]:  # one worker failed or we were
                task.cancel()  # cancelled: the others stop first, so nothing is put late
            await asyncio.gather(*self.workers, *self.grading, return_exceptions=True)
            self.writer.close()
        if progress is not None:
            progress.finish()

    def should_stop(self) -> bool:
        state, exited = self.state, self.server_exited
        if state.stopped is None and exited is not None and exited():
            state.stopped = "the server process exited"
        if state.stopped is None and state.activity.silent_for() >= self.bound:
            self.silenced(silence_text(state, self.bound))
        return (
            state.stopped is not None or state.halted is not None or self.writer.error is not None
        )

    def on_try(self, failure: RequestFailed | None) -> None:
        """Count failed tries across items: a hung or throttling endpoint is dead long before
        whole items (each up to `retry.attempts` timeouts) add up to DEAD_AFTER."""
        state = self.state
        if failure is None or not is_dead_signal(failure):
            state.failed_tries = 0
            state.last_answer = time.monotonic()
            return
        state.failed_tries += 1
        quiet_s = time.monotonic() - state.last_answer
        # Many failed tries and a quiet of one deadline, or two failed tries and a quiet of two
        # (concurrency 1: otherwise 8 items of one full deadline each).
        dead = (state.failed_tries >= self.give_up_tries and quiet_s >= state.timeout) or (
            state.failed_tries >= 2 and quiet_s >= 2 * state.timeout
        )
        if dead and not state.stopped:
            state.stopped = (
                f"{state.failed_tries} tries in a row failed, the last: {failure.message}"
            )

    def silenced(self, why: str) -> None:
        """The server sent nothing for the bound: stop, and end the requests still in flight
        (each then recorded as an error, so a resume asks it again)."""
        if self.state.stopped is not None:
            return
        self.state.stopped = why
        self._cancel(self.workers, self.cut)

    def halt(self, why: str) -> None:
        """The caller has what it needs: stop, and drop the requests still in flight."""
        self.state.halted = why
        self._cancel([*self.workers, *self.grading], self.dropped)

    @staticmethod
    def _cancel(tasks: Iterable[asyncio.Future[None]], marked: Tasks) -> None:
        me = asyncio.current_task()
        for task in tasks:
            if task is not me and not task.done():
                marked.add(task)
                task.cancel()

    def answered(self, error: ItemError | None, diagnoses: list[str], served: str | None) -> None:
        """What a finished request tells about the endpoint (before its verdict)."""
        state = self.state
        record = state.record
        assert record is not None
        if served and not record.model_served:
            record.model_served = served
        state.dead_streak = state.dead_streak + 1 if is_dead_signal(error) else 0
        if state.dead_streak >= self.threshold and not state.stopped:
            state.stopped = error.message if error else "no answer"
        if "model_not_found" in diagnoses and not state.stopped:  # every item would fail
            state.stopped = error.message if error else "model not found"
            state.wrong_model = True

    def settle(self, rec: ItemRecord, trace: bytes | None) -> None:
        """A finished item: to disk, to the caller's stop rule, to the progress bar."""
        self.writer.put(rec, trace)  # state.records gets it once it is on disk
        stop_when = self.hooks.stop_when
        if stop_when is not None and self.state.halted is None:
            why = stop_when(rec)
            if why:
                self.halt(why)
        if self.hooks.progress is not None:
            self.hooks.progress.advance(rec.status)

    async def grade_apart(self, job: Answered, judge: Judge) -> None:
        rec, _, trace = await judged(job, judge)
        self.settle(rec, trace)

    async def worker(self, ctx: AskContext) -> None:
        for item in self.todo:
            if self.should_stop():
                return
            try:
                if ctx.judge.apart and self.state.repeats == 1:
                    got = await ask_item(item, ctx)
                    if isinstance(got, Answered):
                        self.answered(None, [], got.got.model)
                        self.grading.add(asyncio.ensure_future(self.grade_apart(got, ctx.judge)))
                        continue
                    scored = got
                else:
                    scored = await score_repeated(
                        self.state.repeats,
                        functools.partial(score_item, item, ctx),
                        self.should_stop,
                    )
            except asyncio.CancelledError:
                if not self._cut_short(item, ctx):
                    raise
                return
            rec, served, trace = scored
            self.answered(rec.error, rec.diagnoses, served)
            self.settle(rec, trace)

    def _cut_short(self, item: Item, ctx: AskContext) -> bool:
        """A worker cancelled: by a halt (the item is not asked: no record) or by the server's
        silence (recorded as an error); False when neither did (the run itself is cancelled)."""
        me = asyncio.current_task()
        if me in self.dropped:
            return True
        if me not in self.cut:
            return False
        rec = unanswered(item, ctx, self.state.stopped or "")
        self.writer.put(rec)
        if self.hooks.progress is not None:
            self.hooks.progress.advance(rec.status)
        return True


def _quiet(text: str) -> None:
    """No one to tell."""


def _provenance() -> Provenance:
    return collect(Path.cwd())


async def _graded_all(grading: Tasks, dropped: Tasks) -> None:
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


# ---------------------------------------------------------------- the entries

Result = tuple[RunRecord, list[ItemRecord]]


def score(
    options: ScoreOptions, hooks: ScoreHooks = NO_HOOKS, *, launcher: Launcher | None = None
) -> Result:
    """Score as the options say and store the run: plan, open the target, run. Works from sync
    code and from inside a running event loop alike. A run that stops early raises (the error
    names the stored run: `run_id`)."""
    store = RunStore(options.results)
    with (
        plan(options, store) as settled,
        open_target(
            settled.spec, settled.contract, settled.log_path, watch=hooks.boot, launcher=launcher
        ) as target,
    ):
        return Run(settled, target, store, hooks).go_sync()


async def ascore(options: ScoreOptions, hooks: ScoreHooks = NO_HOOKS) -> Result:
    """`score` awaited by a caller inside an event loop: an endpoint is asked in the caller's
    loop (cancelling leaves the run `interrupted`); a contract boots in a worker thread."""
    if options.booted:
        return await asyncio.to_thread(score, options, hooks)
    store = RunStore(options.results)
    with plan(options, store) as settled, open_target(settled.spec) as target:
        return await Run(settled, target, store, hooks).go(own_loop=False)


def score_suite(req: ScoreRequest, store: RunStore, hooks: ScoreHooks = NO_HOOKS) -> Result:
    """Run (or resume) a suite against a reached target; store and return the run.

    Raises EndpointError when the endpoint is unreachable, not OpenAI-compatible, or stops
    answering mid-run (the run is then `incomplete` and resumable); Interrupted on Ctrl-C or
    SIGTERM (run.json status `interrupted`, resumable). A halt by `hooks.stop_when` drops the
    requests in flight; the run is `incomplete` unless every item had already finished, and no
    error is raised. Works inside a running event loop too (the run then gets its own thread).
    """
    with plan_request(req, store) as settled:
        return Run(settled, req.target, store, hooks).go_sync()


async def ascore_suite(req: ScoreRequest, store: RunStore, hooks: ScoreHooks = NO_HOOKS) -> Result:
    """`score_suite` for a caller already in an event loop (a notebook): the same run, awaited.
    Cancelling it leaves the run `interrupted` and resumable."""
    with plan_request(req, store) as settled:
        return await Run(settled, req.target, store, hooks).go(own_loop=False)
