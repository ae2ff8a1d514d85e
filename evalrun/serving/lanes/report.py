"""A lane's state as text: one line per step, then what to run next."""

from __future__ import annotations

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
