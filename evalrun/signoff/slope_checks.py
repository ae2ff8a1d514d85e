"""The sign-off policy's slope rule, checked on a baseline/candidate pair of slope runs."""

from __future__ import annotations

from evalrun.signoff.policy import Check, SlopeRule
from evalrun.slope.record import SlopeRecord, depth_label, ratios_to_d0


def slope_checks(baseline: SlopeRecord, candidate: SlopeRecord, rule: SlopeRule) -> list[Check]:
    """Sign-off checks of a candidate slope run against a baseline."""
    checks: list[Check] = []
    if (baseline.settings.pp, baseline.settings.tg) != (
        candidate.settings.pp,
        candidate.settings.tg,
    ):
        checks.append(
            Check(
                rule="slope",
                outcome="warn",
                reason=f"slope runs differ in pp/tg (baseline pp{baseline.settings.pp} "
                f"tg{baseline.settings.tg}, candidate pp{candidate.settings.pp} "
                f"tg{candidate.settings.tg}): decode figures are not like for like",
            )
        )
    if candidate.status != "complete":
        checks.append(
            Check(
                rule="slope",
                outcome="warn",
                reason=f"candidate slope run {candidate.run_id} is {candidate.status}",
            )
        )
    levels = rule.concurrency or baseline.settings.concurrency
    depths = rule.depths or baseline.settings.depths
    passed = []
    for c in levels:
        own = ratios_to_d0(candidate, c)
        for d in depths:
            subject = f"{depth_label(d)} c{c}"
            base, cand = baseline.point(d, c), candidate.point(d, c)
            if base is None or not base.decode_tps:
                if rule.depths or rule.concurrency:
                    checks.append(
                        Check(
                            rule="slope_decode_drop",
                            subject=subject,
                            outcome="warn",
                            reason=f"baseline slope has no decode figure at {subject}",
                        )
                    )
                continue
            if cand is None or not cand.decode_tps:
                why = (cand.skip_reason or cand.error) if cand else "not measured"
                checks.append(
                    Check(
                        rule="slope_decode_drop",
                        subject=subject,
                        outcome="fail",
                        reason=f"candidate has no decode figure at {subject} ({why}) where the "
                        f"baseline made {base.decode_tps:.1f} t/s",
                    )
                )
                continue
            drop = 1 - cand.decode_tps / base.decode_tps
            moved = (
                f"decode at {subject} {'fell' if drop > 0 else 'rose'} {abs(drop):.0%} "
                f"({base.decode_tps:.1f} -> {cand.decode_tps:.1f} t/s)"
            )
            if drop > rule.max_decode_drop:
                checks.append(
                    Check(
                        rule="slope_decode_drop",
                        subject=subject,
                        outcome="fail",
                        reason=f"{moved}, more than the {rule.max_decode_drop:.0%} limit",
                    )
                )
            else:
                passed.append((drop, subject))
            ratio = own.get(d)
            if (
                rule.min_ratio_to_d0 is not None
                and ratio is not None
                and ratio < rule.min_ratio_to_d0
            ):
                checks.append(
                    Check(
                        rule="slope_ratio_to_d0",
                        subject=subject,
                        outcome="fail",
                        reason=f"candidate decode at {subject} is {ratio:.2f} of its "
                        f"d0, below the {rule.min_ratio_to_d0:g} floor (a cliff)",
                    )
                )
    if passed:
        worst_drop, worst = max(passed)
        checks.append(
            Check(
                rule="slope_decode_drop",
                outcome="pass",
                reason=f"decode within {rule.max_decode_drop:.0%} of the baseline at "
                f"{len(passed)} points (largest drop {max(worst_drop, 0):.0%} at "
                f"{worst})",
            )
        )
    return checks
