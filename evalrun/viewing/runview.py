"""A stored run as the report and the exports see it: the record, every selected item's final
record (or none when it was not run), and the prompt from the suite when the suite still matches.
A run without a summary yet (killed with -9, or still running) gets one counted here
(`with_summary`), against the suite's selection when the suite still matches; `list_runs` lists
stored runs with theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evalrun.base.errors import ConfigError, RunNotFound, SuiteError
from evalrun.store import RunRecord, RunStore, summarize
from evalrun.store.export import ItemRow
from evalrun.suite.load import Item, Suite, load_suite
from evalrun.suite.select import Selection


@dataclass
class Row(ItemRow):
    """One item of the run: its final record and, when the suite loads, its suite item."""

    item: Item | None = None


@dataclass
class RunView:
    """A run ready to render or export."""

    record: RunRecord
    rows: list[Row]
    suite: Suite | None = None
    suite_note: str = ""  # why prompts are missing, when they are
    by_id: dict[str, Row] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {r.id: r for r in self.rows}


def load_view(store: RunStore, ref: str) -> RunView:
    """The run `ref` names (id, `latest`, `latest:<label>`, tag), its items in suite order.

    Each item appears once, as its final record: a resumed run's retried items are not repeated.
    """
    record = with_summary(store, store.load_run(ref))
    records = {r.id: r for r in store.load_items(record.run_id)}
    suite, note = matching_suite(record)
    if suite is None:
        rows = [Row(r.id, r.category, r) for r in records.values()]
        return RunView(record, rows, None, note)
    chosen = Selection.from_record(record.selection).pick(suite)
    rows = [Row(i.id, i.category, records.get(i.id), i) for i in chosen]
    known = {i.id for i in chosen}
    rows += [Row(r.id, r.category, r) for r in records.values() if r.id not in known]
    return RunView(record, rows, suite, note)


def matching_suite(record: RunRecord) -> tuple[Suite | None, str]:
    try:
        suite = load_suite(record.suite.path or record.suite.name)
    except SuiteError as exc:
        return None, f"prompts unavailable: {exc}"
    if suite.sha256 != record.suite.sha256:
        return None, (
            f"prompts unavailable: suite {suite.label} at {suite.path} is not the one this run "
            f"used (sha256 {suite.sha256[:12]} != {record.suite.sha256[:12]})"
        )
    return suite, ""


def with_summary(store: RunStore, record: RunRecord) -> RunRecord:
    """The record, with a summary computed from items.jsonl when run.json has none yet (a run
    killed with -9, or still running). Totals come from the suite when it can still be loaded."""
    if record.summary is not None:
        return record
    records = store.load_items(record.run_id)
    suite, _ = matching_suite(record)
    if suite is None:
        return record.model_copy(update={"summary": summarize(records, records)})
    selected = Selection.from_record(record.selection).pick(suite)
    return record.model_copy(update={"summary": summarize(selected, records)})


def list_runs(root: str | Path, *, last: int | None = None) -> list[RunRecord]:
    """Stored runs, oldest first, each with its summary; unreadable run folders are skipped."""
    store = RunStore(root)
    ids = store.run_ids()
    if last is not None:
        ids = ids[-last:] if last > 0 else []
    out = []
    for run_id in ids:
        try:
            out.append(with_summary(store, store.load_run(run_id)))
        except (ConfigError, RunNotFound):
            continue
    return out
