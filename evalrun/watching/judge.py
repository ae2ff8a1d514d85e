"""One tick judged against the anchor: the fidelity statistics, item by item.

`judge_tick` is the one place the watch decides how far a tick is from its anchor: today with the
fidelity thresholds of evalrun.compare.fidelity (`THRESHOLDS`); a per-lane noise floor measured
from an A/A pair replaces that one name (the running test takes its healthy rate from it too).

An item is *off* when it left the anchor hard (one side chose what the other thought unlikely)
or in other tokens. Near ties that flip are not off, and neither is one item's drift: on the
reference the same healthy server, asked the probe as a burst instead of inside the anchor's
batch, flips 2-3 near ties of 8 items and drifts up to 0.05 nats a token on one short item on
every tick. The drift counts over the whole tick, as fidelity counts it over a run: a tick whose
mean |Δ logprob| passes the healthy limit has every compared item off (so two such ticks alarm,
one does not).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from evalrun.compare.fidelity import DEFAULTS, Fidelity, Thresholds, compare_trace, judge
from evalrun.endpoint.logprobs import TokenTrace
from evalrun.store import ItemRecord

THRESHOLDS: Thresholds = DEFAULTS


class TickJudgement(BaseModel):
    """What one tick showed against the anchor."""

    model_config = ConfigDict(extra="forbid")

    compared: int = Field(description="Probe items answered with tokens on both sides.")
    off: int = Field(description="Items off: hard divergence, other tokens, or drift.")
    off_ids: list[str] = Field(default_factory=list)
    near_tie: int = 0
    drift: float = Field(default=0.0, description="Mean |Δ logprob| over the shared tokens.")
    verdict: str = Field(default="", description="The fidelity verdict of the tick's items.")
    passed: int = 0
    answered: int = 0
    garbled: int = 0
    errors: int = 0
    latency_s: float | None = Field(default=None, description="Mean latency of the answers.")


def judge_tick(
    anchor: dict[str, TokenTrace],
    tick_items: Sequence[ItemRecord],
    tick: dict[str, TokenTrace],
    ids: Sequence[str],
    thresholds: Thresholds = THRESHOLDS,
) -> TickJudgement:
    """The tick's items (`tick_items`, their traces `tick`) against the anchor's traces."""
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
    if fidelity.drift > thresholds.drift_max:
        off = [i for i in ids if i in anchor and i in tick]
    latencies = [r.latency_s for r in answered if r.latency_s is not None]
    return TickJudgement(
        compared=fidelity.items,
        off=len(off),
        off_ids=off,
        near_tie=near,
        drift=fidelity.drift,
        verdict=fidelity.verdict,
        passed=sum(1 for r in tick_items if r.status == "passed"),
        answered=len(answered),
        garbled=sum(1 for r in answered if r.garbled),
        errors=sum(1 for r in tick_items if r.status == "error"),
        latency_s=round(sum(latencies) / len(latencies), 4) if latencies else None,
    )
