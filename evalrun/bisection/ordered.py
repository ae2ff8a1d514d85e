"""Ordered bisect: the first bad value of an ordered list (engine releases, or any knob's values
in order), in about log2(N) trials where one-knob mode tries all N.

`bisect_ordered` checks both ends first (the first value must pass, the last must fail; an end
that cannot be tested moves the end inward and is reported as skipped), then halves the open range
as `git bisect` does (gitbisect.bisect_commits, k-section with a pool of k lanes): the answer is
the first bad value and the last good one. A value that cannot be tested (it does not install or
boot) is skipped like `git bisect skip`: never blamed, and when skips leave more than one suspect
the result names them all.

A step whose evidence is close to its line is asked again: `sequential` keeps probing until one
verdict leads the other by `lead` probes, or `most` probes were spent (a bounded sequential
probability ratio test with a symmetric per-probe accuracy). Its posterior is the step's
confidence; the culprit's confidence is the product of its two boundary steps' (the last good
passes, the first bad fails). Pure: the trials and what counts as close are passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from evalrun.bisection.dd import Outcome
from evalrun.bisection.gitbisect import bisect_commits

T = TypeVar("T")

# A probe far from every line is taken to be right this often (one clear probe decides a step);
# a probe near a line this often (so a lead of 2 probes gives odds of 16:1, ~94%).
CLEAR_ACCURACY = 0.95
CLOSE_ACCURACY = 0.8
LEAD = 2
MOST_PROBES = 5


@dataclass
class OrderedResult(Generic[T]):
    """Where an ordered bisect ended."""

    first_bad: T | None
    last_good: T | None
    tested: list[tuple[T, Outcome]] = field(default_factory=list)
    skipped: list[T] = field(default_factory=list)
    """Values that could not be tested (install or boot failed): never blamed."""
    candidates: list[T] = field(default_factory=list)
    """When ambiguous: every value that may be the first bad one."""
    ambiguous: bool = False
    note: str = ""
    """Why nothing was found (an end that does not behave), empty otherwise."""


def bisect_ordered(
    values: Sequence[T],
    test: Callable[[T], Outcome],
    *,
    test_many: Callable[[list[T]], list[Outcome]] | None = None,
    width: int = 1,
) -> OrderedResult[T]:
    """The first value that fails, the values ordered oldest to newest. The good end runs first
    and alone (its tokens judge the others), then the bad end, then the halving."""
    tested: list[tuple[T, Outcome]] = []
    skipped: list[T] = []

    def probe(value: T) -> Outcome:
        outcome = test(value)
        tested.append((value, outcome))
        if outcome is Outcome.UNRESOLVED:
            skipped.append(value)
        return outcome

    def many(batch: list[T]) -> list[Outcome]:
        if test_many is None or len(batch) == 1:
            return [probe(v) for v in batch]
        outcomes = test_many(batch)
        tested.extend(zip(batch, outcomes))
        skipped.extend(v for v, o in zip(batch, outcomes) if o is Outcome.UNRESOLVED)
        return outcomes

    if len(values) < 2:
        return OrderedResult(None, None, note="an ordered bisect needs at least two values")
    lo = 0
    while lo < len(values) and (first := probe(values[lo])) is Outcome.UNRESOLVED:
        lo += 1
    if lo == len(values):
        return OrderedResult(None, None, tested, skipped, note="no value could be tested")
    if first is Outcome.FAIL:
        note = "the first testable value fails already: nothing to bisect in this range"
        return OrderedResult(values[lo], None, tested, skipped, note=note)
    hi = len(values) - 1
    while hi > lo and (last := probe(values[hi])) is Outcome.UNRESOLVED:
        hi -= 1
    if hi == lo:
        note = "only the first value could be tested"
        return OrderedResult(None, values[lo], tested, skipped, note=note)
    if last is Outcome.PASS:
        note = "the last testable value passes: no value in this range fails"
        return OrderedResult(None, values[hi], tested, skipped, note=note)
    inner = list(values[lo + 1 : hi + 1])  # values[lo] passes, values[hi] fails
    found = bisect_commits(inner, probe, test_many=many if width > 1 else None, width=width)
    return OrderedResult(
        first_bad=found.first_bad,
        last_good=found.last_good if found.last_good is not None else values[lo],
        tested=tested,
        skipped=skipped,
        candidates=list(found.candidates),
        ambiguous=found.ambiguous,
    )


# Close calls: a bounded sequential test -----------------------------------------------------------


@dataclass
class Votes:
    """The verdicts of one step's probes, and what they add up to."""

    outcomes: list[Outcome]
    close: bool
    """The first probe was near a line: later ones were asked for."""

    @property
    def fails(self) -> int:
        return sum(o is Outcome.FAIL for o in self.outcomes)

    @property
    def passes(self) -> int:
        return sum(o is Outcome.PASS for o in self.outcomes)

    @property
    def verdict(self) -> Outcome:
        if not self.close:
            return self.outcomes[0]
        if self.fails - self.passes >= LEAD:
            return Outcome.FAIL
        if self.passes - self.fails >= LEAD:
            return Outcome.PASS
        if not (self.fails or self.passes):
            return Outcome.UNRESOLVED
        # undecided within the bound: the majority, ties to the first probe's verdict
        if self.fails != self.passes:
            return Outcome.FAIL if self.fails > self.passes else Outcome.PASS
        return self.outcomes[0]

    @property
    def confidence(self) -> float:
        """P(the verdict is right) under the per-probe accuracy model (module docstring)."""
        if self.verdict is Outcome.UNRESOLVED:
            return 0.0
        if not self.close:
            return CLEAR_ACCURACY
        odds = CLOSE_ACCURACY / (1 - CLOSE_ACCURACY)
        margin = abs(self.fails - self.passes)
        ratio = odds**margin
        return round(ratio / (1 + ratio), 4)


def sequential(
    first: Outcome, close: bool, again: Callable[[int], Outcome], *, most: int = MOST_PROBES
) -> Votes:
    """A step's votes: the first probe's alone when it was clear; when `close`, more probes
    (`again(k)`, k = 2, 3, ...) until one verdict leads by LEAD or `most` probes were spent."""
    votes = Votes([first], close)
    if not close or first is Outcome.UNRESOLVED:
        return votes
    while len(votes.outcomes) < most and abs(votes.fails - votes.passes) < LEAD:
        votes.outcomes.append(again(len(votes.outcomes) + 1))
    return votes
