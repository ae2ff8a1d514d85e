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
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import queue
import random
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from evalrun import __version__
from evalrun.endpoint.activity import Activity
from evalrun.endpoint.client import (
    RequestFailed,
    RetryPolicy,
    chat_attempt,
    list_models,
    make_client,
    normalise_endpoint,
    pick_model,
    run_sync,
)
from evalrun.endpoint.diagnose import diagnose_error, diagnose_response
from evalrun.endpoint.logprobs import Capture, TokenTrace, refusal
from evalrun.endpoint.options import RequestOptions, options_differ
from evalrun.endpoint.response import ItemError
from evalrun.errors import (
    ConfigError,
    EndpointError,
    EvalrunError,
    Interrupted,
    SuiteError,
    UsageError,
)
from evalrun.grading.registry import Grade
from evalrun.jsondata import JSONObject
from evalrun.scoring.judge import APART_FROM, Judge
from evalrun.serving.signals import sigterm_cancels
from evalrun.serving.target import BootProgress, Launcher, Target, TargetSpec, boot_target
from evalrun.store import (
    ItemRecord,
    RunRecord,
    RunStore,
    SuiteRef,
    claim_folder,
    new_run_id,
    now_iso,
    slug,
    summarize,
)
from evalrun.store.lock import RunLock
from evalrun.store.tokens import append_traces
from evalrun.suite.load import GraderSpec, Item, Suite
from evalrun.suite.select import Selection

if TYPE_CHECKING:
    import openai

# Consecutive items failing at the transport level, with 5xx or 429, or with a body that is not a
# chat completion, before we call the endpoint dead.
DEAD_AFTER = 8
DEAD_KINDS = frozenset({"connect", "timeout", "bad_response", "tls"})
DEAD_STATUSES = frozenset({429})
QUIET_NOTICE_S = 60.0  # silence from the server told to the user after this (or half --timeout)


def silence_bound(timeout: float) -> float:
    """Seconds the server may send nothing while requests wait before the run calls it dead: the
    item's own deadline (--timeout). Any request in flight since the last byte has timed out by
    then; one asked later has seen nothing either, and is recorded as an error to ask again."""
    return timeout


@dataclass(frozen=True)
class ScoreRequest:
    """One scoring run: the target, the suite and how much of it (the hooks are separate)."""

    target: Target
    suite: Suite
    label: str | None = None
    concurrency: int = 16
    selection: Selection = Selection()  # which items (default: the whole suite)
    repeats: int = 1  # ask every item this many times (score --repeats K)
    resume: str | None = None  # a run id to finish
    run_id: str | None = None  # fixes the id of a new run (booted runs need it for server.log)
    retry: RetryPolicy = RetryPolicy()


class Progress(Protocol):
    """What the runner reports progress to (scoring.report.ProgressBar is one)."""

    def start(self, *, total: int, done: int = 0, passed: int = 0, errors: int = 0) -> None: ...
    def advance(self, status: str) -> None: ...
    def finish(self) -> None: ...


@dataclass(frozen=True)
class ScoreHooks:
    """Callbacks into a run. `server_exited` says whether the booted server died (the run then
    stops at once instead of retrying into a dead port); `stop_when` sees each finished item and
    may end the run early by returning why (bisect does once garble is certain)."""

    progress: Progress | None = None
    server_exited: Callable[[], bool] | None = None  # default: the target's own
    stop_when: Callable[[ItemRecord], str | None] | None = None
    notice: Callable[[str], None] | None = None  # one line when the run waits on the server


