"""A run's state while it asks (`RunState`), and what that state tells about the endpoint: a run
of failed items or tries (`is_dead_signal`), or a server silent for `--timeout` seconds
(`silence_bound`, `watch_quiet`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from evalrun.endpoint.activity import Activity
from evalrun.endpoint.client import RequestFailed
from evalrun.endpoint.http import HttpOptions
from evalrun.endpoint.logprobs import Capture
from evalrun.endpoint.response import ItemError
from evalrun.store import ItemRecord, RunRecord
from evalrun.store.lock import RunLock

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


@dataclass
class RunState:
    """What one run knows while it asks: its record, the items on disk, the endpoint's health."""

    record: RunRecord | None = None
    records: dict[str, ItemRecord] = field(default_factory=dict)  # stored in items.jsonl
    dead_streak: int = 0
    failed_tries: int = 0  # consecutive failed tries (any item) since the last answer
    last_answer: float = field(default_factory=time.monotonic)
    activity: Activity = field(default_factory=Activity)  # the server's silence (activity.py)
    on_silence: Callable[[str], None] | None = None  # stops the run once the server fell silent
    timeout: float = HttpOptions.timeout  # per try; failed tries give up only after this long
    stopped: str | None = None  # why the run stopped early: the endpoint failed
    halted: str | None = None  # why the caller's stop_when ended the run early (not a failure)
    wrong_model: bool = False  # the endpoint said it does not serve the model we send
    served: list[str] = field(default_factory=list)
    repeats: int = 1  # requests per item (score --repeats K)
    lock: RunLock | None = None  # held while this process writes the run (store/lock.py)
    capture: Capture = field(default_factory=lambda: Capture(None, 0))  # logprobs asked


def is_dead_signal(failure: RequestFailed | ItemError | None) -> bool:
    """A failure that says the endpoint, not the item, is broken (a try's or a record's error)."""
    if failure is None:
        return False
    status = failure.http_status
    return (
        failure.kind in DEAD_KINDS
        or status in DEAD_STATUSES
        or (status is not None and status >= 500)
    )


async def watch_quiet(state: RunState, notice: Callable[[str], None]) -> None:
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
            state.on_silence(silence_text(state, bound))
        if quiet < every:
            told = 0
        elif int(quiet // every) > told and not state.stopped:
            told = int(quiet // every)
            notice(
                f"no answer from the server for {told * every:g} s; the run stops after "
                f"{bound:g} s of silence (--timeout)"
            )


def silence_text(state: RunState, bound: float) -> str:
    """Why a silent server stopped the run (what `state.stopped` says)."""
    n = state.activity.in_flight
    waiting = f", {n} request{'s' * (n != 1)} waiting" if n else ""
    return f"nothing from the server for {bound:g} s (--timeout){waiting}"
