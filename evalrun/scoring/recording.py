"""What a run keeps: items appended as they finish (`ItemWriter`), run.json at the start and
the end (`new_record`, `finish`). A stored run is read back to be resumed by the plan
(scoring/plan.py)."""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING

from evalrun.base.errors import ConfigError
from evalrun.provenance import Provenance
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
from evalrun.store.tokens import append_traces

if TYPE_CHECKING:
    from evalrun.scoring.plan import ScorePlan
    from evalrun.serving.target import Target
from evalrun.base.version import __version__
from evalrun.suite.load import Item


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


def new_record(
    plan: ScorePlan, target: Target, store: RunStore, chosen: str, provenance: Provenance
) -> RunRecord:
    """The run.json of a new run (its folder claimed unless the plan has), asking `chosen`."""
    label = plan.label or slug(chosen)
    suite = plan.suite
    return RunRecord(
        run_id=plan.run_id or claim_folder(store.root, new_run_id(label)).name,
        label=slug(label),
        evalrun_version=__version__,
        suite=SuiteRef(
            name=suite.name, version=suite.version, sha256=suite.sha256, path=suite.path
        ),
        endpoint=target.base_url,
        model_requested=target.model,
        sampling={
            **target.options.record(),
            **({"repeats": plan.repeats} if plan.repeats > 1 else {}),
        },
        selection=plan.selection,
        contract=target.contract,
        server=target.server,
        provenance=provenance,
        started_at=now_iso(),
        trial=plan.trial,
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