class _ItemWriter:
    """Appends finished items from a thread, so the event loop never waits for an fsync.

    Items finishing while one fsync runs go out together in the next (group commit); a crash
    loses the items in flight plus at most one batch waiting for its fsync.
    """

    def __init__(self, store: RunStore, run_id: str, written: dict[str, ItemRecord]) -> None:
        self.store, self.run_id = store, run_id
        self.written = written  # the records items.jsonl holds: all a summary may count
        self.error: OSError | None = None
        self._queue: queue.SimpleQueue[tuple[ItemRecord, TokenTrace | None] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._loop, name="evalrun-items", daemon=True)
        self._thread.start()

    def put(self, rec: ItemRecord, trace: TokenTrace | None = None) -> None:
        self._queue.put((rec, trace))

    def close(self) -> None:
        """Write what is queued, stop; ConfigError if the results dir stopped taking writes."""
        self._queue.put(None)
        self._thread.join()
        if self.error is not None:
            raise store_full(self.store, self.run_id, self.error)

    def _loop(self) -> None:
        while True:
            batch = [self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get())
            items = [b[0] for b in batch if b is not None]
            traces = [b[1] for b in batch if b is not None and b[1] is not None]
            if items and self.error is None:
                try:
                    if traces:  # first: an item on disk has its tokens on disk
                        append_traces(self.store.run_dir(self.run_id), traces)
                    self.store.append_items(self.run_id, items)
                except OSError as exc:
                    self.error = exc
                else:
                    self.written.update((i.id, i) for i in items)
            if len(items) != len(batch):
                return


def store_full(store: RunStore, run_id: str, exc: OSError) -> ConfigError:
    """The one-line error of a results folder that stopped taking writes (disk full, ...)."""
    return ConfigError(
        f"cannot write to {store.run_dir(run_id)} ({exc.strerror or exc}); the run stopped "
        f"asking; free disk space (or pass --results DIR), then --resume {run_id}"
    )


@dataclass
class _State:
    record: RunRecord | None = None
    records: dict[str, ItemRecord] = field(default_factory=dict)  # stored in items.jsonl
    dead_streak: int = 0
    failed_tries: int = 0  # consecutive failed tries (any item) since the last answer
    last_answer: float = field(default_factory=time.monotonic)
    activity: Activity = field(default_factory=Activity)  # the server's silence (activity.py)
    on_silence: Callable[[str], None] | None = None  # stops the run once the server fell silent
    timeout: float = 120.0  # per try; failed tries give up only after this long without answers
    stopped: str | None = None  # why the run stopped early: the endpoint failed
    halted: str | None = None  # why the caller's stop_when ended the run early (not a failure)
    wrong_model: bool = False  # the endpoint said it does not serve the model we send
    served: list[str] = field(default_factory=list)
    repeats: int = 1  # requests per item (score --repeats K)
    lock: RunLock | None = None  # held while this process writes the run (store/lock.py)
    capture: Capture = field(default_factory=lambda: Capture(None, 0))  # logprobs asked


def build_params(item: Item, model: str, options: RequestOptions) -> JSONObject:
    """Keyword arguments of chat.completions.create for one item: the run's sampling options,
    its max_tokens (scaled), its tools/tool_choice, plus the extra body."""
    params: JSONObject = {
        "model": model,
        "messages": item.messages,
        **options.body(item.max_tokens),
    }
    if item.tools is not None:
        params["tools"] = item.tools
    if item.tool_choice is not None:
        params["tool_choice"] = item.tool_choice
    if options.extra_body:
        params["extra_body"] = options.extra_body
    return params


def _request_record(params: JSONObject) -> JSONObject:
    """The request parameters kept in items.jsonl (messages are pinned by the suite sha256)."""
    out = {k: v for k, v in params.items() if k not in ("messages", "extra_body")}
    if "extra_body" in params:
        out["extra"] = params["extra_body"]
    return out


def expects_tool_call(spec: GraderSpec) -> bool:
    """Whether an item's grader passes only a tool call: `tool_call` naming a function, `all`
    with such a part, `any` whose every part is one."""
    params = spec.params()
    if spec.kind == "tool_call":
        return params.get("name") is not None
    subs = [GraderSpec(**sub) for sub in params.get("graders") or [] if isinstance(sub, dict)]
    if spec.kind == "all":
        return any(expects_tool_call(sub) for sub in subs)
    if spec.kind == "any":
        return bool(subs) and all(expects_tool_call(sub) for sub in subs)
    return False


