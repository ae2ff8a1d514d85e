"""What stored runs amount to: a `Summary` counted from item records over the selected items.

A run killed with -9 (or still running) has no summary in run.json yet; the viewers count one
(`viewing.runview.with_summary`) against the suite's selection when the suite can still be loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from evalrun.base.tables import score100
from evalrun.endpoint.diagnose import summarize as summarize_diagnoses
from evalrun.store.records import CategoryTally, Diagnosis, ItemRecord, RunRecord, Summary
from evalrun.verdicts import GarbleVerdict, LaneGarble


class Counted(Protocol):
    """What `summarize` reads of a selected item (a suite's `Item`, or an `ItemRecord`)."""

    @property
    def id(self) -> str: ...

    @property
    def category(self) -> str: ...


def summarize(
    items: Sequence[Counted], records: list[ItemRecord] | dict[str, ItemRecord]
) -> Summary:
    """Counts over the selected items; an item without a record counts in total, not in passed."""
    by_id = records if isinstance(records, dict) else {r.id: r for r in records}
    cats: dict[str, CategoryTally] = {}
    passed = errors = flaky = 0
    kinds: list[str] = []
    verdicts: list[GarbleVerdict | None] = []  # one an answered item: the lane's garble
    for item in items:
        tally = cats.setdefault(item.category, CategoryTally())
        tally.total += 1
        rec = by_id.get(item.id)
        if rec is None:
            continue
        kinds.extend(rec.diagnoses)
        if rec.status == "passed":
            passed += 1
            tally.passed += 1
        elif rec.status == "error":
            errors += 1
            tally.errors += 1
        if rec.response is not None:
            verdicts.append(rec.garble)
            tally.garbled += rec.garbled
        outcomes = {r.status for r in rec.repeats or []} - {"error"}
        flaky += len(outcomes) > 1
    garble = LaneGarble.of(verdicts)  # counted as bisect, compare and sign-off count it
    total = len(items)
    return Summary(
        passed=passed,
        total=total,
        score=score100(passed, total),
        errors=errors,
        garbled=garble.garbled,
        garble_rate=round(garble.flagged_rate, 4),
        garble_loops=garble.loops,
        diagnoses=[Diagnosis(**d) for d in summarize_diagnoses(kinds)],
        categories=cats,
        flaky=flaky,
    )


def garble_split(summary: Summary) -> str:
    """`0 token soup, 7 loops`: the garbled items as engine damage and the model's own loops;
    '' for a run written before loops were counted."""
    if summary.garble_loops is None:
        return ""
    loops = summary.garble_loops
    return f"{summary.garbled - loops} token soup, {loops} loop{'s' if loops != 1 else ''}"


def garble_cell(summary: Summary) -> str:
    """A table's garbled cell: `7 (7 loops)`, `0`, or the bare count for an older run."""
    if not summary.garbled or summary.garble_loops is None:
        return str(summary.garbled)
    loops = summary.garble_loops
    return f"{summary.garbled} ({loops} loop{'s' if loops != 1 else ''})"


def lane_diagnoses(record: RunRecord) -> tuple[list[Diagnosis], list[Diagnosis]]:
    """(diagnoses that point at the setup, diagnoses the booted lane shows by its own design):
    a lane's `by_design` kinds are what it does not do (the reference has no tools in its chat
    template), so their hints, which say what to reconfigure, do not apply."""
    design = record.by_design
    diagnoses = record.summary.diagnoses if record.summary else []
    return (
        [d for d in diagnoses if d.kind not in design],
        [d for d in diagnoses if d.kind in design],
    )


def by_design_note(record: RunRecord) -> str:
    """One line saying what the lane does not do and how many items that failed; '' when none
    of its items showed it."""
    design = record.by_design
    _, shown = lane_diagnoses(record)
    if not shown:
        return ""
    what = "; ".join(
        f"{design[d.kind]} ({d.count} item{'s' if d.count != 1 else ''})" for d in shown
    )
    name = (record.contract or {}).get("name", "this")
    return f"the {name} lane does not do, by design: {what}; those items fail as its design, not a setup fault"
