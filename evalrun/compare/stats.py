"""Paired statistics for comparing two runs of the same suite (stdlib only, exact where it can be).

Two runs of one suite are *paired*: item k of run A and item k of run B answer the same question.
Only the items where they disagree (the discordant pairs) carry information about which run is
better, so every test here works on the discordance, never on two independent proportions.

- `mcnemar_exact`: exact McNemar test, a binomial test on the discordant pairs.
- `paired_bootstrap_ci`: a seeded percentile bootstrap interval for the score delta B - A.
- `wilson_interval`: the Wilson score interval of one run's pass rate.
- `min_detectable_difference`: the smallest net item difference the test could call significant.
- `paired_rate_test`: the exact sign-flip test on per-item pass rates (runs with repeats).
- `holm_adjust`: Holm's family-wise adjustment, shared by compare and signoff.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from math import comb, exp, gcd, lgamma, log, sqrt
from statistics import NormalDist

from evalrun.base.errors import UsageError

DEFAULT_ALPHA = 0.05
DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 10_000


def _binom_cdf_half(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), summed in exact integers."""
    if k < 0:
        return 0.0
    return sum(comb(n, i) for i in range(min(k, n) + 1)) / 2**n


def mcnemar_exact(b: int, c: int, *, alternative: str = "two-sided") -> float:
    """Exact McNemar p-value for `b` pairs A-pass/B-fail and `c` pairs A-fail/B-pass.

    Under the null hypothesis (the two runs are equally good) each discordant pair is a fair coin,
    so b ~ Binomial(b + c, 1/2). `two-sided` doubles the smaller tail (capped at 1), which is what
    scipy's `binomtest` gives for p = 1/2. `less` tests "B is worse than A" (large b): P(X >= b).
    `greater` tests "B is better" (large c): P(X >= c). No discordant pairs gives p = 1.
    """
    if b < 0 or c < 0:
        raise UsageError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    if alternative == "two-sided":
        return min(1.0, 2 * _binom_cdf_half(min(b, c), n))
    if alternative == "less":
        return 1.0 - _binom_cdf_half(b - 1, n)
    if alternative == "greater":
        return 1.0 - _binom_cdf_half(c - 1, n)
    raise UsageError(f"alternative must be two-sided, less or greater, not {alternative!r}")


def wilson_interval(successes: int, n: int, *, alpha: float = DEFAULT_ALPHA) -> tuple[float, float]:
    """Wilson score interval for a pass rate, as fractions in [0, 1]; (0, 1) when n is 0.

    Unlike the normal-approximation interval it stays inside [0, 1] and behaves near 0 % and 100 %,
    where good runs live.
    """
    if n == 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise UsageError(f"successes must be within 0..{n}, got {successes}")
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return (lo, hi)


def _binomial(rng: random.Random, n: int, p: float) -> int:
    """One exact Binomial(n, p) draw by inversion, searching outward from the mode.

    One uniform is spent on P(mode), then on the terms alternately above and below it, so a draw
    costs a few standard deviations of steps rather than n (and nothing underflows).
    """
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    q = 1.0 - p
    mode = min(n, int((n + 1) * p))
    pmode = exp(
        lgamma(n + 1)
        - lgamma(mode + 1)
        - lgamma(n - mode + 1)
        + mode * log(p)
        + (n - mode) * log(q)
    )
    u = rng.random() - pmode
    if u <= 0:
        return mode
    lo = hi = mode
    p_lo = p_hi = pmode
    while lo > 0 or hi < n:
        if hi < n:
            p_hi *= (n - hi) / (hi + 1) * p / q
            hi += 1
            u -= p_hi
            if u <= 0:
                return hi
        if lo > 0:
            p_lo *= lo / (n - lo + 1) * q / p
            lo -= 1
            u -= p_lo
            if u <= 0:
                return lo
    return mode  # rounding left a sliver of probability unassigned


def paired_bootstrap_ci(
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    alpha: float = DEFAULT_ALPHA,
) -> tuple[int, int]:
    """Percentile bootstrap interval for the paired delta sum(b) - sum(a), in items.

    Resamples the n item pairs (not the two runs separately) with replacement, `resamples` times,
    from `random.Random(seed)`: the same inputs and seed always give the same interval. Only the
    discordant pairs move the delta, so a resample is drawn as its counts: how many of the n draws
    land on a discordant pair (Binomial(n, D/n)), and how many of those on a pass->fail pair
    (Binomial(k, b/D)). That is the same distribution as drawing n indices, at a cost of about
    D steps instead of n.
    """
    if len(a) != len(b):
        raise UsageError(f"paired outcomes differ in length ({len(a)} vs {len(b)})")
    n = len(a)
    lost = sum(x and not y for x, y in zip(a, b, strict=True))
    gained = sum(y and not x for x, y in zip(a, b, strict=True))
    disc = lost + gained
    if n == 0 or disc == 0 or resamples < 1:
        return (0, 0)
    rng = random.Random(seed)
    deltas = []
    for _ in range(resamples):
        k = _binomial(rng, n, disc / n)
        down = _binomial(rng, k, lost / disc)
        deltas.append(k - 2 * down)
    deltas.sort()
    lo = deltas[int((alpha / 2) * resamples)]
    hi = deltas[min(resamples - 1, int((1 - alpha / 2) * resamples))]
    return (lo, hi)


