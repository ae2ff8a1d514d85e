"""Delta debugging with synthetic predicates: culprits found, and in how many trials."""

import math
import random

import pytest

from evalrun.bisection.dd import Outcome, dd, with_tries

P, F, U = Outcome.PASS, Outcome.FAIL, Outcome.UNRESOLVED


def needs(*culprits):
    """A predicate failing exactly when every one of `culprits` is applied."""
    calls = []

    def test(applied):
        calls.append(applied)
        return F if set(culprits) <= set(applied) else P

    test.calls = calls
    return test


def budget(n: int) -> int:
    """log2(N) + 1 trials for one culprit among N (endpoints assumed)."""
    return math.ceil(math.log2(n)) + 1 if n > 1 else 0


@pytest.mark.parametrize("n", range(1, 17))
def test_single_culprit_every_position_within_log2_plus_one(n):
    worst = 0
    for k in range(n):
        items = [f"k{i}" for i in range(n)]
        test = needs(f"k{k}")
        result = dd(items, test)
        assert result.culprits == [f"k{k}"]
        assert not result.ambiguous
        assert result.context == []
        assert len(result.trials) == len(test.calls)  # memoised: every call is a new config
        assert len({frozenset(c) for c in test.calls}) == len(test.calls)
        assert len(result.trials) <= budget(n)
        worst = max(worst, len(result.trials))
    # the bound is tight: some position needs the full binary search plus the solo check
    assert worst == budget(n)


def test_single_culprit_exact_trials_for_16():
    items = list(range(16))
    # culprit in the first half at every split: the passing side stays empty, no solo check
    assert len(dd(items, needs(0)).trials) == 4
    # culprit last: four halvings, then one solo check
    result = dd(items, needs(15))
    assert [t.outcome for t in result.trials] == [P, P, P, P, F]
    assert len(result.trials) == 5


def test_result_names_passing_and_failing_neighbours():
    result = dd(["a", "b", "c", "d"], needs("c"))
    assert result.culprits == ["c"]
    assert "c" not in result.passing
    assert "c" in result.failing


@pytest.mark.parametrize("n", range(2, 17))
def test_interacting_pair_is_found_as_a_pair(n):
    for a in range(n):
        for b in range(a + 1, n):
            test = needs(a, b)
            result = dd(list(range(n)), test)
            assert sorted(result.culprits) == [a, b], (n, a, b)
            assert not result.ambiguous
            assert len(result.trials) <= 2 * budget(n) + 1
            assert len({frozenset(c) for c in test.calls}) == len(test.calls)


def test_pair_trials_for_8():
    # spec decoding on (2) and eager off (5): isolate 5 (3 tests), 5 alone passes (+1), isolate 2
    # within the context with 5 fixed (2 tests), then 2+5 alone fails (+1)
    result = dd(list(range(8)), needs(2, 5))
    assert sorted(result.culprits) == [2, 5]
    assert [t.applied for t in result.trials] == [
        (0, 1, 2, 3),
        (0, 1, 2, 3, 4, 5),
        (0, 1, 2, 3, 4),
        (5,),
        (0, 1, 2, 5),
        (0, 1, 5),
        (2, 5),
    ]
    assert [t.outcome for t in result.trials] == [P, F, P, P, F, P, F]


@pytest.mark.parametrize("n,worst", [(4, 6), (8, 8), (16, 10)])
def test_pair_worst_case_trials(n, worst):
    # about 2 * (log2(N) + 1): one isolation per member of the pair, each with its solo check
    trials = [
        len(dd(list(range(n)), needs(a, b)).trials) for a in range(n) for b in range(a + 1, n)
    ]
    assert max(trials) == worst


def test_triple_interaction():
    result = dd(list(range(12)), needs(1, 6, 10))
    assert sorted(result.culprits) == [1, 6, 10]


def test_untestable_trials_are_stepped_around():
    # 3 without 4 does not boot (a flag that needs its partner); the culprit is 6
    def test(applied):
        s = set(applied)
        if 3 in s and 4 not in s:
            return U
        return F if 6 in s else P

    result = dd(list(range(8)), test)
    assert result.culprits == [6]
    assert not result.ambiguous
    assert any(t.outcome is U for t in result.trials)
    assert len(result.trials) <= budget(8) + 2


def test_untestable_everywhere_is_ambiguous_and_names_candidates():
    # every partial configuration fails to boot: nothing can be narrowed
    def test(applied):
        return U

    result = dd(["a", "b", "c"], test)
    assert result.ambiguous
    assert sorted(result.culprits) == ["a", "b", "c"]
    assert "untestable" in result.note
    # tried halves, then singletons and their complements, each once
    assert len(result.trials) == len({frozenset(t.applied) for t in result.trials})


def test_inseparable_untestable_pair_is_ambiguous():
    # 1 and 2 only boot when flipped together (a flag and its partner); 2 is the real culprit,
    # but no test can separate them: the answer must say so and name both
    def test(applied):
        s = set(applied)
        if (1 in s) != (2 in s):
            return U
        return F if 2 in s else P

    result = dd([0, 1, 2, 3], test)
    assert result.ambiguous
    assert result.culprits == [1, 2]
    assert "2 candidates" in result.note
    assert len(result.trials) == 7


def test_solo_check_untestable_is_ambiguous():
    def test(applied):
        s = set(applied)
        if s == {3}:
            return U
        return F if 3 in s else P

    result = dd([0, 1, 2, 3], test)
    assert result.culprits == [3]
    assert result.ambiguous
    assert result.context  # says what else was applied when it failed


def test_no_differences_is_an_error():
    with pytest.raises(ValueError):
        dd([], needs())


def test_flaky_predicate_needs_tries():
    # the culprit only garbles one run in three (seeded); a passing config never fails
    def flaky(seed):
        rng = random.Random(seed)

        def test(applied):
            if 5 in applied and rng.random() < 0.34:
                return F
            return P

        return test

    found_once = sum(dd(list(range(8)), flaky(s)).culprits == [5] for s in range(20))
    found_tries = sum(
        dd(list(range(8)), with_tries(flaky(s), 12, "any")).culprits == [5] for s in range(20)
    )
    assert found_once < 20  # a single run misses it sometimes
    assert found_tries == 20


def test_majority_vote_outvotes_a_lying_run():
    # every third run reports the wrong outcome
    state = {"n": 0}

    def liar(applied):
        state["n"] += 1
        truth = F if "x" in applied else P
        if state["n"] % 3 == 0:
            return P if truth is F else F
        return truth

    result = dd(["a", "b", "x", "c", "d"], with_tries(liar, 3, "majority"))
    assert result.culprits == ["x"]


def test_with_tries_counts_and_stops_early():
    calls = []

    def test(applied):
        calls.append(1)
        return F

    assert with_tries(test, 5, "any")(()) is F
    assert len(calls) == 1
    calls.clear()
    assert with_tries(test, 5, "majority")(()) is F
    assert len(calls) == 3
    assert with_tries(lambda a: U, 3, "any")(()) is U
    seq = iter([U, P, U])
    assert with_tries(lambda a: next(seq), 3, "any")(()) is P
    seq2 = iter([P, F, U, U])
    assert with_tries(lambda a: next(seq2), 4, "majority")(()) is U
    with pytest.raises(ValueError):
        with_tries(test, 0)
