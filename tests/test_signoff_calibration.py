"""A small, seeded version of bench/signoff_calibration.py pins the sign-off policy's error rates:
identical lanes are blocked at most 1% of the time up to 5% discordance (5% under independent
sampling, 1% with 3 repeats), and each real drop is caught at least 95% of the time at 3%
discordance. 2,000 trials per case, the same seed every run."""

from __future__ import annotations

import pytest

import bench.signoff_calibration as CAL

pytestmark = pytest.mark.slow  # about a minute: 20,000 simulated sign-offs

PINNED = [c for c in CAL.cases() if c.drop == "none" and (c.noise or 0) <= 0.05] + [
    c for c in CAL.cases() if c.drop != "none" and c.noise == 0.03
]


@pytest.mark.parametrize("case", PINNED, ids=lambda c: f"{c.name}|{c.noise_label}|x{c.repeats}")
def test_calibration_targets(case):
    share = CAL.blocked_share(case, 2000, seed=0)
    op, bound = case.target
    if op == "<=":
        assert share <= bound, f"{case}: blocked {share:.2%} of identical lanes"
    else:
        assert share >= bound, f"{case}: caught {share:.2%} of drops"


def test_the_pinned_cases_cover_every_target():
    assert {c.drop for c in PINNED} == {
        "none",
        "long-context",
        "category",
        "total",
        "garble",
        "misloaded",
    }
    assert any(c.noise is None and c.repeats == 3 for c in PINNED)
    assert any(c.noise is None and c.repeats == 1 for c in PINNED)
