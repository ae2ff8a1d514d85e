"""`evalrun report RUN [RUN_B] [-o report.html]`: one run, or a pair, as one self-contained page.

With one run: header, categories, score history, every item (prompt, answer, reasoning, tool
calls, grader detail, garble reasons, latency, tokens) under filters. With two: RUN is the
baseline and RUN_B the candidate, as in `compare A B`; the page adds the paired statistics, the
sign-off verdict when `evalrun signoff` recorded one for this pair, and the flips side by side.
No server, no network: open the file in a browser, or keep it as a CI artifact.

`evalrun report watch:NAME` draws a watch (`evalrun watch --name NAME`) instead: its timeline,
one point per tick (running statistic, items off the anchor, score, garble, latency) with the
alarms marked, and its events; written to timeline.html in the watch's folder.
"""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report",
        help="write a run (or a pair of runs) as one self-contained HTML page",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "run", metavar="RUN", help="run id, tag, `latest`, `latest:<label>`, or watch:NAME"
    )
    p.add_argument("run_b", metavar="RUN_B", nargs="?", help="candidate to set against RUN")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to write (default: report.html in the run's folder; "
        "report-vs-<RUN>.html in RUN_B's folder for a pair)",
    )
    p.add_argument(
        "--results", default="results", metavar="DIR", help="run store (default: results)"
    )
    p.add_argument(
        "--floor",
        metavar="RUN",
        action="append",
        default=[],
        help="a pair: an A/A partner of RUN (another run of its lane on the same items); the "
        "tokens are graded against RUN's own noise floor (as compare --floor)",
    )


def run(args: argparse.Namespace) -> int:
    import sys

    from evalrun.base.errors import UsageError
    from evalrun.store import RunStore

    if args.floor and not args.run_b:
        raise UsageError("--floor grades a pair: name RUN_B too")
    if args.run.startswith("watch:"):
        from evalrun.watching.state import watch_dir
        from evalrun.watching.timeline import write_timeline

        if args.run_b:
            raise UsageError("a watch's report takes no RUN_B: `evalrun report watch:NAME`")
        path = str(write_timeline(watch_dir(args.results, args.run[6:]), args.output))
    else:
        from evalrun.viewing.html import write_report

        path = write_report(
            RunStore(args.results), args.run, args.run_b, args.output, floor=args.floor
        )
    print(f"wrote {path}", file=sys.stderr)
    print(path)
    return 0
