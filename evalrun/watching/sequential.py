"""The running test over ticks: two one-sided CUSUMs, one on the tick's drift in noise-floor
units, one on its hard divergences against the floor's hard rate.

**Drift, in floor units.** Each tick's distance from the anchor is its drift (mean |Δ logprob|
over the shared tokens) over the lane's noise floor's (`judge.py`): `u` floor units. A healthy
tick is one more A/A pair of the lane, so it sits near 1 unit; compare calls a drift outside the
noise from `FLOOR_UNITS` (3) on and divergent past `DIVERGENT_UNITS` (4) (compare/floor.py). The
CUSUM `D ← max(0, D + min(cap, u − k))` takes the reference value `k` = 2 units, halfway between
the healthy 1 and the 3 worth an alarm (Page's choice for a shift from μ0 to μ1: k = (μ0+μ1)/2),
and alarms at `h_units` = 4 units. The cap is `h_units/2` = `DIVERGENT_UNITS − k` = 2: a
divergent tick adds the most one tick may, so two divergent ticks alarm and one never does; a
steady drift of 3 units (just outside the noise) adds 1 a tick and alarms on the fourth, one of
2.5 units on the eighth; a wobble that stays under 2 units never moves it.

**Hard divergences, against the floor's hard rate.** A probe item that left the anchor hard (one
side chose a token the other thought unlikely, or other tokens) is a count, not a distance, and
drifts nothing once the tokens part; it gets the Bernoulli CUSUM: under a healthy server an item
is hard at `p0` (the floor's hard rate, at least fidelity's default 2%), after a change worth an
alarm at `p1` (25%, at least 4·p0); a tick with `k` of `n` items hard adds
`k·ln(p1/p0) + (n−k)·ln((1−p1)/(1−p0))`, capped at `h/2`, alarm at `h` = 6 nats.

The watch alarms when either reaches its threshold; its one `statistic` is the larger share of
its threshold (`level`: 1 alarms). Both are held at their threshold once there, so a healed server
reads as recovered (both back at 0) after a few clean ticks, however long the fault lasted.

Pure: no I/O.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from evalrun.compare.floor import DIVERGENT_UNITS, FLOOR_UNITS

HEALTHY_UNITS = 1.0  # a healthy tick is one more A/A pair: one floor unit, in expectation


class Running(BaseModel):
    """The two statistics a watch carries from tick to tick."""

    model_config = ConfigDict(extra="forbid")

    drift: float = Field(default=0.0, description="The drift CUSUM, in floor units.")
    hard: float = Field(default=0.0, description="The hard-divergence CUSUM, in nats.")


class Cusum(BaseModel):
    """The test's parameters (the state is the two floats of `Running`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    p0: float = Field(default=0.02, description="Share of probe items hard on a healthy server.")
    p1: float = Field(default=0.25, description="Share of probe items hard after a real change.")
    h: float = Field(default=6.0, description="The hard CUSUM's alarm threshold (nats).")
    k: float = Field(
        default=(HEALTHY_UNITS + FLOOR_UNITS) / 2,
        description="The drift CUSUM's reference value: floor units a tick may drift for free.",
    )
    h_units: float = Field(
        default=2 * (DIVERGENT_UNITS - (HEALTHY_UNITS + FLOOR_UNITS) / 2),
        description="The drift CUSUM's alarm threshold (floor units).",
    )

    @classmethod
    def for_healthy_rate(cls, rate: float) -> Cusum:
        """The test for a lane whose healthy items are hard at `rate` (its noise floor): p1 stays
        at least four times p0, so a noisy lane needs a larger change to alarm."""
        p0 = min(max(rate, 1e-4), 0.2)
        return cls(p0=p0, p1=max(cls.model_fields["p1"].default, 4 * p0))

    @property
    def cap(self) -> float:
        """The most one tick adds to the hard CUSUM: half its threshold."""
        return self.h / 2

    @property
    def units_cap(self) -> float:
        """The most one tick adds to the drift CUSUM: half its threshold."""
        return self.h_units / 2

    def increment(self, off: int, n: int) -> float:
        """What a tick with `off` of `n` items hard adds to the hard CUSUM (at most `cap`)."""
        if n <= 0:
            return 0.0
        up = math.log(self.p1 / self.p0)
        down = math.log((1 - self.p1) / (1 - self.p0))
        return min(self.cap, off * up + (n - off) * down)

    def drift_increment(self, units: float | None) -> float:
        """What a tick `units` floor units from the anchor adds to the drift CUSUM (at most
        `units_cap`; None, nothing compared: nothing)."""
        return 0.0 if units is None else min(self.units_cap, units - self.k)

    def update(self, statistic: float, off: int, n: int) -> float:
        """The hard CUSUM after one tick: never below 0, held at `h` once there."""
        return min(self.h, max(0.0, statistic + self.increment(off, n)))

    def update_drift(self, statistic: float, units: float | None) -> float:
        """The drift CUSUM after one tick: never below 0, held at `h_units` once there."""
        return min(self.h_units, max(0.0, statistic + self.drift_increment(units)))

    def step(self, running: Running, units: float | None, off: int, n: int) -> Running:
        """Both statistics after one judged tick."""
        return Running(
            drift=round(self.update_drift(running.drift, units), 4),
            hard=round(self.update(running.hard, off, n), 4),
        )

    def level(self, running: Running) -> float:
        """The larger share of its threshold either statistic has reached (1: the alarm)."""
        return round(max(running.drift / self.h_units, running.hard / self.h), 4)

    def alarmed(self, level: float) -> bool:
        return level >= 1.0 - 1e-9


DEFAULT_CUSUM = Cusum()


def ticks_to_alarm(cusum: Cusum, n: int, off: int, units: float | None = None) -> int | None:
    """Ticks from a clean start until the alarm when every tick has `off` of `n` items hard and
    drifts `units` floor units (None: that tick never alarms)."""
    if cusum.increment(off, n) <= 0 and cusum.drift_increment(units) <= 0:
        return None
    r, ticks = Running(), 0
    while not cusum.alarmed(cusum.level(r)):
        r, ticks = cusum.step(r, units, off, n), ticks + 1
    return ticks


def false_alarm_ticks(
    cusum: Cusum,
    n: int,
    rate: float,
    *,
    units: Sequence[float] = (HEALTHY_UNITS,),
    runs: int = 200,
    limit: int = 1_000_000,
    seed: int = 0,
) -> float:
    """Mean ticks to a (false) alarm when each item is hard at `rate` independently and each
    tick's drift is drawn from `units` (e.g. a lane's measured healthy ticks), by a seeded
    simulation of `runs` watches (each stopped at `limit` ticks: the mean is then a floor)."""
    rng = random.Random(seed)
    total = 0
    for _ in range(runs):
        d = hard = 0.0
        t = 0
        while t < limit:
            t += 1
            off = sum(1 for _ in range(n) if rng.random() < rate)
            d = cusum.update_drift(d, rng.choice(units))
            hard = cusum.update(hard, off, n)
            if d >= cusum.h_units - 1e-9 or hard >= cusum.h - 1e-9:
                break
        total += t
    return total / runs
