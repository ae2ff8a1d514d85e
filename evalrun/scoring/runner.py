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

This module is the run's life: checks, the model listing, run.json's start and end, Ctrl-C and
SIGTERM, the errors a stopped run raises. The parts: request.py (what a caller passes),
state.py (the run's state, the endpoint's health), asking.py (one item asked and graded),
schedule.py (the workers over the items), recording.py (items and run.json on disk, resume).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from dataclasses import replace
from pathlib import Path

from evalrun.endpoint.client import (
    list_models,
    load_sdk,
    make_client,
    normalise_endpoint,
    pick_model,
    run_sync,
)
from evalrun.endpoint.logprobs import Capture
from evalrun.errors import EndpointError, EvalrunError, Interrupted, UsageError
from evalrun.provenance import Provenance, collect
from evalrun.scoring.asking import check_graders
from evalrun.scoring.judge import APART_FROM, Judge
from evalrun.scoring.recording import finish, load_resumed, new_record, unique_run_id
from evalrun.scoring.request import NO_HOOKS, ScoreHooks, ScoreRequest
from evalrun.scoring.schedule import work
from evalrun.scoring.state import RunState, watch_quiet
from evalrun.serving.signals import sigterm_cancels
from evalrun.serving.target import BootProgress, Launcher, TargetSpec, boot_target
from evalrun.store import ItemRecord, RunRecord, RunStore, now_iso
from evalrun.store.lock import RunLock
from evalrun.suite.load import Item
from evalrun.suite.select import SelectionRecord

__all__ = ["ScoreHooks", "ScoreRequest", "ascore_suite", "score_suite", "score_target"]


def score_suite(
    req: ScoreRequest, store: RunStore, hooks: ScoreHooks = NO_HOOKS
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
    req: ScoreRequest, store: RunStore, hooks: ScoreHooks = NO_HOOKS
) -> tuple[RunRecord, list[ItemRecord]]:
    """`score_suite` for a caller already in an event loop (a notebook): the same run, awaited.
    Cancelling it leaves the run `interrupted` and resumable."""
    return await _score(req, store, hooks, own_loop=False)


def _provenance() -> Provenance:
    return collect(Path.cwd())


async def _run(
    state: RunState,
    req: ScoreRequest,
    hooks: ScoreHooks,
    *,
    base_url: str,
    items: list[Item],
    done: dict[str, ItemRecord],
    store: RunStore,
    selection: SelectionRecord,
    own_loop: bool,
) -> None:
    target = req.target
    to_grade = sum(i.id not in done or done[i.id].status == "error" for i in items)
    judge = Judge(apart=to_grade * state.repeats >= APART_FROM, items=items)  # forks first
    try:
        # A grading process imports the graders (and names their kinds) while this one imports
        # openai. With openai imported already (an earlier run in this process) there is
        # nothing to wait on meanwhile: this process asks its own registry (once a process).
        fresh = load_sdk(freeze=judge.apart)
        check_graders(items, await judge.kinds(here=not fresh), await judge.params_problem())
        http = replace(target.http, concurrency=req.concurrency)  # the pool: what is in flight
        client = make_client(
            base_url,
            api_key=target.api_key,
            http=http,
            headers=target.options.headers,
            activity=state.activity,
        )
    except BaseException:
        judge.close()
        raise
    state.timeout = target.http.timeout
    task = asyncio.current_task()
    assert task is not None
    watch = asyncio.ensure_future(watch_quiet(state, hooks.notice or (lambda text: None)))
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
                state.record = new_record(
                    req,
                    store,
                    state,
                    base_url=base_url,
                    chosen=chosen,
                    selection=selection,
                    provenance=provenance,
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
            await work(
                req, hooks, state, items=items, done=done,
                client=client, model=chosen, judge=judge, store=store,
            )  # fmt: skip
    finally:
        watch.cancel()
        judge.close()
        await client.close()


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
    state = RunState(
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
    state: RunState,
    base_url: str,
    *,
    own_loop: bool,
) -> tuple[RunRecord, list[ItemRecord]]:
    items, done, selection = load_resumed(req, store, state)
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
            finish(store, rec, items, state, status="interrupted")
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
            finish(store, state.record, items, state, status="incomplete")
        raise
    record = state.record
    assert record is not None
    complete = all(i.id in state.records for i in items) and not state.stopped
    finish(store, record, items, state, status="complete" if complete else "incomplete")
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


def score_target(
    spec: TargetSpec,
    req: ScoreRequest,
    store: RunStore,
    hooks: ScoreHooks = NO_HOOKS,
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
