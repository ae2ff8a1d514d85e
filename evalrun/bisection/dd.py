"""Delta debugging: the minimal set of differences that turns a passing configuration bad.

This is Zeller and Hildebrandt's *dd* ("Simplifying and Isolating Failure-Inducing Input", 2002):
given differences D between a passing configuration (none applied) and a failing one (all applied),
it narrows a passing subset c_pass and a failing superset c_fail until they differ by one
difference. Each test takes the first resolved rule (a failing subset shrinks c_fail, a passing one
grows c_pass, likewise for complements), so one culprit among N costs ceil(log2 N) tests, like a
binary search.

An isolated difference may only fail together with part of the passing context (an interacting
pair: speculative decoding on *and* eager mode off). So the culprit is then tried alone (one more
test: the "+1"); if it passes alone, dd runs again over the context with the culprit fixed, until
the culprits fail on their own. The result is a minimal failure-inducing set, reported as a pair
(or more) when the knobs only fail together.

A test returns PASS, FAIL or UNRESOLVED (untestable, like `git bisect skip`: the variant did not
boot). dd steps around unresolved tests by trying other subsets and finer splits; when they leave
more than one candidate, the result is marked ambiguous and names all of them. Tests are memoised:
no configuration is tested twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Generic, Literal, TypeVar

T = TypeVar("T")


class Outcome(StrEnum):
    """What one test of a configuration says."""

    PASS = "pass"
    FAIL = "fail"
    UNRESOLVED = "unresolved"


Predicate = Callable[[tuple[T, ...]], Outcome]
"""Tests a configuration: the differences applied to the passing base, in input order."""
Batch = Callable[[list[tuple[T, ...]]], list[Outcome]]
"""Tests several configurations at once (a pool of lanes), outcomes in the same order."""


@dataclass
class Trial(Generic[T]):
    """One configuration dd tested, with its outcome."""

    applied: tuple[T, ...]
    outcome: Outcome


@dataclass
class DDResult(Generic[T]):
    """The minimal failure-inducing set dd found, and how it got there."""

    culprits: list[T]
    """Differences that fail together; a single one for a lone culprit."""
    context: list[T] = field(default_factory=list)
    """Other differences applied when the culprits were last seen failing (empty when the culprits
    were seen failing on their own)."""
    ambiguous: bool = False
    """True when untestable configurations left more than one candidate."""
    note: str = ""
    """Why the answer is ambiguous, in one line."""
    passing: list[T] = field(default_factory=list)
    """The passing configuration closest to the failing one (for the verdict's "-> ... with")."""
    failing: list[T] = field(default_factory=list)
    """The smallest failing configuration seen."""
    trials: list[Trial[T]] = field(default_factory=list)
    """Configurations tested, in order (endpoints not included unless tested)."""


class _Memo(Generic[T]):
    """The predicate over index sets, cached so no configuration is tested twice."""

    def __init__(
        self, items: Sequence[T], test: Predicate[T], batch: Batch[T] | None = None, width: int = 1
    ) -> None:
        self.items = list(items)
        self.test = test
        self.batch = batch
        self.width = max(1, width) if batch is not None else 1
        self.cache: dict[frozenset[int], Outcome] = {}
        self.trials: list[Trial[T]] = []

    def seed(self, config: frozenset[int], outcome: Outcome) -> None:
        self.cache[config] = outcome

    def applied(self, config: frozenset[int]) -> tuple[T, ...]:
        return tuple(self.items[i] for i in sorted(config))

    def __call__(self, config: frozenset[int]) -> Outcome:
        if config not in self.cache:
            outcome = Outcome(self.test(self.applied(config)))
            self.cache[config] = outcome
            self.trials.append(Trial(self.applied(config), outcome))
        return self.cache[config]

    def many(self, configs: list[frozenset[int]]) -> list[Outcome]:
        """Outcomes of several configurations, the untested ones tested together (one batch)."""
        todo = list(dict.fromkeys(c for c in configs if c not in self.cache))
        if self.batch is not None and len(todo) > 1:
            for config, outcome in zip(todo, self.batch([self.applied(c) for c in todo])):
                self.cache[config] = Outcome(outcome)
                self.trials.append(Trial(self.applied(config), self.cache[config]))
        return [self(c) for c in configs]


def _split(delta: list[int], n: int) -> list[list[int]]:
    """`delta` in n contiguous parts of near-equal size (earlier parts get the extra element)."""
    size, extra = divmod(len(delta), n)
    parts, start = [], 0
    for k in range(n):
        end = start + size + (1 if k < extra else 0)
        parts.append(delta[start:end])
        start = end
    return [p for p in parts if p]


def _first_resolved(
    configs: list[list[int]], fixed: frozenset[int], test: _Memo[T], prefer: Outcome
) -> tuple[list[int], Outcome] | None:
    """The first of `configs` whose test passes or fails, with that outcome. With a pool of lanes
    `test.width` of them are tested at once, and within such a batch the first with the `prefer`
    outcome (dd's big step) is taken over an earlier one with the other; one lane is the
    sequential rule exactly."""
    for start in range(0, len(configs), test.width):
        chunk = configs[start : start + test.width]
        outcomes = test.many([fixed | frozenset(cfg) for cfg in chunk])
        resolved = [(c, o) for c, o in zip(chunk, outcomes) if o is not Outcome.UNRESOLVED]
        if resolved:
            return next(((c, o) for c, o in resolved if o is prefer), resolved[0])
    return None


def _isolate(pool: list[int], fixed: frozenset[int], test: _Memo[T]) -> tuple[list[int], list[int]]:
    """dd proper: c_pass ⊂ c_fail ⊆ pool (each with `fixed` applied) differing as little as
    the tests allow. Assumes fixed alone passes and fixed + pool fails."""
    c_pass: list[int] = []
    c_fail: list[int] = list(pool)
    n = max(2, test.width)  # k lanes: split in k parts, all tested at once (k-ary splitting)
    while True:
        in_pass = set(c_pass)
        delta = [i for i in c_fail if i not in in_pass]
        if len(delta) <= 1:
            return c_pass, c_fail
        n = min(n, len(delta))
        parts = _split(delta, n)
        subsets = [sorted(in_pass | set(part)) for part in parts]
        complements = [[i for i in c_fail if i not in set(part)] for part in parts]
        # A failing subset or a passing complement is the big step (back to n = 2); the other
        # outcome of each only narrows the interval (n - 1).
        for candidates, big_step in ((subsets, Outcome.FAIL), (complements, Outcome.PASS)):
            hit = _first_resolved(candidates, fixed, test, big_step)
            if hit is not None:
                cfg, outcome = hit
                if outcome is Outcome.FAIL:
                    c_fail = cfg
                else:
                    c_pass = cfg
                n = 2 if outcome is big_step else max(n - 1, 2)
                break
        if hit is not None:
            continue
        if n >= len(delta):
            return c_pass, c_fail  # every split untestable: ambiguous
        n = min(2 * n, len(delta))


def dd(
    items: Sequence[T], test: Predicate[T], *, batch: Batch[T] | None = None, width: int = 1
) -> DDResult[T]:
    """The minimal set of `items` (differences) whose application makes `test` fail.

    Assumes the empty configuration passes and the full one fails (the caller verifies the
    endpoints if it wants to; they are never tested here). Raises ValueError on no items.
    With `batch` and `width` k > 1 (a pool of k lanes), each step splits in k parts and tests up
    to k configurations at once; width 1 is the sequential dd.
    """
    if not items:
        raise ValueError("dd needs at least one difference between the passing and failing side")
    memo = _Memo(items, test, batch, width)
    everything = frozenset(range(len(items)))
    memo.seed(frozenset(), Outcome.PASS)
    memo.seed(everything, Outcome.FAIL)
    fixed: frozenset[int] = frozenset()
    pool = list(range(len(items)))
    while True:
        c_pass, c_fail = _isolate(pool, fixed, memo)
        delta = frozenset(c_fail) - frozenset(c_pass)
        fixed = fixed | delta
        result = DDResult(
            culprits=list(memo.applied(fixed)),
            context=list(memo.applied(frozenset(c_pass))),
            passing=list(memo.applied(fixed - delta | frozenset(c_pass))),
            failing=list(memo.applied(fixed | frozenset(c_pass))),
            trials=memo.trials,
        )
        if len(delta) > 1:
            result.ambiguous = True
            result.note = (
                f"untestable variants leave {len(delta)} candidates; the failure needs one or "
                "more of them"
            )
            return result
        if not c_pass:
            result.context = []
            return result
        alone = memo(fixed)  # the "+1": do the culprits fail without the context?
        if alone is Outcome.FAIL:
            result.context = []
            result.failing = list(memo.applied(fixed))
            return result
        if alone is Outcome.UNRESOLVED:
            result.ambiguous = True
            result.note = (
                "the culprits alone were untestable; they may need some of the context to fail"
            )
            return result
        pool = c_pass  # they pass alone: find the part of the context they need


Vote = Literal["any", "majority"]


def with_tries(test: Predicate[T], tries: int, vote: Vote = "any") -> Predicate[T]:
    """A predicate that runs `test` up to `tries` times, for flaky failures.

    vote="any": FAIL as soon as one run fails (an intermittent bug never fails a good config);
    PASS if a run passed and none failed; UNRESOLVED if all runs were untestable.
    vote="majority": the outcome more than half the runs agree on (stops once decided);
    UNRESOLVED when no outcome has a majority.
    """
    if tries < 1:
        raise ValueError("tries must be at least 1")

    def run(applied: tuple[T, ...]) -> Outcome:
        counts = {o: 0 for o in Outcome}
        for _ in range(tries):
            outcome = Outcome(test(applied))
            counts[outcome] += 1
            if vote == "any" and outcome is Outcome.FAIL:
                return Outcome.FAIL
            if vote == "majority" and counts[outcome] * 2 > tries:
                return outcome
        if vote == "any" and counts[Outcome.PASS]:
            return Outcome.PASS
        return Outcome.UNRESOLVED

    return run
