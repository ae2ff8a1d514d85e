"""The tested rules of a sign-off policy: score drops and garble, judged as one family.

How significance combines with the limits
-----------------------------------------
A score drop blocks only when it is both *large* and *real*:

- large: the drop on the paired items (graded in both runs) exceeds the policy's limit in score
  points, for the whole suite (`max_total_drop`) or one category (`max_category_drop`);
- real: the one-sided exact paired test (McNemar; on pass rates with repeats) says the candidate
  is worse, with its p-value Holm-adjusted over the whole family: the total, every category and
  the garble test (evalrun.compare.family). Holm bounds the chance that *any* rule blocks two
  lanes of the same quality at `alpha`, whatever the noise and however the tests overlap;
  testing eleven categories at alpha each blocked identical noisy lanes about 7% of the time.

Some collapses are too small for any test after the correction: the 8 long-context items all
failing give p = 1/256 before it. A category that loses at least `collapse_points` points and
`collapse_items` items therefore blocks without a test. A large drop that is not significant is
a warning. Set `alpha: 1` to let the limits alone decide.

Garble is judged against the baseline on the items answered in both runs: the candidate blocks
when its garble rate exceeds the baseline's by more than `max_garble_increase` and the increase
is significant in the same family, or when its own rate is above the absolute ceiling
`max_garble_rate` (a plainly broken lane, whatever the baseline did). A small model's own
repetition loops show up on both sides, so they do not block its lane; loops are counted apart
from token soup in every reason (`LaneGarble`, which bisect counts a trial's garble with too).

Errors, fatal diagnoses and incompleteness are defects, not sampling noise: they are checked on
the candidate alone, against absolute limits, with no test. `RULES` lists every rule the gate
runs.

The rules are pure: the gate calls them on a comparison, and bench/signoff_calibration.py calls
`family_checks` on simulated lanes, so the calibration measures the rules that run.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Literal, TypedDict

from evalrun.base.tables import fmt_points
from evalrun.compare.family import PairedTest
from evalrun.compare.pairing import (
    CategoryRow,
    Comparison,
    GarbleStats,
    PairedStats,
    fmt_p,
)
from evalrun.signoff.policy import Check, Policy
from evalrun.verdicts import LaneGarble


def family_checks(
    total: PairedTest,
    categories: list[PairedTest],
    garble: PairedTest,
    candidate: LaneGarble,
    policy: Policy,
) -> list[Check]:
    """Checks of the total, each category (only those that did not pass, else one summary pass)
    and garble; every p-value already Holm-adjusted over the family of these tests."""
    checks = [drop_check("total_drop", total, policy.max_total_drop, policy, "total score")]
    cats = [
        drop_check(
            "category_drop",
            t,
            policy.max_category_drop,
            policy,
            f"category {t.subject}",
            collapse=True,
        )
        for t in categories
    ]
    cats = [c for c in cats if c.outcome != "pass"] or [
        Check(
            rule="category_drop",
            outcome="pass",
            reason=f"no category lost more than {policy.max_category_drop:g} points significantly",
        )
    ]
    return checks + cats + garble_checks(garble, candidate, policy)


def drop_check(
    rule: str,
    t: PairedTest,
    limit: float,
    policy: Policy,
    what: str,
    *,
    collapse: bool = False,
) -> Check:
    """A drop beyond `limit` points fails when significant after the family's adjustment (or,
    for a category, when it collapses), else warns; within the limit, passes."""
    drop = t.drop_points
    flips = f"{t.lost} pass→fail, {t.gained} fail→pass on {t.paired} paired items"
    tested = _tested_p(t)
    subject = t.subject
    if drop <= limit:
        moved = (
            f"gained {fmt_points(-drop)} points"
            if drop < 0
            else f"dropped {fmt_points(drop)} points"
        )
        return Check(
            rule=rule,
            subject=subject,
            outcome="pass",
            reason=f"{what} {moved} ({flips}), within the {limit:g}-point limit",
            **tested,
        )
    fell = f"{what} fell {fmt_points(drop)} points ({flips}), more than the {limit:g}-point limit"
    p = f"one-sided p = {fmt_p(t.p_worse)}, Holm-adjusted {fmt_p(t.p_worse_adjusted)}"
    if _real(t, policy):
        return Check(
            rule=rule,
            subject=subject,
            outcome="fail",
            reason=f"{fell}, and the drop is real ({p} < {policy.alpha:g})",
            **tested,
        )
    if collapse and drop >= policy.collapse_points and -t.net >= policy.collapse_items:
        return Check(
            rule=rule,
            subject=subject,
            outcome="fail",
            reason=f"{fell}: the category collapsed (at least {policy.collapse_points:g} points "
            f"and {policy.collapse_items} items lost; blocks without a test, {p})",
            **tested,
        )
    return Check(
        rule=rule,
        subject=subject,
        outcome="warn",
        reason=f"{fell}, but {p} ≥ {policy.alpha:g}: could be noise, not blocking",
        **tested,
    )


class _PValues(TypedDict):
    """The p-values a tested check carries (Check's fields of the same names)."""

    p_value: float
    p_adjusted: float


def _tested_p(t: PairedTest) -> _PValues:
    return {"p_value": t.p_worse, "p_adjusted": t.p_worse_adjusted}


def _real(t: PairedTest, policy: Policy) -> bool:
    """Significant after the family's adjustment; `alpha: 1` lets the limits alone decide."""
    return policy.alpha >= 1 or t.p_worse_adjusted < policy.alpha


def garble_checks(t: PairedTest, candidate: LaneGarble, policy: Policy) -> list[Check]:
    """Garble against the baseline (paired) and against the absolute ceiling.

    `t` is the family's garble test: d = garbled_baseline - garbled_candidate per item answered
    in both runs, so t.lost items are newly garbled in the candidate and t.gained are cleared.
    """
    n = t.paired
    increase = 100 * -float(t.net) / n if n else 0.0
    own = candidate.describe()
    vs = (
        f"{t.lost} newly garbled and {t.gained} cleared against the baseline on {n} items "
        f"answered in both ({'+' if increase > 0 else ''}{fmt_points(increase)} points of rate)"
    )
    p = f"one-sided p = {fmt_p(t.p_worse)}, Holm-adjusted {fmt_p(t.p_worse_adjusted)}"
    tested = _tested_p(t)
    limit = 100 * policy.max_garble_increase
    if increase <= limit:
        rel = Check(
            rule="garble_increase",
            outcome="pass",
            reason=f"{vs}, within the {limit:g}-point limit",
            **tested,
        )
    elif _real(t, policy):
        rel = Check(
            rule="garble_increase",
            outcome="fail",
            reason=f"{vs}, more than the {limit:g}-point limit, and the increase is real "
            f"({p} < {policy.alpha:g})",
            **tested,
        )
    else:
        rel = Check(
            rule="garble_increase",
            outcome="warn",
            reason=f"{vs}, more than the {limit:g}-point limit, but {p} ≥ {policy.alpha:g}: "
            "could be noise, not blocking",
            **tested,
        )
    bad = candidate.flagged_rate > policy.max_garble_rate
    ceiling = Check(
        rule="garble_rate",
        outcome="fail" if bad else "pass",
        reason=f"{own}, {'above' if bad else 'within'} the absolute "
        f"{fmt_points(100 * policy.max_garble_rate)}% ceiling",
    )
    return [rel, ceiling]


def comparison_family(cmp: Comparison, policy: Policy) -> list[Check]:
    """Total, categories and garble of a comparison, judged as one family (`family_checks`)."""
    s, g = cmp.stats, cmp.garble
    total = _tested("", s, s.lost, s.gained, s.net)
    cats = [_tested(r.category, r, r.lost, r.gained, r.delta) for r in cmp.categories]
    garble = _tested("garble", g, g.new, g.cleared, g.cleared - g.new)
    return family_checks(total, cats, garble, cmp.b.lane_garble, policy)


def _tested(
    subject: str,
    row: PairedStats | CategoryRow | GarbleStats,
    lost: int,
    gained: int,
    net: float,
) -> PairedTest:
    """A comparison row's test, as the rules read it (its p-values already family-adjusted)."""
    return PairedTest(
        subject=subject,
        paired=row.paired,
        lost=lost,
        gained=gained,
        net=Fraction(net),
        p_value=row.p_value,
        p_worse=row.p_worse,
        p_adjusted=row.p_adjusted,
        p_worse_adjusted=row.p_worse_adjusted,
    )


def _errors(cmp: Comparison, policy: Policy) -> list[Check]:
    n = cmp.b.errors
    bad = n > policy.max_errors
    return [
        Check(
            rule="errors",
            outcome="fail" if bad else "pass",
            reason=f"{n} items errored, {'more than' if bad else 'within'} the limit of "
            f"{policy.max_errors}",
        )
    ]


def _incomplete(cmp: Comparison, policy: Policy) -> list[Check]:
    b = cmp.b
    gaps = []
    if b.status != "complete":
        gaps.append(f"status {b.status}")
    if b.errors:
        gaps.append(f"{b.errors} items errored")
    if b.missing:
        gaps.append(f"{b.missing} items not run")
    if b.partial:
        # the pair covers the whole suite only when the baseline ran all of it
        gaps.append(
            f"ran {b.total} of the suite's {cmp.stats.universe} items"
            if not cmp.a.partial
            else f"ran a selection of {b.total} items, not the whole suite"
        )
    if not gaps:
        return [Check(rule="incomplete", outcome="pass", reason="candidate run is complete")]
    what = "candidate run is incomplete (" + ", ".join(gaps) + ")"
    if policy.allow_incomplete:
        return [Check(rule="incomplete", outcome="warn", reason=f"{what}; allowed by the policy")]
    return [
        Check(
            rule="incomplete",
            outcome="fail",
            reason=f"{what}; resume it (`evalrun score --resume {b.run_id}`) or set "
            "allow_incomplete: true",
        )
    ]


def _fatal_diagnoses(cmp: Comparison, policy: Policy) -> list[Check]:
    hints = {d.kind: d.hint for d in cmp.diagnoses}
    out = [
        Check(
            rule="fatal_diagnosis",
            subject=kind,
            outcome="fail",
            reason=f"diagnosis {kind} on {n} items"
            + (f": {hints[kind]}" if hints.get(kind) else ""),
        )
        for kind, n in cmp.b.diagnoses.items()
        if kind in policy.fatal_diagnoses and n
    ]
    return out or [Check(rule="fatal_diagnosis", outcome="pass", reason="no fatal diagnoses")]


def _fidelity(cmp: Comparison, policy: Policy) -> list[Check]:
    """The candidate's tokens against the baseline's: shown always, blocking a divergent (or
    not comparable) candidate only under `fidelity: fail`."""
    f = cmp.fidelity
    if f is None:
        return []
    if f.floor is not None:  # graded against the baseline's own measured floor
        graded: Literal["pass", "fail", "warn"] = "pass"
        if f.verdict in policy.fidelity_blocks:
            graded = "fail"
        elif f.verdict in ("numerically different", "divergent"):
            graded = "warn"
        return [Check(rule="fidelity", subject=f.verdict, outcome=graded, reason=f.line())]
    # A policy that asks for the tokens to be judged cannot pass a pair it could not judge.
    strict: Literal["fail", "warn"] = "fail" if policy.fidelity == "fail" else "warn"
    outcome: Literal["pass", "fail", "warn"] = (
        strict if f.verdict in ("divergent", "not comparable") else "pass"
    )
    return [Check(rule="fidelity", subject=f.verdict, outcome=outcome, reason=f.line())]


# Every rule of a sign-off: each maps (comparison, policy) to checks; a new rule on the item records
# is one more function here plus its policy field. Rules over other evidence (slope records) come in as `extra_checks`.
RULES: list[Callable[[Comparison, Policy], list[Check]]] = [
    comparison_family,
    _errors,
    _incomplete,
    _fatal_diagnoses,
    _fidelity,
]
