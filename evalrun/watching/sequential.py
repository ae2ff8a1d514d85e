"""The running test over ticks: a one-sided CUSUM of item-level Bernoulli log-likelihood ratios.

Each tick compares a few probe items with the anchor; an item is *off* when it left the anchor
hard (or in other tokens), or the tick's drift was divergent against the lane's noise floor
(`judge.py`). Under a healthy server an item is off at the healthy rate `p0` (the floor's hard
rate, at least fidelity's default: `judge.healthy_rate`); the change worth an alarm makes it off
at `p1`. A tick with `k` of `n` items off adds
`k·ln(p1/p0) + (n−k)·ln((1−p1)/(1−p0))` to the statistic, which never goes below 0 (Page's
CUSUM); the watch alarms when it reaches `h`.

One odd tick is not an alarm: a tick adds at most `h/2` (its increment is clipped), so a fault
has to show on at least two ticks, and after a clean tick the statistic falls again. A steady
small shift is one: one item of eight off on every tick adds +0.65 a tick and alarms within ten.
`ticks_to_alarm` and `false_alarm_ticks` give the figures for other probe sizes and rates.

The statistic is held at `h` once it gets there: with a fault that lasts, a healed server is
seen as recovered (back at 0) after three clean ticks of eight items, not after as many as the
fault lasted.

Pure: no I/O.
"""

from __future__ import annotations

import math
import random

from pydantic import BaseModel, ConfigDict, Field


class Cusum(BaseModel):
    """The test's parameters (the state is the one float `statistic` the watch keeps)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    p0: float = Field(default=0.02, description="Share of probe items off on a healthy server.")
    p1: float = Field(default=0.25, description="Share of probe items off after a real change.")
    h: float = Field(default=6.0, description="The statistic at which the watch alarms.")

    @classmethod
    def for_healthy_rate(cls, rate: float) -> Cusum:
        """The test for a lane whose healthy items are off at `rate` (its noise floor): p1 stays
        at least four times p0, so a noisy lane needs a larger change to alarm."""
        p0 = min(max(rate, 1e-4), 0.2)
        return cls(p0=p0, p1=max(cls.model_fields["p1"].default, 4 * p0))

    @property
    def cap(self) -> float:
        """The most one tick adds: half the threshold, so no single tick alarms."""
        return self.h / 2

    def increment(self, off: int, n: int) -> float:
        """What a tick with `off` of `n` items off adds (clipped to at most `cap`)."""
        if n <= 0:
            return 0.0
        up = math.log(self.p1 / self.p0)
        down = math.log((1 - self.p1) / (1 - self.p0))
        return min(self.cap, off * up + (n - off) * down)

    def update(self, statistic: float, off: int, n: int) -> float:
        """The statistic after one tick: never below 0, and held at `h` once there, so a server
        that heals is seen as recovered within a few clean ticks however long the fault lasted."""
        return min(self.h, max(0.0, statistic + self.increment(off, n)))

    def alarmed(self, statistic: float) -> bool:
        return statistic >= self.h - 1e-9


DEFAULT_CUSUM = Cusum()


def ticks_to_alarm(cusum: Cusum, n: int, off: int) -> int | None:
    """Ticks from a clean start until the alarm when every tick has `off` of `n` items off
    (None: that rate never alarms)."""
    step = cusum.increment(off, n)
    if step <= 0:
        return None
    s, ticks = 0.0, 0
    while not cusum.alarmed(s):
        s, ticks = cusum.update(s, off, n), ticks + 1
    return ticks


def false_alarm_ticks(
    cusum: Cusum, n: int, rate: float, *, runs: int = 200, limit: int = 1_000_000, seed: int = 0
) -> float:
    """Mean ticks to a (false) alarm when each item is off at `rate` independently, by a seeded
    simulation of `runs` watches (each stopped at `limit` ticks: the mean is then a floor)."""
    rng = random.Random(seed)
    total = 0
    for _ in range(runs):
        s, t = 0.0, 0
        while t < limit:
            t += 1
            off = sum(1 for _ in range(n) if rng.random() < rate)
            s = cusum.update(s, off, n)
            if cusum.alarmed(s):
                break
        total += t
    return total / runs
