"""The release gate: does a candidate run hold up against a baseline run, under a written policy?

`signoff(store, candidate, baseline, policy)` compares the two runs (see evalrun.compare.pairing), checks
every policy rule, writes `results/<candidate>/signoff.md` and returns a `Signoff` whose verdict is
pass or fail. Unusable input (unknown run, different suites, bad policy) raises an EvalrunError
with exit code 2 before any verdict is given.

How significance combines with the drop thresholds
--------------------------------------------------
A score drop blocks only when it is both *large* and *real*:

- large: the drop on the paired items (those graded in both runs) exceeds the policy's tolerance,
  in score points, for the whole suite (`max_total_drop`) or for one category
  (`max_category_drop`);
- real: a one-sided exact McNemar test on those same paired items says the candidate is worse, at
  `alpha`. One-sided, because the gate asks "is the candidate worse?", not "are they different?".

So noise never blocks (two flipped items out of 184 are far from significant) and an accepted,
known cost (say one point for an fp8 KV cache) does not block even when it is real. A large drop
that is not significant is reported as a warning, with the smallest difference the data could
have shown, because a tiny category cannot prove anything either way; set `alpha: 1` to let the
thresholds alone decide. Categories are tested one by one without a multiple-testing correction:
the threshold already keeps a lone noisy category from blocking, and a collapse (a category
falling by half) is significant at alpha 0.05 once it has a dozen items (6 of 12 lost: p = 1/64).

Errors, garble, fatal diagnoses and incompleteness are defects, not sampling noise: they are
checked on the candidate alone, against absolute limits, with no test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from evalrun.compare.pairing import Comparison, compare_runs, fmt_p, to_json
from evalrun.compare.stats import DEFAULT_SEED
from evalrun.errors import ConfigError
from evalrun.signoff.policy import Check, Policy
from evalrun.store import RunStore

SIGNOFF_SCHEMA_VERSION = 1
REPORT_NAME = "signoff.md"


class Signoff(BaseModel):
    """The verdict object `evalrun signoff --json` prints."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SIGNOFF_SCHEMA_VERSION
    verdict: Literal["pass", "fail"]
    candidate: str
    baseline: str
    policy: Policy
    policy_source: str = Field(description="Path of the policy file, or 'default'.")
    reasons: list[str] = Field(description="Why it failed (empty on pass).")
    warnings: list[str] = Field(description="Worth a look, not blocking.")
    checks: list[Check]
    headline: str = Field(description="The comparison's verdict line.")
    report: str | None = Field(default=None, description="Path of signoff.md.")
    comparison: Comparison


def signoff(
    store: RunStore,
    candidate: str,
    baseline: str,
    policy: Policy | None = None,
    *,
    policy_source: str = "default",
    seed: int = DEFAULT_SEED,
    write_report: bool = True,
    extra_checks: Sequence[Check] = (),
) -> Signoff:
    """Judge `candidate` against `baseline` (run refs); write results/<candidate>/signoff.md.

    `extra_checks` are checks computed elsewhere from other evidence (e.g. a decode-slope rule
    over slope records); they count like the built-in rules.
    """
    policy = policy or Policy()
    cmp = compare_runs(store, baseline, candidate, alpha=policy.alpha, seed=seed)
    checks: list[Check] = []
    for rule in RULES:
        checks += rule(cmp, policy)
    checks += extra_checks
    if cmp.a.run_id == cmp.b.run_id:
        checks.append(
            Check(rule="baseline", outcome="warn", reason="candidate and baseline are the same run")
        )
    if cmp.a.errors or cmp.a.missing:
        checks.append(
            Check(
                rule="baseline",
                outcome="warn",
                reason=f"baseline has {cmp.a.errors} errored and {cmp.a.missing} unrun items; "
                "those items are left out of the paired comparison",
            )
        )
    result = Signoff(
        verdict="fail" if any(c.outcome == "fail" for c in checks) else "pass",
        candidate=cmp.b.run_id,
        baseline=cmp.a.run_id,
        policy=policy,
        policy_source=policy_source,
        reasons=[c.reason for c in checks if c.outcome == "fail"],
        warnings=[c.reason for c in checks if c.outcome == "warn"],
        checks=checks,
        headline=cmp.verdict.replace("B − A", "candidate − baseline", 1),
        comparison=cmp,
    )
    if write_report:
        path = store.run_dir(result.candidate) / REPORT_NAME
        result.report = str(path)
        try:
            path.write_text(render_report(result), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"cannot write {path} ({exc.strerror}); check the results dir"
            ) from exc
    return result