def _check_graders(items: list[Item]) -> None:
    from evalrun.grading.registry import GRADERS

    unknown = sorted({i.grader.kind for i in items} - set(GRADERS))
    if unknown:
        raise SuiteError(
            f"unknown grader kind(s) {', '.join(unknown)}; known: "
            f"{', '.join(sorted(GRADERS))}; fix the suite items"
        )


CONTEXT_REJECTED = "prompt rejected: longer than the endpoint's context window"


Scored = tuple[ItemRecord, str | None, TokenTrace | None]  # record, model served, its tokens


@dataclass
class _Answered:
    """An item the endpoint answered, its verdict still to come."""

    item: Item
    base: JSONObject
    got: Any  # endpoint.client's Attempt: the response, its tries, the model served
    trace: TokenTrace | None


async def _score_item(
    item: Item,
    client: openai.AsyncOpenAI,
    model: str,
    options: RequestOptions,
    retry: RetryPolicy,
    rng: random.Random,
    should_stop: Callable[[], bool],
    on_try: Callable[[RequestFailed | None], None],
    notice: Callable[[str], None] = lambda text: None,
    capture: Capture | None = None,
    judge: Judge | None = None,
) -> Scored:
    """Ask one item and grade the answer (an item in error is never graded)."""
    asked = await _ask_item(
        item, client, model, options, retry, rng, should_stop, on_try, notice, capture
    )
    if not isinstance(asked, _Answered):
        return asked
    return await _judged(asked, judge)


async def _judged(answered: _Answered, judge: Judge | None) -> Scored:
    """The record of an answered item, graded by the run's judge (inline when None)."""
    from evalrun.grading.pattern import GradeTimeout

    item, resp = answered.item, answered.got.response
    try:
        if judge is None:
            from evalrun.grading.registry import grade

            verdict = grade(item, resp)  # runs the garble detector too: a garbled answer fails
        else:
            verdict = await judge.grade(item, resp)
    except GradeTimeout as exc:  # the suite's pattern, not the model, is at fault: never graded
        return (
            ItemRecord(
                **answered.base,
                status="error",
                response=resp,
                error=ItemError(kind="grader_timeout", message=str(exc)),
                attempts=answered.got.attempts,
                latency_s=resp.latency_s,
                finished_at=now_iso(),
            ),
            answered.got.model,
            answered.trace,
        )
    return (
        ItemRecord(
            **answered.base,
            status="passed" if verdict.passed else "failed",
            response=resp,
            grade=verdict.model_copy(update={"garble": None}),  # the record keeps it as `garble`
            diagnoses=diagnose_response(
                resp, tools_offered=bool(item.tools), tool_expected=expects_tool_call(item.grader)
            ),
            garble=verdict.garble,
            attempts=answered.got.attempts,
            latency_s=resp.latency_s,
            finished_at=now_iso(),
        ),
        answered.got.model,
        answered.trace,
    )


