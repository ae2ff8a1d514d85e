"""A lane's own noise floor, measured from an A/A pair, and a candidate judged against it.

A healthy lane does not equal itself: batching, thread scheduling and kernel choice move its
logprobs and flip its near ties. An *A/A pair* is two runs of the good lane on the same items
(two scores of one contract, serial against a burst, two boots); judged against each other token
by token (compare/fidelity.py) they give the floor: how many items diverge (near ties and hard),
how many hard, and the drift (mean |Δ logprob| over the shared tokens), item by item. A candidate
B, judged against A the same way, is then graded against the floor:

- `identical`: every compared token and logprob equal (bitwise; the floor is not needed);
The noise B is judged against is the wider of two floors: A's own (its A/A pair) and, when there
is one, B's own (B's A/A pair: its serial copies against its burst in a bisect probe, or
`--candidate-floor` in compare/signoff). A variant whose own repeat wobbles as much as it differs
from A is within that noise, even against a deterministic A (floor 0); a fault differs from A by
clearly more than either side's own spread. Per figure the wider floor is taken (the higher hard
rate, the higher diverging rate, the larger drift).

- `divergent`: B's hard divergences exceed the floor's (one-sided Fisher exact test, B's count of
  its items against the floor's count of its own, p < alpha: both counts are samples, so the
  floor's own uncertainty is in the test; while the floor's hard rate is no higher than the
  default healthy rate, the default binomial test flags too, so a short clean floor never loosens
  the test, only a noisy one does), or its drift is outside the noise (below) and above both
  `drift_max` and `divergent_units` floor units;
- `numerically different`: outside the noise but not divergent: B's diverging items exceed the
  floor's (the same Fisher test on near ties + hard), or its drift is at least `floor_units` floor
  units and a seeded paired bootstrap over items puts it above the floor's (p < alpha);
- `within noise`: none of these.

The distance is shown in *floor units*: B's drift over the wider floor's (taken as at least
`same`, so a floor of identical runs does not divide by zero). Pure: no I/O.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

Grade = Literal["identical", "within noise", "numerically different", "divergent"]
Source = Literal["measured", "defaults"]
FLOOR_UNITS = 3.0  # the least drift, in floor units, reported outside the noise
DIVERGENT_UNITS = 4.0  # drift beyond this many floor units (and drift_max) is divergent
# The most of a lane's diverging items that healthy noise makes hard: GPU batching, flash
# attention and a q8_0 K cache measured 7-11% (llama.cpp CUDA, 180 items a pair); faults 13-88%.
HEALTHY_SHARE = 0.12
RESAMPLES = 2000
SEED = 0


class Judged(Protocol):
    """What a fidelity judgement (compare/fidelity.py's Fidelity) gives the floor."""

    items: int
    identical: int
    near_tie: int
    hard: int
    retokenized: int
    tokens: int
    drift: float
    item_drift: dict[str, tuple[float, int]]


class Floor(BaseModel):
    """A lane's noise floor: its A/A pairs' figures, pooled."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="Where it was measured, e.g. `run X vs Y`, `serial vs burst`.")
    pairs: int = Field(description="A/A pairs pooled.")
    items: int = Field(description="Items compared over all pairs.")
    diverged: int = Field(description="Of those, items that diverged at all (near tie or hard).")
    hard: int = Field(description="Of those, hard divergences (retokenized counted in).")
    tokens: int = Field(description="Shared tokens the drift is over.")
    drift: float = Field(description="Mean |Δ logprob| over the shared tokens.")
    item_drift: dict[str, tuple[float, int]] = Field(
        default_factory=dict, exclude=True, description="Per item: (sum |Δ|, tokens), pooled."
    )

    def line(self) -> str:
        return (
            f"floor: measured ({self.source}: {self.diverged} of {self.items} items diverged, "
            f"{self.hard} hard, drift {self.drift:.4f})"
        )


class FloorGrade(BaseModel):
    """A candidate graded against a floor: the grade, the distance and the tests behind it."""

    model_config = ConfigDict(extra="forbid")

    grade: Grade
    reason: str
    floor: Floor
    cand_floor: Floor | None = Field(
        default=None, description="The candidate's own A/A floor, when it was measured."
    )
    units: float = Field(description="The candidate's drift in floor units.")
    p_hard: float = Field(description="Fisher exact: this many hard against the floor's count.")
    p_diverged: float = Field(description="The same test on diverging items (near ties + hard).")
    p_drift: float = Field(description="Paired bootstrap: the candidate's drift at or under.")


def floor_of(pairs: Iterable[Judged], source: str, *, widest: bool = False) -> Floor | None:
    """The floor pooled over A/A pairs (None: no pair compared an item). `widest`: the counts
    pooled, the drift (and its items') the widest pair's rather than the token-weighted mean,
    for pairs of a few items each, where one item's variant decides a pair's drift."""
    pairs = list(pairs)
    items = sum(f.items for f in pairs)
    if not items:
        return None
    if widest:
        wide = max(pairs, key=lambda f: f.drift)
        drift, per, tokens = wide.drift, dict(wide.item_drift), wide.tokens
    else:
        per = {}
        for f in pairs:
            for item, (total, n) in f.item_drift.items():
                s, m = per.get(item, (0.0, 0))
                per[item] = (s + total, m + n)
        tokens = sum(f.tokens for f in pairs)
        drift = sum(f.drift * f.tokens for f in pairs) / tokens if tokens else 0.0
    return Floor(
        source=source,
        pairs=len(pairs),
        items=items,
        diverged=sum(f.items - f.identical for f in pairs),
        hard=sum(f.hard + f.retokenized for f in pairs),
        tokens=tokens,
        drift=round(drift, 5),
        item_drift=per,
    )


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), exactly (fidelity's healthy-rate test and the floor's
    default bound both use this one)."""
    if k <= 0:
        return 1.0
    if k > n or p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    # Each term in log space (lgamma for the binomial coefficient), summed by log-sum-exp: the
    # terms themselves (comb(5000, 100) is ~10^211, 0.02^100 is 10^-170) overflow a float long
    # before their product does.
    lp, lq = math.log(p), math.log1p(-p)
    base = math.lgamma(n + 1)
    logs = [
        base - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
        for i in range(k, n + 1)
    ]
    top = max(logs)
    return min(1.0, math.exp(top) * math.fsum(math.exp(x - top) for x in logs))


def beta_binom_sf(k: int, n: int, hits: int, trials: int) -> float:
    """P(X >= k), X the count in n new items at a rate seen as `hits` of `trials` (Jeffreys
    prior Beta(1/2, 1/2) updated by them): the binomial test with the floor's own uncertainty."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    a, b = hits + 0.5, trials - hits + 0.5

    def log_pmf(x: int) -> float:
        return (
            math.lgamma(n + 1)
            - math.lgamma(x + 1)
            - math.lgamma(n - x + 1)
            + _log_beta(x + a, n - x + b)
            - _log_beta(a, b)
        )

    return min(1.0, sum(math.exp(log_pmf(x)) for x in range(k, n + 1)))


def fisher_sf(k: int, n: int, h: int, m: int) -> float:
    """One-sided Fisher exact test: P(X >= k) for X the first sample's share of the k + h hits
    when n + m items are split n and m at random (hypergeometric): whether a count of k in n
    exceeds a count of h in m beyond chance, both counts being samples."""
    if k <= 0:
        return 1.0
    hits, total = k + h, n + m
    if k > n or hits > total:
        return 0.0

    def log_c(a: int, b: int) -> float:
        return math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(a - b + 1)

    den = log_c(total, hits)
    top = min(hits, n)
    terms = (log_c(n, x) + log_c(m, hits - x) - den for x in range(k, top + 1) if hits - x <= m)
    return min(1.0, sum(math.exp(t) for t in terms))


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _mean(per: dict[str, tuple[float, int]], ids: Sequence[str]) -> float:
    total = n = 0.0
    for i in ids:
        s, m = per.get(i, (0.0, 0))
        total, n = total + s, n + m
    return total / n if n else 0.0


def drift_p(
    cand: dict[str, tuple[float, int]],
    floor: dict[str, tuple[float, int]],
    same: float,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> float:
    """One-sided bootstrap p that the candidate's drift is no more than the floor's: items
    resampled (seeded), paired where both compared the item, each side on its own otherwise."""
    common = [i for i in cand if i in floor]
    rng = random.Random(seed)
    at_or_under = 0
    cand_ids, floor_ids = list(cand), list(floor)
    for _ in range(resamples):
        if len(common) * 2 >= max(len(cand_ids), 1):
            pick = rng.choices(common, k=len(common))
            c, f = _mean(cand, pick), _mean(floor, pick)
        else:
            c = _mean(cand, rng.choices(cand_ids, k=len(cand_ids)))
            f = _mean(floor, rng.choices(floor_ids, k=len(floor_ids))) if floor_ids else 0.0
        at_or_under += c <= max(f, same)
    return (at_or_under + 1) / (resamples + 1)


def healthy_own(
    cand_floor: Floor, floor: Floor, *, healthy_rate: float, divergent_units: float
) -> bool:
    """Whether the candidate's own A/A wobble is one a healthy lane may show, and so noise that
    excuses its distance from A. A fault that makes the lane unstable must not hide behind its
    own instability, hard counts or drift: a q4_0 K cache on a GPU diverges hard from itself on
    2-5 of 16 probe items (28% of its diverging items over the whole suite) where healthy
    batching, flash attention or a q8_0 cache show 0-1 (7-11%). Healthy: its hard divergences
    no more than divergent_units x the default healthy rate of its items, or than HEALTHY_SHARE
    of its own diverging items (a lane that batches diverges a lot, mostly in near ties), or
    than A's own."""
    cap = max(
        math.floor(divergent_units * healthy_rate * cand_floor.items),
        math.floor(HEALTHY_SHARE * cand_floor.diverged),
        floor.hard,
    )
    return cand_floor.hard <= cap


def grade(
    cand: Judged,
    floor: Floor,
    *,
    alpha: float,
    same: float,
    drift_max: float,
    healthy_rate: float,
    floor_units: float = FLOOR_UNITS,
    divergent_units: float = DIVERGENT_UNITS,
    cand_floor: Floor | None = None,
) -> FloorGrade:
    """The candidate (B judged against A) graded against the wider of A's floor and B's own."""
    n = cand.items
    hard = cand.hard + cand.retokenized
    diverged = n - cand.identical
    floors = [floor]
    if (
        cand_floor is not None
        and cand_floor.items
        and healthy_own(
            cand_floor, floor, healthy_rate=healthy_rate, divergent_units=divergent_units
        )
    ):
        floors.append(cand_floor)
    hf = max(floors, key=lambda f: f.hard / f.items)
    df = max(floors, key=lambda f: f.diverged / f.items)
    wf = max(floors, key=lambda f: f.drift)
    units = cand.drift / max(wf.drift, same)
    p_hard = fisher_sf(hard, n, hf.hard, hf.items)
    if hf.hard <= healthy_rate * hf.items:
        # The floor is no noisier than the default healthy rate: it can tighten the test (a
        # long, clean floor) but a short one must not loosen it.
        p_hard = min(p_hard, binom_sf(hard, n, healthy_rate))
    p_div = fisher_sf(diverged, n, df.diverged, df.items)
    p_drift = drift_p(cand.item_drift, wf.item_drift, same)
    drift_out = p_drift < alpha and units >= floor_units and cand.drift > same
    far = drift_out and cand.drift > max(drift_max, divergent_units * wf.drift)
    g: Grade
    if diverged == 0 and cand.drift <= same:
        g, why = "identical", "every compared token equal"
    elif p_hard < alpha:
        g = "divergent"
        why = f"{hard} hard of {n} items against the floor's {hf.hard} of {hf.items}"
    elif far:
        g, why = "divergent", f"drift {cand.drift:.4f} is {units:.1f} floor units"
    elif drift_out:
        g, why = "numerically different", f"drift {cand.drift:.4f} is {units:.1f} floor units"
    elif p_div < alpha:
        g = "numerically different"
        why = f"{diverged} of {n} items diverge against the floor's {df.diverged} of {df.items}"
    else:
        g, why = "within noise", f"drift {units:.1f} floor units, {hard} hard, {diverged} diverged"
    return FloorGrade(
        grade=g,
        reason=why,
        floor=floor,
        cand_floor=cand_floor,
        units=round(units, 2),
        p_hard=round(p_hard, 6),
        p_diverged=round(p_div, 6),
        p_drift=round(p_drift, 5),
    )