def min_detectable_difference(
    discordant: int,
    *,
    alpha: float = DEFAULT_ALPHA,
    limit: int | None = None,
    alternative: str = "two-sided",
) -> int | None:
    """Smallest net item difference |c - b| that the exact McNemar test calls significant.

    Method: keep the observed number of discordant pairs D = b + c (the runs' own disagreement,
    which sets the noise level) and ask how lopsided the split must be. For a net difference k
    the least lopsided way to realise it with at least D discordant pairs is n = max(D, k)
    (plus one when n - k is odd, so that b = (n - k) / 2 is whole), b = (n - k) / 2,
    c = (n + k) / 2. The answer is the smallest k whose p-value is below `alpha`. With D = 16,
    for example, 9 items are needed (b = 4, c = 13 over 17 pairs, p = 0.049), while 8 items
    (b = 4, c = 12) give p = 0.077. When D is tiny, the floor is the smallest significant
    all-one-way table (6 items at alpha 0.05, two-sided: b = 0, c = 6 gives p = 0.031).

    Returns None when no difference up to `limit` items could be significant (a very small suite).
    """
    if discordant < 0:
        raise UsageError(f"discordant count must be >= 0, got {discordant}")
    limit = limit if limit is not None else max(discordant, 1) * 2 + 64
    side = "less" if alternative != "two-sided" else "two-sided"
    for k in range(1, limit + 1):
        n = max(discordant, k)
        if (n - k) % 2:
            n += 1
        worse = (n + k) // 2
        better = (n - k) // 2
        p = mcnemar_exact(worse, better, alternative=side)
        if p < alpha:
            return k
    return None


def holm_adjust(pvalues: Sequence[float], weights: Sequence[float] | None = None) -> list[float]:
    """Holm step-down adjusted p-values (weighted Holm when `weights` are given), in input order.

    Holm controls the family-wise error rate (the chance of calling *any* true null hypothesis
    false) at alpha for any dependence between the tests, which matters here: the total and the
    categories share items. At each step the hypothesis with the smallest p / weight is tested
    against alpha * weight / (the weights still in play); once rejected, its weight goes to the
    others. Equal weights give classic Holm (the k-th smallest p multiplied by m - k). The
    adjusted p is the smallest alpha at which a hypothesis would be rejected: a running maximum
    of p * (weights left) / weight, capped at 1.
    """
    m = len(pvalues)
    w = list(weights) if weights is not None else [1.0] * m
    if len(w) != m or any(x <= 0 for x in w):
        raise UsageError("holm_adjust needs one positive weight per p-value")
    order = sorted(range(m), key=lambda i: pvalues[i] / w[i])
    left = sum(w)
    adjusted = [1.0] * m
    running = 0.0
    for i in order:
        running = max(running, min(1.0, pvalues[i] * left / w[i]))
        adjusted[i] = running
        left -= w[i]
    return adjusted


def paired_rate_test(diffs: Sequence[Fraction], *, alternative: str = "two-sided") -> float:
    """Exact sign-flip test on per-item paired differences of pass rates (B minus A).

    With repeats, item k has a pass rate in each run (passes / repeats) and d_k = rate_B - rate_A.
    Under the null hypothesis (the two lanes are exchangeable) each d_k is as likely to be +|d_k|
    as -|d_k|, independently across items, so the sum S = sum d_k has an exact null distribution
    over the 2^n sign patterns, computed here by convolution (no sampling). `less` tests "B is
    worse" (P(S <= observed)), `greater` "B is better", `two-sided` doubles the smaller tail.
    With one repeat on each side every d_k is -1, 0 or +1 and this is exactly `mcnemar_exact`.
    """
    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        return 1.0
    if alternative not in ("two-sided", "less", "greater"):
        raise UsageError(f"alternative must be two-sided, less or greater, not {alternative!r}")
    scale = 1
    for d in nonzero:
        scale = scale * d.denominator // gcd(scale, d.denominator)
    ints = [int(d * scale) for d in nonzero]
    observed = sum(ints)
    # Items with the same |d| share a binomial: j of m flipped up gives |d| * (2j - m).
    dist: dict[int, int] = {0: 1}
    for size, m in Counter(abs(x) for x in ints).items():
        step = {size * (2 * j - m): comb(m, j) for j in range(m + 1)}
        new: dict[int, int] = {}
        for s, w in dist.items():
            for t, v in step.items():
                new[s + t] = new.get(s + t, 0) + w * v
        dist = new
    total = 2 ** len(ints)
    low = sum(w for s, w in dist.items() if s <= observed) / total
    high = sum(w for s, w in dist.items() if s >= observed) / total
    if alternative == "less":
        return low
    if alternative == "greater":
        return high
    return min(1.0, 2 * min(low, high))


def paired_rate_bootstrap_ci(
    diffs: Sequence[Fraction | int],
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    alpha: float = DEFAULT_ALPHA,
) -> tuple[float, float]:
    """Percentile bootstrap interval for sum(diffs) (B - A in items, pass rates with repeats).

    Resamples the items with replacement from `random.Random(seed)`, like `paired_bootstrap_ci`,
    but draws each of the n items (the differences are not all -1, 0 or +1).
    """
    n = len(diffs)
    if n == 0 or resamples < 1 or not any(diffs):
        return (0.0, 0.0)
    rng = random.Random(seed)
    values = [float(d) for d in diffs]
    sums = sorted(sum(rng.choices(values, k=n)) for _ in range(resamples))
    lo = sums[int((alpha / 2) * resamples)]
    hi = sums[min(resamples - 1, int((1 - alpha / 2) * resamples))]
    return (lo, hi)