async def _ask_item(
    item: Item,
    client: openai.AsyncOpenAI,
    model: str,
    options: RequestOptions,
    retry: RetryPolicy,
    rng: random.Random,
    should_stop: Callable[[], bool],
    on_try: Callable[[RequestFailed | None], None],
    notice: Callable[[str], None] = lambda text: None,
    capture: Capture | None = None,
) -> Scored | _Answered:
    """Ask one item: its answer to grade, or its final record when the request failed."""
    capture = capture or Capture(None, 0)
    asked = capture.body()
    params = {**build_params(item, model, options), **asked}
    base: JSONObject = {
        "id": item.id,
        "category": item.category,
        "request": _request_record(params),
    }
    try:
        got = await chat_attempt(
            client,
            params,
            retry=retry,
            rng=rng,
            should_stop=should_stop,
            on_try=on_try,
            on_wait=lambda text: notice(f"{text} on {item.id}"),
        )
    except RequestFailed as exc:
        if asked and refusal(exc.message, exc.http_status):
            # The endpoint will not give logprobs: noted once, this item asked again without.
            capture.refuse(exc.message)
            return await _ask_item(
                item, client, model, options, retry, rng, should_stop, on_try, notice, capture
            )
        error = exc.as_error()
        diagnoses = diagnose_error(error)
        if "context_length" in diagnoses:
            # The serving contract cannot take this prompt at all: deterministic, so not an
            # error to retry but a failure of the lane (a shrunken max-model-len must cost score).
            return (
                ItemRecord(
                    **base,
                    status="failed",
                    error=error,
                    diagnoses=diagnoses,
                    grade=Grade(passed=False, detail=CONTEXT_REJECTED),
                    attempts=exc.attempts,
                    finished_at=now_iso(),
                ),
                None,
                None,
            )
        return (
            ItemRecord(
                **base,
                status="error",
                error=error,
                diagnoses=diagnoses,
                attempts=exc.attempts,
                finished_at=now_iso(),
            ),
            None,
            None,
        )
    trace = capture.take(got.response.logprobs, item.id) if asked else None
    # the raw logprobs (thousands of objects an answer) must not live on in the run's records:
    # the garbage collector would walk them all, for the rest of the run
    got.response.logprobs = None
    return _Answered(item, base, got, trace)


async def _score_repeated(
    repeats: int,
    ask: Callable[[], Awaitable[Scored]],
    should_stop: Callable[[], bool],
) -> Scored:
    """Ask an item `repeats` times (`ask` scores it once), one after another: the first run's
    record, with every run's {status, detail, garbled} in `repeats` (compare pairs items on their
    majority outcome)."""
    rec, served, trace = await ask()  # the first answer's tokens are the item's
    if repeats == 1:
        return rec, served, trace
    runs = [rec]
    for _ in range(repeats - 1):
        if should_stop():
            break
        more, again, _ = await ask()
        runs.append(more)
        served = served or again
    rec.repeats = [r.outcome() for r in runs]
    return rec, served, trace


def _is_dead_signal(failure: RequestFailed | ItemError | None) -> bool:
    """A failure that says the endpoint, not the item, is broken (a try's or a record's error)."""
    if failure is None:
        return False
    status = failure.http_status
    return (
        failure.kind in DEAD_KINDS
        or status in DEAD_STATUSES
        or (status is not None and status >= 500)
    )


async def _run(
    state: _State,
    req: ScoreRequest,
    hooks: ScoreHooks,
    *,
    base_url: str,
    items: list[Item],
    done: dict[str, ItemRecord],
    store: RunStore,
    selection: JSONObject,
    own_loop: bool,
) -> None:
    target = req.target
    to_grade = sum(i.id not in done or done[i.id].status == "error" for i in items)
    judge = Judge(apart=to_grade * state.repeats >= APART_FROM)  # first: forks before threads
    http = replace(target.http, concurrency=req.concurrency)  # the pool holds what is in flight
    client = make_client(
        base_url,
        api_key=target.api_key,
        http=http,
        headers=target.options.headers,
        activity=state.activity,
    )
    state.timeout = target.http.timeout
    task = asyncio.current_task()
    assert task is not None
    watch = asyncio.ensure_future(_watch_quiet(state, hooks.notice or (lambda text: None)))
    try:
        with sigterm_cancels(task) if own_loop else contextlib.nullcontext():
            facts = asyncio.create_task(asyncio.to_thread(_provenance))  # git runs meanwhile
            try:
                served = await list_models(client, base_url, target.api_key)
            finally:
                provenance = await facts
            state.served = served
            if state.record is None:
                chosen = pick_model(target.model, served, base_url)
                label = req.label or slug(chosen)
                state.record = RunRecord(
                    run_id=req.run_id or unique_run_id(store, label),
                    label=slug(label),
                    evalrun_version=__version__,
                    suite=SuiteRef(
                        name=req.suite.name,
                        version=req.suite.version,
                        sha256=req.suite.sha256,
                        path=req.suite.path,
                    ),
                    endpoint=base_url,
                    model_requested=target.model,
                    sampling={
                        **target.options.record(),
                        **({"repeats": state.repeats} if state.repeats > 1 else {}),
                    },
                    selection=selection,
                    contract=target.contract,
                    server=target.server,
                    provenance=provenance,
                    started_at=now_iso(),
                )
                state.lock = RunLock(store.run_dir(state.record.run_id)).acquire()
            else:
                chosen = (
                    target.model
                    or state.record.model_requested
                    or state.record.model_served
                    or pick_model(None, served, base_url)
                )
            record = state.record
            record.status = "running"
            record.pid, record.host = os.getpid(), socket.gethostname()  # `stale` once gone
            store.write_run(record)
            await _work(state, client, chosen, items, done, store, req, hooks, judge)
    finally:
        watch.cancel()
        judge.close()
        await client.close()


