"""`evalrun score`: score an OpenAI-compatible endpoint (or a server booted from a contract).

Exit codes: 0 complete; 2 bad usage/config/suite; 3 endpoint unreachable, not OpenAI-compatible,
or it stopped answering; 4 finished with items in error; 130 interrupted (resumable).
With --fail-below / --fail-on-garble (for `git bisect run`): 0 good, 1 bad (below the bar, too
much garble, or items in error), 125 untestable (boot failure, endpoint unreachable).
"""

from __future__ import annotations

import argparse
import functools
import sys
from dataclasses import fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalrun.scoring.options import ScoreOptions
    from evalrun.scoring.report import ProgressBar

UNTESTABLE = 125


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "score",
        help="score an OpenAI-compatible endpoint on a suite",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from evalrun.commands.target_args import add_target_arguments

    add_target_arguments(p)
    run = p.add_argument_group("the run")
    run.add_argument("--suite", default=None, help="suite name or folder (default: core)")
    run.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="requests in flight (default 16; with --reference its server's slots: 4, or --set parallel=N)",
    )
    run.add_argument(
        "--name", dest="label", metavar="LABEL", help="run label (default: a slug of the model)"
    )
    run.add_argument(
        "--results", default="results", metavar="DIR", help="run store (default: results)"
    )
    run.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="score N items drawn from every category in proportion to its size (see --seed)",
    )
    run.add_argument(
        "--seed", type=int, default=0, metavar="S", help="seed of the --limit draw (default 0)"
    )
    run.add_argument("--items", metavar="ID,ID", help="score only these item ids")
    run.add_argument(
        "--category",
        dest="categories",
        action="append",
        metavar="C",
        help="score only this category (repeat, or C1,C2)",
    )
    run.add_argument("--tags", metavar="T1,T2", help="score only items with one of these tags")
    run.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="K",
        help="ask every item K times (default 1): the run records each item's pass rate, and "
        "compare/signoff pair items on their majority outcome; shows how noisy the lane is",
    )
    run.add_argument(
        "--resume", metavar="RUN_ID", help="finish a run: request only items without a final record"
    )
    run.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds one item may take in all: every try, the body however slowly it comes, "
        "and every wait between tries (a Retry-After past it fails the item at once); "
        "default 120, 600 with --reference (CPU). While the server answers other requests "
        "(this one queued behind them) its deadline moves with each answer, up to 5x S. A "
        "server that sends nothing while requests wait is told after min(60, S/2) s; after "
        "S s of such silence the run stops (exit 3; "
        "the items in flight are recorded as errors and --resume asks them again), so a run "
        "against a hung server ends about S s after the server's last byte",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    run.add_argument(
        "--junit",
        metavar="FILE",
        help="also write the run as JUnit XML (one testcase per item) for CI systems",
    )
    gate = p.add_argument_group(
        "exit code for scripts (git bisect run): 0 good, 1 bad (below the bar, too much garble, "
        "or items in error), 125 untestable (boot failure, endpoint unreachable)"
    )
    gate.add_argument(
        "--fail-below", type=float, metavar="N", help="bad if the score (0-100) is below N"
    )
    gate.add_argument(
        "--fail-on-garble",
        type=float,
        metavar="RATE",
        help="bad if the garble rate (0-1) is at or above RATE",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def options_from_args(args: argparse.Namespace) -> ScoreOptions:
    """The ScoreOptions the parsed flags describe (every flag but the exit-code and output ones
    is a field of the same name)."""
    from evalrun.scoring.options import ScoreOptions

    given = {f.name: getattr(args, f.name) for f in fields(ScoreOptions) if hasattr(args, f.name)}
    return ScoreOptions(
        **{
            **given,
            "sets": tuple(args.sets),
            "unsets": tuple(args.unsets),
            "headers": tuple(args.headers),
            "progress": not args.no_progress,
        }
    )


def run(args: argparse.Namespace) -> int:
    from evalrun.base.errors import BootError, EndpointError, EvalrunError, UsageError
    from evalrun.scoring.report import ProgressBar, score_json, score_text
    from evalrun.scoring.request import ScoreHooks
    from evalrun.scoring.run import score
    from evalrun.serving.launcher import stderr_progress
    from evalrun.store import RunStore, json_text

    gating = args.fail_below is not None or args.fail_on_garble is not None
    if args.fail_on_garble is not None and not 0 <= args.fail_on_garble <= 1:
        raise UsageError(
            f"--fail-on-garble takes a rate between 0 and 1, got {args.fail_on_garble}"
        )
    options = options_from_args(args)
    store = RunStore(options.results)
    try:
        bar = ProgressBar() if options.progress else None
        boot = stderr_progress if options.progress else None
        hooks = ScoreHooks(progress=bar, notice=functools.partial(_notice, bar), boot=boot)
        record, _ = score(options, hooks)
    except EvalrunError as exc:
        if options.junit and exc.run_id:  # the run stopped early: its record is stored
            print(f"wrote {options.junit}", file=sys.stderr)
        if args.json and exc.run_id:
            print(json_text(score_json(store.load_run(exc.run_id), store)))
        if not gating or not isinstance(exc, (EndpointError, BootError)):
            raise
        print(f"evalrun score: untestable: {exc}", file=sys.stderr)
        return UNTESTABLE
    if options.junit:
        print(f"wrote {options.junit}", file=sys.stderr)
    if args.json:
        print(json_text(score_json(record, store)))
    else:
        print(score_text(record))
    s = record.summary
    assert s is not None
    if gating:
        bad = (
            (args.fail_below is not None and s.score < args.fail_below)
            or (args.fail_on_garble is not None and s.garble_rate >= args.fail_on_garble)
            or s.errors > 0
        )  # items the endpoint refused even after retries: a broken contract
        return 1 if bad else 0
    return 4 if s.errors else 0


def _notice(bar: ProgressBar | None, text: str) -> None:
    """A line on stderr while the run waits on the server (through the bar when one is drawn)."""
    if bar is not None:
        bar.note(f"evalrun score: {text}")
    else:
        print(f"evalrun score: {text}", file=sys.stderr, flush=True)
