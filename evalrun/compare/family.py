"""The paired tests of one comparison as one family: the whole suite and each category.

Each test asks whether B differs from A on the items graded in both runs. An item contributes
its paired difference d = outcome_B - outcome_A, where an outcome is 1 (passed) or 0 (failed).
With repeats (`score --repeats K`) the outcome is the item's majority over its runs (`majority`:
1 when it passed in more than half, 1/2 on a tie): sampling noise then rarely moves an item. In
4,000 simulated sign-offs of identical lanes under independent sampling with 3 repeats, testing
the raw pass rates blocked 2.0% of them and majority outcomes 0.8% (bench/signoff_calibration.py);
compare still shows the raw rates and their exact test. Only items with d != 0 carry
information; the test is exact McNemar when every d is -1, 0 or +1 and the exact sign-flip test
(`stats.paired_rate_test`) when ties make some d a half.

The garble test is one more member: items answered in both runs, d = -1 where only B's answer is
garbled and +1 where only A's is.

Testing twelve hypotheses at alpha each would call one of them significant far more often than
alpha when nothing changed. `adjust` applies Holm's step-down correction to the family, weighted
so that the total holds 35% of alpha (`TOTAL_WEIGHT`), and both
`compare` (two-sided) and `signoff` (one-sided, "is the candidate worse?") read their adjusted
p-values from it: one rule for multiple testing everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from evalrun.compare.stats import holm_adjust, mcnemar_exact, paired_rate_test

Diff = int | Fraction  # rate_B - rate_A for one paired item
TOTAL = ""  # the subject of the whole-suite test
GARBLE = "garble"  # the subject of the garble test
# The whole-suite test holds 35% of the family's alpha; the categories and garble share the rest,
# and inherit the total's share once it is rejected (weighted Holm). A drop spread thinly
# over the suite is then found at nearly the unadjusted power, and a collapsed category still is
# once the total moved, without raising the family-wise error rate above alpha.
TOTAL_WEIGHT = 0.35


@dataclass
class PairedTest:
    """One hypothesis of the family: B is no different from A on `subject`'s paired items."""

    subject: str
    paired: int
    lost: int  # items whose pass rate fell from A to B
    gained: int  # items whose pass rate rose
    net: Fraction  # sum of d: B - A in items (a fraction of an item with repeats)
    p_value: float  # two-sided, unadjusted
    p_worse: float  # one-sided for "B is worse", unadjusted
    p_adjusted: float = 1.0  # two-sided, Holm over the family
    p_worse_adjusted: float = 1.0  # one-sided, Holm over the family
    diffs: list[Diff] = field(default_factory=list, repr=False)

    @property
    def drop_points(self) -> float:
        """Points B lost against A on the paired items (negative: B gained)."""
        return float(-100 * self.net / self.paired) if self.paired else 0.0


def majority(rate: Fraction) -> Fraction:
    """An item's outcome over its repeats: 1 if it passed in most runs, 0 if it failed in most,
    1/2 on a tie."""
    half = Fraction(1, 2)
    return Fraction(1) if rate > half else (Fraction(0) if rate < half else half)


def paired_test(subject: str, diffs: Sequence[Diff]) -> PairedTest:
    """The exact paired test of one subject's item differences (B - A)."""
    lost = sum(1 for d in diffs if d < 0)
    gained = sum(1 for d in diffs if d > 0)
    if all(d in (-1, 0, 1) for d in diffs):
        two, worse = mcnemar_exact(lost, gained), mcnemar_exact(lost, gained, alternative="less")
    else:
        fr = [Fraction(d) for d in diffs]
        two = paired_rate_test(fr)
        worse = paired_rate_test(fr, alternative="less")
    return PairedTest(
        subject=subject,
        paired=len(diffs),
        lost=lost,
        gained=gained,
        net=Fraction(sum(diffs)),
        p_value=two,
        p_worse=worse,
        diffs=list(diffs),
    )


@dataclass
class Family:
    """The tests of one comparison: the whole suite, each category, and garble."""

    total: PairedTest
    categories: list[PairedTest]
    garble: PairedTest

    @property
    def members(self) -> list[PairedTest]:
        return [self.total, *self.categories, self.garble]


def family(pairs: Iterable[tuple[str, Diff]], garble: Sequence[Diff] = ()) -> Family:
    """The whole-suite test, one test per category (sorted) and the garble test, Holm-adjusted
    together.

    `pairs` holds (category, d) for every item graded in both runs; `garble` holds, for every item
    answered in both runs, garbled_A - garbled_B (-1: newly garbled in B), so that for every
    member a negative sum means "B is worse".
    """
    by_cat: dict[str, list[Diff]] = {}
    every: list[Diff] = []
    for cat, d in pairs:
        by_cat.setdefault(cat, []).append(d)
        every.append(d)
    fam = Family(
        total=paired_test(TOTAL, every),
        categories=[paired_test(cat, by_cat[cat]) for cat in sorted(by_cat)],
        garble=paired_test(GARBLE, list(garble)),
    )
    members = fam.members
    weights = [TOTAL_WEIGHT] + [(1 - TOTAL_WEIGHT) / (len(members) - 1)] * (len(members) - 1)
    for t, p in zip(members, adjust([t.p_value for t in members], weights), strict=True):
        t.p_adjusted = p
    for t, p in zip(members, adjust([t.p_worse for t in members], weights), strict=True):
        t.p_worse_adjusted = p
    return fam


def adjust(pvalues: Sequence[float], weights: Sequence[float] | None = None) -> list[float]:
    """The family-wise adjustment every comparison and sign-off uses (weighted Holm)."""
    return holm_adjust(pvalues, weights)
