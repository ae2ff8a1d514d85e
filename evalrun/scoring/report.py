"""What a user sees of a run: the progress bar (stderr), category tables, headlines and --json
objects."""

from __future__ import annotations

import sys
import time
from typing import IO

from evalrun.base.jsondata import JSONObject
from evalrun.base.tables import fmt_points, score100, table
from evalrun.base.text_safety import one_line, terminal_text
from evalrun.store import (
    ItemRecord,
    RunRecord,
    RunStore,
    by_design_note,
    garble_cell,
    garble_split,
    lane_diagnoses,
    shown_status,
)


class ProgressBar:
    """done/total, passed so far, errors, rate and ETA on stderr; redrawn in place on a tty,
    a plain line every few seconds otherwise."""

    def __init__(
        self, stream: IO[str] | None = None, *, width: int = 24, interval: float | None = None
    ) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.1 if self.tty else 5.0)
        self.total = self.done = self.passed = self.errors = 0
        self._started = self._last = 0.0
        self._first_done = 0
        self._drawn = ""

    def start(self, *, total: int, done: int = 0, passed: int = 0, errors: int = 0) -> None:
        self.total, self.done, self.passed, self.errors = total, done, passed, errors
        self._first_done = done
        self._started = self._last = time.monotonic()

    def advance(self, status: str) -> None:
        self.done += 1
        self.passed += status == "passed"
        self.errors += status == "error"
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            self._draw(final=False)

    def finish(self) -> None:
        if self.total:
            self._draw(final=True)
            self.total = 0

    def note(self, text: str) -> None:
        """One line of its own (the run waits on the server), the bar redrawn under it."""
        if self.tty:
            self.stream.write("\r" + text + "\033[K\n")
            if self.total:
                self._draw(final=False)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        rate = (self.done - self._first_done) / elapsed
        left = self.total - self.done
        eta = _duration(left / rate) if rate > 0 and left else "-"
        speed = f"{rate:.1f} it/s" if rate >= 1 or rate == 0 else f"{rate * 60:.1f} it/min"
        filled = int(self.width * self.done / self.total) if self.total else 0
        bar = "#" * filled + "." * (self.width - filled)
        return (
            f"[{bar}] {self.done}/{self.total}  passed {self.passed}  errors {self.errors}  "
            f"{speed}  ETA {eta}"
        )

    def _draw(self, *, final: bool) -> None:
        text = self.line()
        if not self.tty and text == self._drawn:
            return
        self._drawn = text
        if self.tty:
            self.stream.write("\r" + text + "\033[K" + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _duration(seconds: float) -> str:
    """12s, 3m05s, 1h02m."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def headline(record: RunRecord) -> str:
    """`<run_id>: core-v1: 168/184 (91/100)`."""
    s = record.summary
    label = terminal_text(f"{record.suite.name}-v{record.suite.version}")  # a user's name
    if s is None:
        return f"{record.run_id}: {label}: no summary ({record.status})"
    return f"{record.run_id}: {label}: {s.passed}/{s.total} ({s.score}/100)"


def category_table(record: RunRecord) -> str:
    """Per-category passed/total (+ errors, garbled) as a table."""
    s = record.summary
    if s is None:
        return "(no summary)"
    rows = [
        [
            name,
            f"{t.passed}/{t.total}",
            score100(t.passed, t.total),
            t.errors,
            t.garbled,
        ]
        for name, t in sorted(s.categories.items())
    ]
    rows.append(["all", f"{s.passed}/{s.total}", s.score, s.errors, garble_cell(s)])
    return table(rows, headers=["category", "passed", "score", "errors", "garbled"])


def diagnosis_lines(record: RunRecord) -> list[str]:
    """One line per diagnosis: `! reasoning_only (12 items): <hint>`; what the booted lane does
    not do by its design (the reference: tools, prompts longer than a slot) is said once
    instead, without a hint to change a setup the user did not write."""
    setup, _ = lane_diagnoses(record)
    lines = [f"! {d.kind} ({d.count} item{'s' if d.count != 1 else ''}): {d.hint}" for d in setup]
    note = by_design_note(record)
    return [*lines, note] if note else lines


def garble_line(record: RunRecord) -> str:
    """`garbled: 7 item(s), rate 3.9%: 0 token soup, 7 loops (...)`; '' when nothing is."""
    s = record.summary
    if s is None or not s.garbled:
        return ""
    line = f"garbled: {s.garbled} item(s), rate {fmt_points(100 * s.garble_rate)}%"
    split = garble_split(s)
    if not split:
        return line
    line += f": {split}"
    if s.garble_loops and s.garble_loops == s.garbled:
        line += " (the model repeating itself, as small models do; no engine damage)"
    elif s.garble_loops:
        line += " (the loops are the model repeating itself; token soup is engine damage)"
    return line


def score_text(record: RunRecord) -> str:
    """The end-of-run report: table, diagnoses, notes, headline."""
    parts = [category_table(record)]
    parts.extend(diagnosis_lines(record))
    s = record.summary
    if s and s.errors:
        parts.append(
            f"{s.errors} item(s) in error (not graded); retry them with --resume {record.run_id}"
        )
    if s and record.repeats > 1:
        parts.append(
            f"repeats {record.repeats}: {s.flaky} of {s.total} items both passed and failed across "
            "their runs (the lane's own noise; the score counts each item's first answer)"
        )
    if garble_line(record):
        parts.append(garble_line(record))
    if record.tokens_unavailable:
        parts.append(f"fidelity unavailable: {record.tokens_unavailable}")
    if record.status != "complete":
        parts.append(f"status: {record.status}")
    parts.append(headline(record))
    return "\n".join(parts)


def score_json(record: RunRecord, store: RunStore) -> JSONObject:
    """The `--json` object of `evalrun score` / `show`."""
    s = record.summary
    return {
        "run_id": record.run_id,
        "path": str(store.run_dir(record.run_id)),
        "status": record.status,
        "suite": record.suite.name,
        "suite_version": record.suite.version,
        "suite_sha256": record.suite.sha256,
        "endpoint": record.endpoint,
        "model": record.model_served or record.model_requested,
        "passed": s.passed if s else 0,
        "total": s.total if s else 0,
        "score": s.score if s else 0,
        "errors": s.errors if s else 0,
        "garbled": s.garbled if s else 0,
        "garble_rate": s.garble_rate if s else 0.0,
        "garble_loops": s.garble_loops if s else None,
        "diagnoses": [d.model_dump() for d in s.diagnoses] if s else [],
        "fidelity": record.fidelity,
        "categories": {
            k: {"passed": v.passed, "total": v.total, "errors": v.errors, "garbled": v.garbled}
            for k, v in (s.categories if s else {}).items()
        },
    }


def runs_table(records: list[RunRecord]) -> str:
    """`evalrun runs`: id, suite, model, score, errors, garbled, status."""
    rows = []
    for r in records:
        s = r.summary
        rows.append(
            [
                r.run_id,
                f"{r.suite.name}-v{r.suite.version}",
                r.model_served or r.model_requested,
                f"{s.passed}/{s.total} ({s.score})" if s else "-",
                s.errors if s else "-",
                garble_cell(s) if s else "-",
                shown_status(r),
            ]
        )
    return table(rows, headers=["run", "suite", "model", "score", "errors", "garbled", "status"])


def runs_json(records: list[RunRecord]) -> JSONObject:
    """`evalrun runs --json`."""
    out = []
    for r in records:
        s = r.summary
        out.append(
            {
                "run_id": r.run_id,
                "label": r.label,
                "trial": r.trial,
                "suite": r.suite.name,
                "suite_version": r.suite.version,
                "model": r.model_served or r.model_requested,
                "status": shown_status(r),
                "passed": s.passed if s else None,
                "total": s.total if s else None,
                "score": s.score if s else None,
                "errors": s.errors if s else None,
                "garbled": s.garbled if s else None,
                "garble_loops": s.garble_loops if s else None,
                "started_at": r.started_at,
            }
        )
    return {"runs": out}


def _clip(text: str | None, n: int | None = 300) -> str:
    """Model or server text for the terminal: escaped, on one line and clipped to `n`
    characters; with n=None (--full) every character, newlines kept and indented."""
    if n is None and text is not None:
        return terminal_text(text).replace("\n", "\n      ")
    return one_line(text, n)


def failed_items_text(
    items: list[ItemRecord],
    prompts: dict[str, str] | None = None,
    *,
    full: bool = False,
    every: bool = False,
) -> str:
    """Each failed or errored item (every item with `every`) with its prompt when `prompts` has
    it, and what the model said (or why the request failed); `full` clips nothing."""
    lines = []
    for rec in items:
        if rec.status == "passed" and not every:
            continue
        lines.append(f"{rec.id} [{rec.category}] {rec.status}")
        if prompts and rec.id in prompts:
            lines.append(f"    prompt: {_clip(prompts[rec.id], None)}")
        if rec.error:
            lines.append(f"    error: {_clip(rec.error.message)}")
        if rec.response is not None:
            resp = rec.response
            lines.append(f"    content: {_clip(resp.content, None if full else 300)}")
            if resp.reasoning:
                lines.append(f"    reasoning: {_clip(resp.reasoning, None if full else 160)}")
            if resp.tool_calls:
                calls = str([c.model_dump(mode="json") for c in resp.tool_calls])
                lines.append(f"    tool_calls: {_clip(calls, None if full else 200)}")
            lines.append(f"    finish_reason: {_clip(resp.finish_reason)}")
        if rec.grade and rec.grade.detail:
            lines.append(f"    grader: {_clip(rec.grade.detail)}")
        if rec.diagnoses:
            lines.append(f"    diagnoses: {', '.join(rec.diagnoses)}")
        if rec.garble is not None and rec.garble.garbled:
            kind = "garbled (a loop)" if rec.garble.loop else "garbled"
            lines.append(f"    {kind}: {_clip(', '.join(rec.garble.reasons))}")
    return "\n".join(lines) if lines else "no failed items"


def show_text(
    record: RunRecord,
    items: list[ItemRecord],
    prompts: dict[str, str] | None = None,
    *,
    full: bool = False,
    every: bool = False,
) -> str:
    """`evalrun show RUN_ID`: category table, diagnoses, failed items (with their prompts when
    given; every listed item with `every`), headline."""
    parts = [
        category_table(record),
        *diagnosis_lines(record),
        *[line for line in [garble_line(record)] if line],
        "",
        failed_items_text(items, prompts, full=full, every=every),
        "",
        headline(record) + ("" if record.status == "complete" else f" [{shown_status(record)}]"),
    ]
    return "\n".join(parts)


def show_json(record: RunRecord, items: list[ItemRecord], store: RunStore) -> JSONObject:
    """`evalrun show --json`: the score object plus the failed items."""
    out = score_json(record, store)
    out["failed_items"] = [i.model_dump(mode="json") for i in items if i.status != "passed"]
    return out
