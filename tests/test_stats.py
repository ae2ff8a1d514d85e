import random

import pytest

from evalrun.base.errors import UsageError
from evalrun.compare.stats import (
    mcnemar_exact,
    min_detectable_difference,
    paired_bootstrap_ci,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (1, 5, 0.21875),  # 2 * (1 + 6) / 64
        (0, 6, 0.03125),  # 2 / 64
        (0, 5, 0.0625),  # 2 / 32: five one-way flips are not enough at 0.05
        (2, 4, 0.6875),  # the seeds' 170 vs 168 story
        (3, 3, 1.0),
        (0, 0, 1.0),
        (4, 12, 0.076812744140625),  # 2 * 2517 / 65536
        (4, 13, 0.049041748046875),  # 2 * 3214 / 131072
        (10, 0, 2 / 1024),
    ],
)
def test_mcnemar_exact_known_values(b, c, p):
    assert mcnemar_exact(b, c) == pytest.approx(p, abs=1e-12)
    assert mcnemar_exact(c, b) == pytest.approx(p, abs=1e-12)  # symmetric


def test_mcnemar_one_sided():
    # "B is worse": 5 losses, 0 gains -> (1/2)^5
    assert mcnemar_exact(5, 0, alternative="less") == pytest.approx(1 / 32)
    # The same table seen from the other side is no evidence at all
    assert mcnemar_exact(5, 0, alternative="greater") == pytest.approx(1.0)
    # 2 losses, 4 gains: P(X >= 2 | n=6) = 1 - 7/64
    assert mcnemar_exact(2, 4, alternative="less") == pytest.approx(57 / 64)
    assert mcnemar_exact(4, 2, alternative="greater") == pytest.approx(57 / 64)


def test_mcnemar_large_tables_stay_finite():
    p = mcnemar_exact(480, 520)
    assert 0.2 < p < 0.25  # normal approximation: z = 40 / sqrt(1000) -> p ~ 0.206..0.22


def test_mcnemar_rejects_bad_input():
    with pytest.raises(UsageError):
        mcnemar_exact(-1, 2)
    with pytest.raises(UsageError):
        mcnemar_exact(1, 2, alternative="bigger")


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        (0, 10, 0.0, 0.277533),
        (5, 10, 0.236593, 0.763407),
        (10, 10, 0.722467, 1.0),
        (168, 184, 0.863426, 0.945767),
    ],
)
def test_wilson_known_values(k, n, lo, hi):
    got = wilson_interval(k, n)
    assert got == pytest.approx((lo, hi), abs=1e-6)


def test_wilson_edge_cases():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(UsageError):
        wilson_interval(11, 10)


def _pairs(n_both, lost, gained, n_neither):
    a = [True] * n_both + [True] * lost + [False] * gained + [False] * n_neither
    b = [True] * n_both + [False] * lost + [True] * gained + [False] * n_neither
    return a, b


def test_bootstrap_is_deterministic_under_a_seed():
    a, b = _pairs(166, 2, 4, 12)
    first = paired_bootstrap_ci(a, b, seed=7, resamples=2000)
    assert paired_bootstrap_ci(a, b, seed=7, resamples=2000) == first
    # A different seed is a different draw; across a few seeds the interval must move somewhere
    others = {paired_bootstrap_ci(a, b, seed=s, resamples=200) for s in range(8)}
    assert len(others) > 1


def test_bootstrap_interval_covers_the_observed_delta_and_is_paired():
    a, b = _pairs(166, 2, 4, 12)
    lo, hi = paired_bootstrap_ci(a, b, seed=0)
    assert lo <= 2 <= hi
    assert lo < 0 < hi  # 2 of 184 is noise: the interval straddles zero
    # Paired, so identical runs have no uncertainty at all
    assert paired_bootstrap_ci(a, a) == (0, 0)
    # A real regression: 30 losses, 0 gains, interval well below zero
    a2, b2 = _pairs(140, 30, 0, 14)
    lo2, hi2 = paired_bootstrap_ci(a2, b2, seed=0)
    assert hi2 < -15 and lo2 > -45


def test_bootstrap_does_not_touch_global_random():
    random.seed(123)
    expected = random.random()
    random.seed(123)
    paired_bootstrap_ci(*_pairs(10, 3, 1, 2), seed=1, resamples=50)
    assert random.random() == expected


def test_bootstrap_rejects_unpaired_input():
    with pytest.raises(UsageError):
        paired_bootstrap_ci([True], [True, False])


def test_min_detectable_difference():
    # Tiny discordance: the floor is the smallest significant one-way table, b=0 c=6
    assert min_detectable_difference(0) == 6
    assert min_detectable_difference(6) == 6
    # D = 16: b=4 c=13 over 17 pairs is p=0.049; 8 items (4 vs 12) is p=0.077
    assert min_detectable_difference(16) == 9
    # One-sided needs less: b=0 c=5 is p=1/32
    assert min_detectable_difference(0, alternative="less") == 5
    # More disagreement between the runs means a bigger difference is needed
    assert min_detectable_difference(60) > min_detectable_difference(16)
    # A stricter alpha needs more
    assert min_detectable_difference(16, alpha=0.01) > 9
    # Nothing can be significant with fewer than 6 items in all
    assert min_detectable_difference(0, limit=5) is None


def test_bootstrap_fixed_seed_gives_a_fixed_interval():
    # Pinned so a change of sampler (and so of every published interval) is a visible change.
    assert paired_bootstrap_ci(*_pairs(166, 2, 4, 12), seed=0) == (-3, 7)


def test_bootstrap_matches_index_resampling():
    # Drawing counts must give the same distribution as drawing n indices with replacement.
    a, b = _pairs(150, 20, 10, 20)
    lo, hi = paired_bootstrap_ci(a, b, seed=3, resamples=4000)
    rng = random.Random(3)
    diffs = [int(y) - int(x) for x, y in zip(a, b, strict=True)]
    naive = sorted(sum(rng.choices(diffs, k=len(diffs))) for _ in range(4000))
    assert abs(lo - naive[100]) <= 1 and abs(hi - naive[3900]) <= 1


def test_bootstrap_large_suite_is_quick_and_sane():
    rng = random.Random(1)
    a = [rng.random() < 0.6 for _ in range(20000)]
    b = [rng.random() < 0.6 for _ in a]
    delta = sum(b) - sum(a)
    lo, hi = paired_bootstrap_ci(a, b, seed=0, resamples=2000)
    disc = sum(x != y for x, y in zip(a, b, strict=True))
    half = 1.96 * disc**0.5  # normal approximation of the paired delta
    assert lo < delta < hi
    assert abs((hi - lo) / 2 - half) < 0.1 * half