def _drop_check(
    rule: str,
    subject: str,
    lost: int,
    gained: int,
    paired: int,
    p_worse: float,
    limit: float,
    alpha: float,
    what: str,
) -> Check:
    """A drop beyond `limit` points fails when significant, else warns; within it, passes."""
    drop = 100 * (lost - gained) / paired if paired else 0.0
    flips = f"{lost} pass→fail, {gained} fail→pass on {paired} paired items"
    if drop <= limit:
        moved = f"gained {-drop:.1f} points" if drop < 0 else f"dropped {drop:.1f} points"
        return Check(
            rule=rule,
            subject=subject,
            outcome="pass",
            reason=f"{what} {moved} ({flips}), within the {limit:g}-point limit",
        )
    if p_worse < alpha:
        return Check(
            rule=rule,
            subject=subject,
            outcome="fail",
            reason=f"{what} fell {drop:.1f} points ({flips}), more than the {limit:g}-point "
            f"limit, and the drop is real (one-sided McNemar p = {fmt_p(p_worse)} < {alpha:g})",
        )
    return Check(
        rule=rule,
        subject=subject,
        outcome="warn",
        reason=f"{what} fell {drop:.1f} points ({flips}), more than the {limit:g}-point "
        f"limit, but p = {fmt_p(p_worse)} ≥ {alpha:g}: could be noise, not blocking",
    )


def _total_drop(cmp: Comparison, policy: Policy) -> list[Check]:
    s = cmp.stats
    return [
        _drop_check(
            "total_drop",
            "",
            s.lost,
            s.gained,
            s.paired,
            s.p_worse,
            policy.max_total_drop,
            policy.alpha,
            "total score",
        )
    ]


def _category_drops(cmp: Comparison, policy: Policy) -> list[Check]:
    out = []
    for row in cmp.categories:
        check = _drop_check(
            "category_drop",
            row.category,
            row.lost,
            row.gained,
            row.paired,
            row.p_worse,
            policy.max_category_drop,
            policy.alpha,
            f"category {row.category}",
        )
        if check.outcome != "pass":
            out.append(check)
    if not out:
        out.append(
            Check(
                rule="category_drop",
                outcome="pass",
                reason=f"no category lost more than {policy.max_category_drop:g} points "
                "significantly",
            )
        )
    return out


def _garble(cmp: Comparison, policy: Policy) -> list[Check]:
    b = cmp.b
    answered = b.total - b.errors - b.missing
    rate = f"{b.garbled} of {answered} answered items garbled ({100 * b.garble_rate:.1f}%)"
    bad = b.garble_rate > policy.max_garble_rate
    return [
        Check(
            rule="garble_rate",
            outcome="fail" if bad else "pass",
            reason=f"{rate}, {'above' if bad else 'within'} the "
            f"{100 * policy.max_garble_rate:g}% limit",
        )
    ]


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


# Each rule maps (comparison, policy) to checks; a new rule on the item records is one more function
# here plus its policy field. Rules over other evidence (slope records) come in as `extra_checks`.
RULES: list[Callable[[Comparison, Policy], list[Check]]] = [
    _total_drop,
    _category_drops,
    _garble,
    _errors,
    _incomplete,
    _fatal_diagnoses,
]


def render_report(result: Signoff) -> str:
    """signoff.md: verdict, every reason, the tables and the flips."""
    from evalrun.compare.report import render_markdown

    cmp = result.comparison
    out = [
        f"# Sign-off: {result.verdict.upper()}",
        "",
        f"- candidate: `{result.candidate}`",
        f"- baseline: `{result.baseline}`",
        f"- policy: {result.policy_source}",
        f"- {result.headline}",
        "",
        "## Reasons",
        "",
    ]
    out += [f"- {r}" for r in result.reasons] or ["- none: every rule passed"]
    if result.warnings:
        out += ["", "## Warnings", ""] + [f"- {w}" for w in result.warnings]
    out += ["", "## Checks", ""]
    out += [
        f"- **{c.outcome}** {c.rule}{' ' + c.subject if c.subject else ''}: {c.reason}"
        for c in result.checks
    ]
    out += [
        "",
        "## Policy",
        "",
        "```yaml",
        yaml.safe_dump(result.policy.model_dump(), sort_keys=False).rstrip(),
        "```",
        "",
    ]
    out += [render_markdown(cmp, names=("baseline", "candidate")), ""]
    return "\n".join(out)


def to_dict(result: Signoff) -> dict[str, Any]:
    """JSON data of the verdict, with the comparison's flip directions spelled out."""
    data = result.model_dump(mode="json")
    data["comparison"] = to_json(result.comparison)
    return data
