"""The release gate: does a candidate run hold up against a baseline run, under a written policy?

`signoff(store, candidate, baseline, policy)` compares the two runs (see evalrun.compare.pairing), checks
every policy rule, writes `results/<candidate>/signoff.md` and returns a `Signoff` whose verdict is
pass or fail. Unusable input (unknown run, different suites, bad policy) raises an EvalrunError
with exit code 2 before any verdict is given.

Every rule lives in evalrun.signoff.rules (`RULES`): the score and garble rules, and how
significance combines with their limits (one family, Holm-adjusted; collapses block without a
test), and errors, fatal diagnoses and incompleteness, which are defects, not sampling noise:
checked on the candidate alone, against absolute limits, with no test.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from evalrun.base.errors import ConfigError
from evalrun.base.jsondata import JSONObject
from evalrun.compare.pairing import Comparison, compare_runs, request_options_warning, to_json
from evalrun.compare.stats import DEFAULT_SEED
from evalrun.signoff.policy import Check, Policy
from evalrun.signoff.rules import RULES
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
    floor: Sequence[str] = (),
    candidate_floor: Sequence[str] = (),
) -> Signoff:
    """Judge `candidate` against `baseline` (run refs); write results/<candidate>/signoff.md.

    `extra_checks` are checks computed elsewhere from other evidence (e.g. a decode-slope rule
    over slope records); they count like the built-in rules. `floor`: the baseline's A/A
    partners (compare_runs): the candidate's tokens graded against the baseline's own noise,
    widened by the candidate's own (`candidate_floor`, its A/A partners) where wider.
    """
    policy = policy or Policy()
    cmp = compare_runs(
        store,
        baseline,
        candidate,
        alpha=policy.alpha,
        seed=seed,
        floor=floor,
        candidate_floor=candidate_floor,
    )
    checks: list[Check] = []
    for rule in RULES:
        checks += rule(cmp, policy)
    checks += extra_checks
    if cmp.a.run_id == cmp.b.run_id:
        checks.append(
            Check(rule="baseline", outcome="warn", reason="candidate and baseline are the same run")
        )
    options = request_options_warning(store.load_run(cmp.a.run_id), store.load_run(cmp.b.run_id))
    if options:
        checks.append(Check(rule="request_options", outcome="warn", reason=options))
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


def render_report(result: Signoff) -> str:
    """signoff.md: verdict, every reason, the tables and the flips."""
    import html

    from evalrun.base.text_safety import one_line

    def md(text: str) -> str:
        """Suite category names, policy paths and hints are not markup: one safe line, escaped
        (quotes kept: `evalrun report` reads these lines back)."""
        return html.escape(one_line(text), quote=False)

    from evalrun.compare.report import render_markdown

    cmp = result.comparison
    out = [
        f"# Sign-off: {result.verdict.upper()}",
        "",
        f"- candidate: `{result.candidate}`",  # run ids are slugs: [A-Za-z0-9._-]
        f"- baseline: `{result.baseline}`",
        f"- policy: {md(result.policy_source)}",
        f"- {md(result.headline)}",
        "",
        "## Reasons",
        "",
    ]
    out += [f"- {md(r)}" for r in result.reasons] or ["- none: every rule passed"]
    if result.warnings:
        out += ["", "## Warnings", ""] + [f"- {md(w)}" for w in result.warnings]
    out += ["", "## Tested rules (one family, Holm-adjusted)", ""]
    out += [family_table(result), ""]
    out += [
        f"One-sided exact paired p-values, adjusted over the family (total, every category, "
        f"garble; weighted Holm) so that the chance of any false block is at most "
        f"alpha = {result.policy.alpha:g}.",
    ]
    out += ["", "## Checks", ""]
    out += [
        f"- **{c.outcome}** {md(c.rule)}{' ' + md(c.subject) if c.subject else ''}: {md(c.reason)}"
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


def family_table(result: Signoff) -> str:
    """The family as a markdown table: each tested subject's change, one-sided p, adjusted p and
    the outcome of its rule."""
    from evalrun.base.tables import fmt_points, table
    from evalrun.compare.pairing import fmt_p
    from evalrun.compare.report import md_cell

    cmp = result.comparison
    outcome = {(c.rule, c.subject): c.outcome for c in result.checks}
    s, g = cmp.stats, cmp.garble
    rows = [
        [
            "total",
            f"{fmt_points(cmp.delta_points, signed=True)} points",
            fmt_p(s.p_worse),
            fmt_p(s.p_worse_adjusted),
            outcome.get(("total_drop", ""), "pass"),
        ]
    ]
    rows += [
        [
            md_cell(f"category {r.category}"),
            f"{fmt_points(r.delta_points, signed=True)} points",
            fmt_p(r.p_worse),
            fmt_p(r.p_worse_adjusted),
            outcome.get(("category_drop", r.category), "pass"),
        ]
        for r in cmp.categories
    ]
    rows.append(
        [
            "garble",
            f"{fmt_points(100 * g.increase, signed=True)} points of rate ({g.new} new, "
            f"{g.new_loops} of them loops; {g.cleared} cleared)",
            fmt_p(g.p_worse),
            fmt_p(g.p_worse_adjusted),
            outcome.get(("garble_increase", ""), "pass"),
        ]
    )
    return table(
        rows,
        ["tested", "candidate − baseline", "p (one-sided)", "p adjusted", "outcome"],
        fmt="github",
        numparse=False,
    )


def to_dict(result: Signoff) -> JSONObject:
    """JSON data of the verdict, with the comparison's flip directions spelled out."""
    data = result.model_dump(mode="json")
    data["comparison"] = to_json(result.comparison)
    return data
