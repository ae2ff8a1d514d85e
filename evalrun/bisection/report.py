"""How a bisect is shown: the trial table, the verdict, and the --json object."""

from __future__ import annotations

from evalrun.base.jsondata import JSONObject
from evalrun.bisection.driver import BisectRecord
from evalrun.bisection.trial import TrialFidelity


def trial_table(record: BisectRecord) -> str:
    """One row per trial: variant (diff against the base), outcome, garble, score, boot, run."""
    from evalrun.base.tables import table

    rows = []
    lanes = record.lanes > 1
    for t in record.trials:
        boot = (
            "cached"
            if t.cached
            else (f"{t.boot_seconds:.1f}" if t.boot_seconds is not None else "-")
        )
        outcome = t.outcome + ("" if t.verdict != "unresolved" else " (skip)")
        rows.append(
            [
                t.n,
                _clip(t.variant, 60),
                outcome,
                f"{t.garble_rate:.0%}" if t.garble_rate is not None else "-",
                t.score if t.score is not None else "-",
                _fidelity(t.fidelity, t.effect),
                boot,
                *([t.lane or "-"] if lanes else []),
                t.run_ids[0] if t.run_ids else (_clip(t.boot_error or "-", 40)),
            ]
        )
    headers = ["#", "variant", "outcome", "garble", "score", "tokens", "boot s"]
    return table(rows, headers=[*headers, *(["lane"] if lanes else []), "run"])


def bisect_text(record: BisectRecord, path: str) -> str:
    """The table, the verdict line, and where the record is."""
    lines = [trial_table(record), ""]
    if record.ambiguous and record.candidates:
        lines.append("candidates: " + "; ".join(record.candidates))
    lines += ordered_lines(record)
    lines.append(record.verdict)
    if any(t.fidelity for t in record.trials):
        lines.append(
            f"good side's {record.floor.line()}" if record.floor else "tokens: floor: defaults"
        )
    if record.lanes > 1:
        lines.append(f"{record.lanes} lanes: {record.boots} boots in {record.rounds} rounds")
    lines.append(f"record: {path}")
    return "\n".join(lines)


def ordered_lines(record: BisectRecord) -> list[str]:
    """Ordered mode: each step's evidence, the builds, and what changed at the line."""
    o = record.ordered
    if o is None:
        return []
    lines = ["steps (in value order):"]
    for s in o.steps:
        evidence = [s.outcome]
        if s.garble_rate is not None:
            evidence.append(f"garble {s.garble_rate:.0%}")
        if s.score_delta is not None:
            evidence.append(f"score {s.score_delta:+d}")
        if s.items:
            evidence.append(f"{s.hard}/{s.items} hard, p {s.p_value:.2g}")
        if s.boot_error:
            evidence.append(_clip(s.boot_error, 60))
        probes = f", probes {'/'.join(s.probes)}" if s.close else ""
        lines.append(
            f"  {s.value}: {s.verdict} ({', '.join(evidence)}{probes}), "
            f"confidence {s.confidence:.0%}"
        )
    for b in o.builds:
        how = "installed" if b.installed_now else "reused"
        what = b.error if b.status == "failed" else f"{b.install_seconds:.0f}s via {b.installer}"
        lines.append(f"  build {b.value}: {b.status}, {how} ({_clip(what or '', 80)})")
    if o.changelog is not None:
        changes = o.changelog.lines()
        lines.append(
            f"changed between {o.last_good} and {o.first_bad}:"
            + ("" if changes else " nothing evalrun sees")
        )
        lines += [f"  {_clip(c, 110)}" for c in changes[:20]]
    lines.append("")
    return lines


def bisect_json(record: BisectRecord, path: str) -> JSONObject:
    """{mode, verdict, culprits, first_bad_commit, trials, boots} plus the record's location."""
    return {
        "mode": record.mode,
        "verdict": record.verdict,
        "found": record.found,
        "ambiguous": record.ambiguous,
        "culprits": record.culprits,
        "first_bad_commit": record.first_bad_commit,
        "ordered": record.ordered.model_dump(mode="json") if record.ordered else None,
        "candidates": record.candidates,
        "trials": [t.model_dump(mode="json") for t in record.trials],
        "floor": record.floor.model_dump(mode="json") if record.floor else None,
        "boots": record.boots,
        "lanes": record.lanes,
        "rounds": record.rounds,
        "bisect_id": record.bisect_id,
        "record": path,
        "exit_code": record.exit_code,
    }


def _fidelity(f: TrialFidelity | None, effect: str | None) -> str:
    """The trial's tokens against the good side's: `divergent 9/23 hard`, `no effect`, `-`."""
    if not f:
        return "-"
    if effect:
        return "identical: no observable effect"
    if f.verdict == "not comparable":
        return "not comparable"
    if f.floor is not None:  # graded against the good side's measured floor
        return f"{f.verdict} {f.hard}/{f.items} hard, {f.floor.units:g} floor units"
    return f"{f.verdict} {f.hard}/{f.items} hard (floor: defaults)"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
