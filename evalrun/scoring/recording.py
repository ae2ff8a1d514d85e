"""What a run keeps: items appended as they finish (`ItemWriter`), run.json at the start and
the end (`new_record`, `finish`), and a stored run read back to be resumed (`load_resumed`,
`resume_defaults`)."""

from __future__ import annotations

import queue
import threading
from typing import TypedDict

from evalrun.endpoint.options import options_differ
from evalrun.errors import ConfigError, SuiteError, UsageError
from evalrun.provenance import Provenance
from evalrun.scoring.request import ScoreRequest
from evalrun.scoring.state import RunState
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
from evalrun.suite.load import Item
from evalrun.suite.select import Selection, SelectionRecord
from evalrun.version import __version__


class ItemWriter:
    """Appends finished items from a thread, so the event loop never waits for an fsync.

    Items finishing while one fsync runs go out together in the next (group commit); a crash
    loses the items in flight plus at most one batch waiting for its fsync.
    """

    def __init__(self, store: RunStore, run_id: str, written: dict[str, ItemRecord]) -> None:
        self.store, self.run_id = store, run_id
        self.written = written  # the records items.jsonl holds: all a summary may count
        self.error: OSError | None = None
        self._queue: queue.SimpleQueue[tuple[ItemRecord, bytes | None] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="evalrun-items", daemon=True)
        self._thread.start()

    def put(self, rec: ItemRecord, trace: bytes | None = None) -> None:
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


def unique_run_id(store: RunStore, label: str) -> str:
    """A new run id, its folder claimed; `-2`, `-3`, ... when a run of that label started the
    same second."""
    return claim_folder(store.root, new_run_id(label)).name


def load_resumed(
    req: ScoreRequest, store: RunStore, state: RunState
) -> tuple[list[Item], dict[str, ItemRecord], SelectionRecord]:
    """(items to score, items already done, selection for run.json); loads a resumed run."""
    suite = req.suite
    if req.resume:
        # One writer a run: a second --resume refuses before it reads or asks anything.
        state.lock = RunLock(store.run_dir(store.resolve(req.resume))).acquire()
        state.record = store.load_run(req.resume)
        state.repeats = state.record.repeats  # as the run began
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


def new_record(
    req: ScoreRequest,
    store: RunStore,
    state: RunState,
    *,
    base_url: str,
    chosen: str,
    selection: SelectionRecord,
    provenance: Provenance,
) -> RunRecord:
    """The run.json of a new run (its folder claimed), asking `chosen`."""
    target = req.target
    label = req.label or slug(chosen)
    return RunRecord(
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


def finish(
    store: RunStore, record: RunRecord, items: list[Item], state: RunState, status: str
) -> None:
    """Write run.json's end: the status, the summary over `items`, what capture got."""
    record.status = status  # type: ignore[assignment]
    record.ended_at = now_iso()
    record.summary = summarize(items, state.records)
    record.fidelity = state.capture.record(record.fidelity)
    try:
        store.write_run(record)
    except OSError as exc:
        raise store_full(store, record.run_id, exc) from None


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
