"""A lane's state as text: one line per step, then what to run next."""

from __future__ import annotations

from evalrun.serving.lanes.builds import BuildRecord
from evalrun.serving.lanes.common import LaneReport


def lane_text(report: LaneReport) -> str:
    """What `lane setup` did or `--check` found, for a terminal."""
    lines = [f"{report.lane} lane at {report.root}"]
    for refusal in report.refusals:
        lines.append(f"  cannot: {refusal}")
    for step in report.steps:
        took = f" ({step.seconds:.0f}s)" if step.seconds else ""
        mark = "ok     " if step.done else "missing"
        lines.append(f"  {mark} {step.name:<34} {step.what}{took}")
    versions = report.facts.get("versions") or {}
    if versions:
        lines.append("  versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v))
    if report.ready:
        lines.append(f"ready: evalrun score --contract {report.contract}")
    elif not report.refusals:
        lines.append(f"not ready: run `evalrun lane setup {report.lane}`")
    return "\n".join(lines)


def builds_text(records: list[BuildRecord], root: str, *, pruned: bool = False) -> str:
    """One row per engine build: requirement, status, resolved versions, install time, size."""
    from evalrun.base.tables import table

    if not records:
        return f"no engine builds {'removed' if pruned else 'in ' + root}"
    rows = []
    for r in records:
        versions = ", ".join(f"{k} {v}" for k, v in r.versions.items() if v) or (r.error or "-")
        rows.append(
            [
                r.key,
                r.pip + (f" (override {', '.join(r.override)})" if r.override else ""),
                r.status,
                _clip(versions, 60),
                f"{r.install_seconds:.0f}s {r.installer}",
                _gb(r.size_bytes) + (f" ({_gb(r.shared_bytes)} shared)" if r.shared_bytes else ""),
            ]
        )
    total = sum(r.size_bytes or 0 for r in records)
    head = f"{'removed' if pruned else 'in'} {root}: {len(records)} builds, {_gb(total)}"
    headers = ["key", "requirement", "status", "resolved", "install", "on disk"]
    return head + "\n" + table(rows, headers=headers)


def _gb(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e9:.2f} GB"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
