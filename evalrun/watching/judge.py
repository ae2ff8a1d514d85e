"""One tick judged against the anchor: the fidelity statistics, item by item, and the lane's
noise floor.

`judge_tick` is the one place the watch decides how far a tick is from its anchor. The tick's
items are judged token by token against the anchor's (evalrun.compare.fidelity) and, once the
watch has a floor (the anchor lane's own A/A pair: `--floor RUN`, or the watch's first probe
asked as a burst and again one at a time), graded against it as compare grades a candidate
(evalrun.compare.floor): identical, within noise, numerically different or divergent, the drift
in floor units.

An item is *off* when it left the anchor hard (one side chose what the other thought unlikely)
or in other tokens: a count, which the running test weighs against the floor's hard rate. Near
ties that flip are not off: on the reference the same healthy server, asked the probe as a burst
instead of inside the anchor's batch, flips 2-3 near ties of 8 items on every tick. The drift
counts over the whole tick, as fidelity counts it over a run, as a distance: the tick's drift in
floor units (`units`), which the running test takes as it is (sequential.py). Without a floor
the units are against a default floor at `drift_max / DIVERGENT_UNITS`, so a tick past the
healthy limit is as far as a divergent one.

The running test's healthy rate is the floor's hard rate, never below fidelity's default
(`healthy_rate`): a clean short floor does not make the test twitchier, a noisy lane's floor
makes it need a larger change.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from evalrun.compare.fidelity import (
    DEFAULTS,
    Fidelity,
    Thresholds,
    against_floor,
    compare_trace,
    judge,
)
from evalrun.compare.floor import DIVERGENT_UNITS, Floor
from evalrun.endpoint.logprobs import TokenTrace
from evalrun.store import ItemRecord

THRESHOLDS: Thresholds = DEFAULTS


class TickJudgement(BaseModel):
    """What one tick showed against the anchor."""

    model_config = ConfigDict(extra="forbid")

    compared: int = Field(description="Probe items answered with tokens on both sides.")
    off: int = Field(description="Items off: hard divergence or other tokens.")
    off_ids: list[str] = Field(default_factory=list)
    near_tie: int = 0
    drift: float = Field(default=0.0, description="Mean |Δ logprob| over the shared tokens.")
    verdict: str = Field(default="", description="The fidelity verdict of the tick's items.")
    grade: str = Field(default="", description="The grade against the floor ('': no floor).")
    units: float | None = Field(
        default=None, description="The drift in floor units (the default floor without one)."
    )
    passed: int = 0
    answered: int = 0
    garbled: int = 0
    errors: int = 0
    latency_s: float | None = Field(default=None, description="Mean latency of the answers.")


def healthy_rate(floor: Floor | None, thresholds: Thresholds = THRESHOLDS) -> float:
    """The share of items a healthy tick may have off: the floor's hard rate, at least the
    default healthy rate."""
    if floor is None or not floor.items:
        return thresholds.healthy_hard_rate
    return max(thresholds.healthy_hard_rate, floor.hard / floor.items)


def default_floor_drift(t: Thresholds = THRESHOLDS) -> float:
    """The floor's drift a tick is measured in before there is a floor: the healthy limit
    `drift_max` sits at `DIVERGENT_UNITS` of it, as compare's divergent line does."""
    return t.drift_max / DIVERGENT_UNITS


def judge_tick(
    anchor: dict[str, TokenTrace],
    tick_items: Sequence[ItemRecord],
    tick: dict[str, TokenTrace],
    ids: Sequence[str],
    floor: Floor | None = None,
    thresholds: Thresholds = THRESHOLDS,
) -> TickJudgement:
    """The tick's items (`tick_items`, their traces `tick`) against the anchor's traces, graded
    against the anchor lane's `floor` when there is one."""
    answered = [r for r in tick_items if r.response is not None]
    off: list[str] = []
    near = 0
    for item_id in ids:
        if item_id not in anchor or item_id not in tick:
            continue
        kind, _, _, _ = compare_trace(anchor[item_id], tick[item_id], thresholds.delta)
        near += kind == "near_tie"
        if kind in ("hard", "retokenized"):
            off.append(item_id)
    fidelity: Fidelity = judge(anchor, tick, list(ids), thresholds, answered=len(answered))
    graded = against_floor(fidelity, floor).floor if fidelity.items else None
    if graded is not None:
        units: float | None = graded.units
    elif fidelity.items:
        units = round(fidelity.drift / default_floor_drift(thresholds), 2)
    else:
        units = None
    latencies = [r.latency_s for r in answered if r.latency_s is not None]
    return TickJudgement(
        compared=fidelity.items,
        off=len(off),
        off_ids=off,
        near_tie=near,
        drift=fidelity.drift,
        verdict=fidelity.verdict,
        grade=graded.grade if graded else "",
        units=units,
        passed=sum(1 for r in tick_items if r.status == "passed"),
        answered=len(answered),
        garbled=sum(1 for r in answered if r.garbled),
        errors=sum(1 for r in tick_items if r.status == "error"),
        latency_s=round(sum(latencies) / len(latencies), 4) if latencies else None,
    )