async def _work(
    state: _State,
    client: openai.AsyncOpenAI,
    model: str,
    items: list[Item],
    done: dict[str, ItemRecord],
    store: RunStore,
    req: ScoreRequest,
    hooks: ScoreHooks,
    judge: Judge,
) -> None:
    retry, progress = req.retry, hooks.progress
    server_exited = hooks.server_exited or req.target.exited
    stop_when = hooks.stop_when
    record = state.record
    assert record is not None
    state.records.update(done)  # errors too: counted until this run asks their items again
    asked = [i for i in items if i.id not in done or done[i.id].status == "error"]
    todo = iter(asked)
    rng = random.Random(retry.seed)
    threshold = min(DEAD_AFTER, max(1, len(asked)))
    counts = _counts(r for r in state.records.values() if r.status != "error")
    if progress is not None:
        progress.start(total=len(items), **counts)

    writer = _ItemWriter(store, record.run_id, state.records)
    state.last_answer = time.monotonic()  # the clock starts with the asking
    bound = silence_bound(state.timeout)

    def should_stop() -> bool:
        if state.stopped is None and server_exited is not None and server_exited():
            state.stopped = "the server process exited"
        if state.stopped is None and state.activity.silent_for() >= bound:
            silenced(_silence_text(state, bound))
        return state.stopped is not None or state.halted is not None or writer.error is not None

    give_up_tries = max(DEAD_AFTER, req.concurrency)

    def on_try(failure: RequestFailed | None) -> None:
        """Count failed tries across items: a hung or throttling endpoint is dead long before
        whole items (each up to `retry.attempts` timeouts) add up to DEAD_AFTER."""
        if failure is None or not _is_dead_signal(failure):
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
        state.dead_streak = state.dead_streak + 1 if _is_dead_signal(rec_error) else 0
        if state.dead_streak >= threshold and not state.stopped:
            state.stopped = rec_error.message if rec_error else "no answer"
        if "model_not_found" in diagnoses and not state.stopped:  # every item would fail
            state.stopped = rec_error.message if rec_error else "model not found"
            state.wrong_model = True

    def settle(rec: ItemRecord, trace: TokenTrace | None) -> None:
        """A finished item: to disk, to the caller's stop rule, to the progress bar."""
        writer.put(rec, trace)  # state.records gets it once it is on disk
        if stop_when is not None and state.halted is None:
            why = stop_when(rec)
            if why:
                halt(why)
        if progress is not None:
            progress.advance(rec.status)

    async def grade_apart(job: _Answered) -> None:
        rec, _, trace = await _judged(job, judge)
        settle(rec, trace)

    def ask(item: Item) -> Awaitable[Scored | _Answered]:
        return _ask_item(
            item,
            client,
            model,
            req.target.options,
            retry,
            rng,
            should_stop,
            on_try,
            notice,
            state.capture,
        )

    async def worker() -> None:
        for item in todo:
            if should_stop():
                return
            try:
                if judge.apart and state.repeats == 1:
                    got = await ask(item)
                    if isinstance(got, _Answered):
                        answered(None, [], got.got.model)
                        grading.add(asyncio.ensure_future(grade_apart(got)))
                        continue
                    scored = got
                else:
                    scored = await _score_repeated(
                        state.repeats,
                        functools.partial(_judged_ask, ask, item, judge),
                        should_stop,
                    )
            except asyncio.CancelledError:
                if asyncio.current_task() in dropped:
                    return  # halted: this item is simply not asked (no record)
                if asyncio.current_task() not in cut:
                    raise
                rec = _unanswered(item, model, req.target.options, state.stopped or "")
                writer.put(rec)
                if progress is not None:
                    progress.advance(rec.status)
                return
            rec, served, trace = scored
            answered(rec.error, rec.diagnoses, served)
            settle(rec, trace)

    notice = hooks.notice or (lambda text: None)
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


