"""`evalrun signoff`: the release gate. Exit 0 pass, 1 fail, 2 unusable input."""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "signoff",
        help="release gate: judge a candidate run against a baseline under a policy",
        description="Exit 0 when the candidate passes, 1 when it fails, 2 when the input is "
        "unusable. Writes results/<candidate>/signoff.md.",
    )
    p.add_argument("--candidate", metavar="RUN", help="run id, latest, latest:<label> or tag")
    p.add_argument("--baseline", metavar="RUN", help="run id, latest:<label> or an anchor tag")
    p.add_argument("--policy", metavar="FILE", help="YAML policy (default: see --print-policy)")
    p.add_argument(
        "--print-policy",
        action="store_true",
        help="print the default policy, with comments, and exit",
    )
    p.add_argument(
        "--slope-baseline",
        metavar="SLOPE_RUN",
        help="baseline slope run for the policy's slope rule (id, latest:<label>)",
    )
    p.add_argument(
        "--slope-candidate",
        metavar="SLOPE_RUN",
        help="candidate slope run for the policy's slope rule",
    )
    p.add_argument(
        "--floor",
        metavar="RUN",
        action="append",
        default=[],
        help="an A/A partner of the baseline (another run of its lane on the same items): the "
        "candidate's tokens are graded against the baseline's own noise floor (repeatable)",
    )
    p.add_argument(
        "--candidate-floor",
        metavar="RUN",
        action="append",
        default=[],
        help="an A/A partner of the candidate (with --floor): the noise is widened to its own spread "
        "where wider, so a change whose own repeat wobbles as much is not divergent (repeatable)",
    )
    p.add_argument("--results", default="results", metavar="DIR", help="results dir (results)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    p.add_argument("--json", action="store_true", help="print the verdict object as JSON")


def run(args: argparse.Namespace) -> int:
    from evalrun.base.errors import UsageError
    from evalrun.base.text_safety import terminal_text
    from evalrun.signoff.gate import signoff, to_dict
    from evalrun.signoff.policy import DEFAULT_POLICY_YAML, load_policy
    from evalrun.store import RunStore, json_text

    if args.print_policy:
        print(DEFAULT_POLICY_YAML, end="")
        return 0
    if not args.candidate or not args.baseline:
        raise UsageError(
            "signoff needs --candidate RUN and --baseline RUN (ids, latest:<label> "
            "or tags; see `evalrun runs`)"
        )
    policy = load_policy(args.policy)
    extra = []
    if args.slope_baseline or args.slope_candidate or policy.slope:
        from evalrun.signoff.policy import SlopeRule
        from evalrun.signoff.slope_checks import slope_checks
        from evalrun.slope.record import load_slope

        if not (args.slope_baseline and args.slope_candidate):
            raise UsageError(
                "the slope rule needs --slope-baseline and --slope-candidate "
                "(slope run ids; see results/slope-*)"
            )
        extra = slope_checks(
            load_slope(args.slope_baseline, args.results),
            load_slope(args.slope_candidate, args.results),
            policy.slope or SlopeRule(),
        )
    result = signoff(
        RunStore(args.results),
        args.candidate,
        args.baseline,
        policy,
        policy_source=args.policy or "default",
        seed=args.seed,
        extra_checks=extra,
        floor=args.floor,
        candidate_floor=args.candidate_floor,
    )
    if args.json:
        print(json_text(to_dict(result)))
    else:
        print(f"signoff: {result.verdict.upper()}  {result.candidate} vs {result.baseline}")
        print(terminal_text(result.headline))
        for reason in result.reasons:
            print(f"  FAIL {terminal_text(reason)}")
        for warning in result.warnings:
            print(f"  warn {terminal_text(warning)}")
        print(f"report: {result.report}", file=sys.stderr)
    return 0 if result.verdict == "pass" else 1