async def _judged_ask(
    ask: Callable[[Item], Awaitable[Scored | _Answered]], item: Item, judge: Judge
) -> Scored:
    """Ask an item and wait for its verdict."""
    got = await ask(item)
    return await _judged(got, judge) if isinstance(got, _Answered) else got


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


async def _watch_quiet(state: _State, notice: Callable[[str], None]) -> None:
    """Say when the server has sent nothing for half a deadline (at most a minute) while requests
    wait, and again each such stretch, so a user can tell a dead engine from a slow one; once
    the silence reaches `silence_bound`, stop the run (`state.on_silence`, while items are asked;
    the model check at the start has its own --timeout)."""
    every = min(QUIET_NOTICE_S, state.timeout / 2)
    bound = silence_bound(state.timeout)
    step = min(1.0, every / 4)
    told = 0
    while True:
        await asyncio.sleep(step)
        quiet = state.activity.silent_for()
        if quiet >= bound and state.on_silence is not None:
            state.on_silence(_silence_text(state, bound))
        if quiet < every:
            told = 0
        elif int(quiet // every) > told and not state.stopped:
            told = int(quiet // every)
            notice(
                f"no answer from the server for {told * every:g} s; the run stops after "
                f"{bound:g} s of silence (--timeout)"
            )


def _silence_text(state: _State, bound: float) -> str:
    """Why a silent server stopped the run (what `state.stopped` says)."""
    n = state.activity.in_flight
    waiting = f", {n} request{'s' * (n != 1)} waiting" if n else ""
    return f"nothing from the server for {bound:g} s (--timeout){waiting}"


def _unanswered(item: Item, model: str, options: RequestOptions, why: str) -> ItemRecord:
    """The record of an item whose request the run ended (the server had fallen silent)."""
    return ItemRecord(
        id=item.id,
        category=item.category,
        request=_request_record(build_params(item, model, options)),
        status="error",
        error=ItemError(
            kind="timeout",
            message=f"not answered: {why}; the run stopped, --resume asks this item again",
        ),
        finished_at=now_iso(),
    )


def unique_run_id(store: RunStore, label: str) -> str:
    """A new run id, its folder claimed; `-2`, `-3`, ... when a run of that label started the
    same second."""
    return claim_folder(store.root, new_run_id(label)).name


def _counts(records: Any) -> dict[str, int]:
    recs = list(records)
    return {
        "done": len(recs),
        "passed": sum(r.status == "passed" for r in recs),
        "errors": sum(r.status == "error" for r in recs),
    }


def _provenance() -> JSONObject:
    from evalrun.provenance import collect

    return collect(Path.cwd())


def score_suite(
    req: ScoreRequest, store: RunStore, hooks: ScoreHooks = ScoreHooks()
) -> tuple[RunRecord, list[ItemRecord]]:
    """Run (or resume) a suite against a target; store and return the run.

    Raises EndpointError when the endpoint is unreachable, not OpenAI-compatible, or stops
    answering mid-run (the run is then `incomplete` and resumable); Interrupted on Ctrl-C or
    SIGTERM (run.json status `interrupted`, resumable). A halt by `hooks.stop_when` drops the
    requests in flight; the run is `incomplete` unless every item had already finished, and no
    error is raised. Works inside a running event loop too (the run then gets its own thread).
    """
    return run_sync(lambda: _score(req, store, hooks, own_loop=True))


async def ascore_suite(
    req: ScoreRequest, store: RunStore, hooks: ScoreHooks = ScoreHooks()
) -> tuple[RunRecord, list[ItemRecord]]:
    """`score_suite` for a caller already in an event loop (a notebook): the same run, awaited.
    Cancelling it leaves the run `interrupted` and resumable."""
    return await _score(req, store, hooks, own_loop=False)


def _select(
    req: ScoreRequest, store: RunStore, state: _State
) -> tuple[list[Item], dict[str, ItemRecord], JSONObject]:
    """(items to score, items already done, selection for run.json); loads a resumed run."""
    suite = req.suite
    if req.resume:
        # One writer a run: a second --resume refuses before it reads or asks anything.
        state.lock = RunLock(store.run_dir(store.resolve(req.resume))).acquire()
        state.record = store.load_run(req.resume)
        state.repeats = int(state.record.sampling.get("repeats", 1))  # as the run began
        if state.record.suite.sha256 != suite.sha256:
            raise SuiteError(
                f"run {state.record.run_id} used {state.record.suite.name}-v"
                f"{state.record.suite.version} ({state.record.suite.sha256[:12]}), not this suite "
                f"({suite.sha256[:12]}); resume needs the same suite, or start a new run"
            )
        differ = options_differ(state.record.sampling, req.target.options.record())
        if differ:
            raise UsageError(
                f"run {state.record.run_id} was sent other request options ({', '.join(differ)}: "
                f"{state.record.sampling}); resume with the same options, or start a new run"
            )
        items = Selection.from_record(state.record.selection).pick(suite)
        done = {r.id: r for r in store.load_items(state.record.run_id)}  # errors are asked again
        return items, done, state.record.selection
    items = req.selection.pick(suite)
    return items, {}, req.selection.record(items)


async def _score(
    req: ScoreRequest, store: RunStore, hooks: ScoreHooks, *, own_loop: bool
) -> tuple[RunRecord, list[ItemRecord]]:
    if req.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {req.concurrency}")
    if not 1 <= req.repeats <= 20:
        raise UsageError(f"--repeats must be between 1 and 20, got {req.repeats}")
    store.ensure_writable()
    base_url = normalise_endpoint(req.target.base_url)
    options = req.target.options
    state = _State(
        repeats=req.repeats, capture=Capture(options.top_logprobs, options.logprob_tokens)
    )
    try:
        return await _score_locked(req, store, hooks, state, base_url, own_loop=own_loop)
    finally:
        if state.lock is not None:
            state.lock.release()


async def _score_locked(
    req: ScoreRequest,
    store: RunStore,
    hooks: ScoreHooks,
    state: _State,
    base_url: str,
    *,
    own_loop: bool,
) -> tuple[RunRecord, list[ItemRecord]]:
    items, done, selection = _select(req, store, state)
    _check_graders(items)
    bar = hooks.progress
    try:
        await _run(
            state,
            req,
            hooks,
            base_url=base_url,
            items=items,
            done=done,
            store=store,
            selection=selection,
            own_loop=own_loop,
        )
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        if bar is not None:
            bar.finish()
        rec = state.record
        if rec is not None:
            _finish(store, rec, items, state, status="interrupted")
        if not own_loop and isinstance(exc, asyncio.CancelledError):
            raise  # the caller's loop cancelled us: let it see its cancellation
        if rec is None:
            raise Interrupted("interrupted before the run started; nothing was written") from exc
        raise Interrupted(
            f"interrupted after {len(state.records)}/{len(items)} items; results are saved in "
            f"{store.run_dir(rec.run_id)}; resume with --resume {rec.run_id}"
        ) from exc
    except BaseException:
        if state.record is not None and state.record.status == "running":
            _finish(store, state.record, items, state, status="incomplete")
        raise
    record = state.record
    assert record is not None
    complete = all(i.id in state.records for i in items) and not state.stopped
    _finish(store, record, items, state, status="complete" if complete else "incomplete")
    if state.wrong_model:
        raise _with_run(
            UsageError(
                f"the endpoint does not serve model {record.model_requested!r} ({state.stopped}); "
                f"it lists {', '.join(state.served) or 'none'}: pass --model with one of those"
            ),
            record,
        )
    if state.stopped:
        raise _with_run(
            EndpointError(
                f"the endpoint stopped answering ({state.stopped}); stopped after "
                f"{len(state.records)}/{len(items)} items; fix the server, then "
                f"`evalrun score --resume {record.run_id}`"
            ),
            record,
        )
    ordered = [state.records[i.id] for i in items if i.id in state.records]
    return record, ordered


def _with_run(exc: EvalrunError, record: RunRecord) -> EvalrunError:
    """Attach the stored run to an error, so `--json` can still print it."""
    exc.run_id = record.run_id  # type: ignore[attr-defined]
    return exc


def _finish(
    store: RunStore, record: RunRecord, items: list[Item], state: _State, status: str
) -> None:
    record.status = status  # type: ignore[assignment]
    record.ended_at = now_iso()
    record.summary = summarize(items, state.records)
    record.fidelity = state.capture.record(record.fidelity)
    try:
        store.write_run(record)
    except OSError as exc:
        raise store_full(store, record.run_id, exc) from None


def score_target(
    spec: TargetSpec,
    req: ScoreRequest,
    store: RunStore,
    hooks: ScoreHooks = ScoreHooks(),
    *,
    on_boot_progress: BootProgress | None = None,
    launcher: Launcher | None = None,
) -> tuple[RunRecord, list[ItemRecord]]:
    """Score `req.suite` against the spec's target: the endpoint, or a server booted from the
    contract (server.log in the run's folder; BootError, exit 3, if it does not come up) and torn
    down afterwards. `req.target` is replaced by the target reached."""
    spec = spec.check()
    log_path = None
    run_id = req.run_id
    if spec.booted:
        store.ensure_writable()
        name = spec.load_contract().name
        if req.resume:
            run_id = None
            log_path = store.run_dir(store.resolve(req.resume)) / (
                f"server.resume-{now_iso()[11:19].replace(':', '')}.log"
            )
        else:
            run_id = run_id or unique_run_id(store, req.label or name)
            log_path = store.run_dir(run_id) / "server.log"
        req = replace(req, label=req.label or name)
    with boot_target(spec, log_path, on_progress=on_boot_progress, launcher=launcher) as target:
        return score_suite(replace(req, target=target, run_id=run_id), store, hooks)


class ResumeDefaults(TypedDict):
    """What `--resume RUN_ID` takes from the stored run when the flags do not say it."""

    endpoint: str
    suite: str | None
    model: str | None
    contract: str | None  # the name of the contract the run's server was booted from


def resume_defaults(store: RunStore, ref: str) -> ResumeDefaults:
    """Endpoint, suite and model of a stored run, so `--resume RUN_ID` alone is enough."""
    record = store.load_run(ref)
    return {
        "endpoint": record.endpoint,
        "suite": record.suite.path or record.suite.name,
        "model": record.model_requested or record.model_served,
        "contract": (record.contract or {}).get("name"),
    }
